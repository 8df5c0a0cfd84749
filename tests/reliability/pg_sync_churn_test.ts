/**
 * `sync` under churn, all at once on one PostgreSQL store, each in its own
 * process on Deno, Bun and Node: hosts' writers appending to the files,
 * passes of the same file racing each other and passes of another, writers
 * appending on the server through the library, and this process deleting
 * and pruning synced sessions on the server and removing an origin
 * (`origins --remove`). No pass fails; once the writers stop, one more pass
 * of each file leaves the server holding exactly what each file holds (every
 * session, every message once, in order), and every append acknowledged on
 * the server is there exactly once.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { syncedStore } from "../../lib/core/synced_store.ts";
import { tempDbPath, tempDir } from "../_helpers.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "../store/_pg.ts";
import { acks, verify } from "./_pg_checks.ts";
import {
  delay,
  runSeed,
  startOurWriter,
  startWorker,
  type Worker,
  workerRuntimes,
  workersSpanRuntimes,
} from "./_runtimes.ts";
import { mulberry32 } from "../_random.ts";

const seed = runSeed();

/** A file of `sessions` sessions of 3 messages each, every third ended. */
async function hostFile(prefix: string, sessions: number): Promise<string> {
  const path = tempDbPath();
  const db = await SessionDB.open({ path });
  for (let i = 0; i < sessions; i++) {
    const id = `${prefix}${i}`;
    db.createSession(id, "cli");
    for (let m = 0; m < 3; m++) db.appendMessage(id, { role: "user", content: `${id} m${m}` });
    if (i % 3 === 0) db.endSession(id, "done");
  }
  db.close();
  return path;
}

/** Each session of the file and the contents of its messages, in order. */
async function fileContents(path: string): Promise<Map<string, unknown[]>> {
  const db = await SessionDB.open({ path, readonly: true });
  try {
    const all = new Map<string, unknown[]>();
    for (const { id } of db.exportAll()) {
      all.set(id, db.getMessages(id).map((m) => m.content));
    }
    return all;
  } finally {
    db.close();
  }
}

/** Each of the origin's sessions on the server (ids without the prefix) and its messages' contents. */
async function serverContents(
  store: SessionStore,
  origin: string,
): Promise<Map<string, unknown[]>> {
  const all = new Map<string, unknown[]>();
  const { ids } = await store.sessionIdsWithPrefix(`${origin}/`, { limit: 100_000 });
  for (const id of [...ids].sort()) {
    all.set(id.slice(origin.length + 1), (await store.getMessages(id)).map((m) => m.content));
  }
  return all;
}

/** The two maps as sorted entries, for a readable difference. */
function entries(map: Map<string, unknown[]>): [string, unknown[]][] {
  return [...map].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
}

describe("sync under churn", { skip: PG_SKIP || workersSpanRuntimes() }, () => {
  test(`passes, server writers, deletes, prunes and an origin removed, at once (seed ${seed})`, {
    timeout: 180_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const runtimes = workerRuntimes(["deno", "bun", "node"]);
    const random = mulberry32(seed);
    // Made first, so that the workers race on data, not on the migration.
    await (await openStore(url)).close();
    const fileA = await hostFile("a", 30);
    const fileB = await hostFile("b", 12);
    const startFile = join(tempDir(), "start");
    const workers: Worker[] = [];
    try {
      const hostWriters = [fileA, fileB].map((path, i) =>
        startOurWriter(runtimes[i % runtimes.length], path, seed + i, startFile, 15)
      );
      workers.push(...hostWriters);
      const serverWriters = [0, 1].map((i) =>
        startWorker(runtimes[(i + 1) % runtimes.length], "_pg_writer.ts", [JSON.stringify({
          url,
          name: `p${i}`,
          own: `srv-${i}`,
          shared: "shared",
          count: 0,
          seed: seed + 10 + i,
        })])
      );
      workers.push(...serverWriters);
      const passes = [["A", fileA], ["A", fileA], ["B", fileB]].map(([origin, path], i) =>
        startWorker(runtimes[(i + 2) % runtimes.length], "_pg_sync_worker.ts", [JSON.stringify({
          url,
          path,
          origin,
          passes: 10,
          pauseMs: 40,
        })])
      );
      workers.push(...passes);
      for (const worker of [...serverWriters, ...passes, ...hostWriters]) {
        await worker.waitFor((line) => line.startsWith("ready"), "ready");
      }
      writeFileSync(startFile, "");
      // The churn on the server, while the passes run.
      {
        await using store = await openStore(url);
        let removed = false;
        for (let round = 0; round < 30 && passes.some((p) => !p.lines.includes("done")); round++) {
          const { ids } = await store.sessionIdsWithPrefix("A/", { limit: 1000 });
          if (ids.length > 0) await store.deleteSession(ids[Math.floor(random() * ids.length)]);
          if (round % 7 === 3) await store.pruneSessions({ olderThanDays: 0 });
          if (!removed && round >= 10) {
            await syncedStore(store)!.removeSyncOrigin("B");
            removed = true;
          }
          await delay(20 + Math.floor(random() * 60));
        }
      }
      const passLines = (await Promise.all(passes.map((p) => p.succeeded()))).flat();
      for (const writer of [...hostWriters, ...serverWriters]) writer.kill("SIGKILL");
      await Promise.all([...hostWriters, ...serverWriters].map((w) => w.exited));
      const failed = passLines.filter((line) => line.startsWith("error "));
      assert.deepEqual(failed, [], "passes that failed");
      assert.ok(passLines.filter((line) => line.startsWith("pass ")).length === 30);

      const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
      const client = await connectSyncTarget(url);
      try {
        await syncFile(client, fileA, { origin: "A", host: "h" });
        await syncFile(client, fileB, { origin: "B", host: "h" });
      } finally {
        await client.close();
      }
      await using store = await openStore(url);
      for (const [origin, path] of [["A", fileA], ["B", fileB]]) {
        assert.deepEqual(
          entries(await serverContents(store, origin)),
          entries(await fileContents(path)),
          `origin ${origin}`,
        );
      }
      const acked = serverWriters.flatMap(acks);
      assert.ok(acked.length > 0, "the server writers appended");
      await verify(url, acked, ["shared", "srv-0", "srv-1"]);
    } finally {
      for (const worker of workers) worker.kill("SIGKILL");
      await Promise.all(workers.map((w) => w.exited));
    }
  });
});
