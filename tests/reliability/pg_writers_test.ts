/**
 * Many writer processes on one PostgreSQL store, on Deno, Bun and Node at
 * once: every acknowledged append is there exactly once, ids are unique,
 * and each session's counters equal its rows — also when writers are
 * killed with SIGKILL in the middle of their work.
 */
import { after, before, describe, test } from "node:test";
import { execFile, execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { acks, verify } from "./_pg_checks.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "../store/_pg.ts";
import {
  delay,
  REPO,
  runSeed,
  startWorker,
  workerRuntimes,
  workersSpanRuntimes,
} from "./_runtimes.ts";

const seed = runSeed();

describe("PostgreSQL writers", { skip: PG_SKIP || workersSpanRuntimes() }, () => {
  // The power cut's cluster of its own (scripts/pg.sh): stopping the shared test server would
  // break the test files running beside this one. Started (initdb, a few seconds, most of them
  // waiting on the disk) while the tests before it run; stopped and removed after them all.
  // Directly under the temporary folder: the postgres user must be able to reach it.
  const clusterDir = join(tmpdir(), `hermes-pg-crash-${process.pid}-${seed}`);
  const pgSh = join(REPO, "scripts", "pg.sh");
  let crashServer: Promise<string> | undefined;
  before(() => {
    crashServer = new Promise((resolve, reject) => {
      execFile("bash", [pgSh, "start", clusterDir], { encoding: "utf8" }, (error, stdout) => {
        if (error) reject(error);
        else resolve(stdout.trim());
      });
    });
    // Awaited by the power cut's test; not an unhandled rejection while the others run.
    crashServer.catch(() => {});
  });
  after(async () => {
    if (crashServer === undefined) return;
    await crashServer.catch(() => {});
    execFileSync("bash", [pgSh, "stop", clusterDir], { stdio: "ignore" });
  });

  test(
    `6 processes on Deno, Bun and Node append at once: every append exactly once (seed ${seed})`,
    { timeout: 120_000 },
    async () => {
      const url = schemaUrl(freshSchema());
      // Create the schema first, so the writers race on data, not on the migration.
      await (await openStore(url)).close();
      const workers = startWriters(url, 6, { name: "w", own: "own-", count: 60, seed });
      const exits = await Promise.all(workers.map((w) => w.exited));
      exits.forEach((exit, i) => assert.equal(exit.code, 0, workers[i].stderr));
      const acked = workers.flatMap(acks);
      assert.equal(acked.length, 360);
      await verify(url, acked, ["shared", ...workers.map((_, i) => `own-${i}`)]);
    },
  );

  test(
    `writers killed with SIGKILL lose nothing they acknowledged and double nothing (seed ${seed})`,
    { timeout: 120_000 },
    async () => {
      const url = schemaUrl(freshSchema());
      await (await openStore(url)).close();
      const workers = startWriters(url, 4, { name: "k", own: "kill-", count: 0, seed: seed + 100 });
      await Promise.all(workers.map((w) => w.waitFor((l) => l.startsWith("ready"), "ready")));
      for (const worker of workers) {
        await worker.waitFor((l) => l.startsWith("ack "), "a first append");
        await delay(50 + (seed % 100));
        worker.kill("SIGKILL");
      }
      await Promise.all(workers.map((w) => w.exited));
      const acked = workers.flatMap(acks);
      assert.ok(acked.length >= workers.length, `${acked.length} acknowledged`);
      await verify(url, acked, ["shared", ...workers.map((_, i) => `kill-${i}`)]);
    },
  );

  test(
    `the server stopped as by a power cut (pg_ctl -m immediate) and restarted: nothing acknowledged is lost, nothing doubled (seed ${seed})`,
    { timeout: 120_000 },
    async () => {
      await crashAndRestart(await crashServer!, clusterDir, pgSh);
    },
  );
});

/**
 * `n` writer processes on Deno, Bun and Node in turn (`_pg_writer.ts`), writer
 * `i` named `${name}${i}`, appending to its own session `${own}${i}` and to
 * "shared": `count` appends (0: until killed), seeded `seed + i`.
 */
function startWriters(
  url: string,
  n: number,
  options: { name: string; own: string; count: number; seed: number },
) {
  const runtimes = workerRuntimes(["deno", "bun", "node"]);
  return Array.from(
    { length: n },
    (_, i) =>
      startWorker(runtimes[i % runtimes.length], "_pg_writer.ts", [JSON.stringify({
        url,
        name: `${options.name}${i}`,
        own: `${options.own}${i}`,
        shared: "shared",
        count: options.count,
        seed: options.seed + i,
      })]),
  );
}

/** Three writers on `server`; the server crashes (immediate stop) and restarts; then the checks. */
async function crashAndRestart(server: string, clusterDir: string, pgSh: string): Promise<void> {
  // A writer asks what became of its lost append until the server answers again, within the
  // connect deadline: 3 s here, not the 30 s default, as the server comes back only after.
  const url = `${server}?schema=crash&connect_timeout=3`;
  await (await openStore(url)).close();
  const workers = startWriters(url, 3, { name: "c", own: "crash-", count: 0, seed: seed + 200 });
  for (const worker of workers) {
    await worker.waitFor((l) => l.startsWith("ack "), "a first append");
  }
  await delay(100 + (seed % 200));
  execFileSync("bash", [pgSh, "crash", clusterDir], { stdio: "ignore" });
  // Every writer fails on its lost connection (none may claim an append it cannot know).
  const exits = await Promise.all(workers.map((w) => w.exited));
  execFileSync("bash", [pgSh, "restart", clusterDir], { stdio: "ignore" });
  assert.ok(exits.every((e) => e.code !== 0 || e.signal !== null), JSON.stringify(exits));
  const acked = workers.flatMap(acks);
  assert.ok(acked.length >= workers.length, `${acked.length} acknowledged`);
  await verify(url, acked, ["shared", ...workers.map((_, i) => `crash-${i}`)]);
  // And the store takes writes again.
  await using store = await openStore(url);
  const id = await store.appendMessage("shared", {
    role: "user",
    content: "after the restart",
  });
  assert.ok(id > Math.max(...acked.map((a) => a.id)));
}
