/**
 * A process whose PostgreSQL connection was lost, with work waiting for a
 * connection, ends as soon as it closes its store: the pool that replaced
 * the lost one's is not left in turn, where a connection still connecting
 * would stay open until its idle timeout (30 s) and hold the process.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PG_SKIP, PG_URL } from "../store/_pg.ts";
import { startWorker, workerRuntimes } from "./_runtimes.ts";

test("after a lost connection, a process that closes its store ends at once", {
  skip: PG_SKIP,
}, async () => {
  await Promise.all(
    workerRuntimes(["deno", "bun", "node"]).map(async (runtime) => {
      const worker = startWorker(runtime, "_pg_lost_then_close.ts", [PG_URL!]);
      await worker.waitFor((line) => line === "closed", "its close", 20_000);
      const closedAt = Date.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        worker.exited.then(() => true),
        new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), 10_000)),
      ]);
      clearTimeout(timer);
      if (!ended) worker.kill("SIGKILL");
      assert.ok(ended, `${runtime}: still running 10 s after it closed its store`);
      assert.ok(Date.now() - closedAt < 10_000);
      assert.equal((await worker.exited).code, 0, `${runtime}: ${worker.stderr}`);
    }),
  );
});
