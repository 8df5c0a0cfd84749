import { test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { SessionDB, storeOf } from "../../lib/sqlite/session_db.ts";
import {
  durabilityPragmas,
  JOURNAL_SIZE_LIMIT,
  olderThan,
  sqliteVersionWarning,
  WAL_TRUNCATE_BYTES,
} from "../../lib/sqlite/durability.ts";
import { tempDbPath } from "../_helpers.ts";

function walSize(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

/** A session of `count` messages of about `size` characters each. */
async function withMessages(
  path: string,
  count: number,
  size = 500,
  busyTimeoutMs = 1000,
): Promise<SessionDB> {
  const db = await SessionDB.open({ path, clock: () => 1_000, retry: { busyTimeoutMs } });
  db.createSession("s1", "cli");
  db.endSession("s1", "done");
  const text = (i: number) => `message ${i} `.repeat(Math.ceil(size / 12));
  db.appendMessages(
    "s1",
    Array.from({ length: count }, (_, i) => ({ role: "user", content: text(i) })),
  );
  return db;
}

test("SessionDB.open() sets journal_size_limit on every writable connection", async () => {
  using db = await SessionDB.open({ path: tempDbPath() });
  const row = storeOf(db).db.prepare("PRAGMA journal_size_limit").get();
  assert.equal(Number(row?.journal_size_limit), JOURNAL_SIZE_LIMIT);
});

test("durabilityPragmas() turns fullfsync on for macOS only", () => {
  assert.deepEqual(durabilityPragmas("darwin"), [
    `PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`,
    "PRAGMA fullfsync = ON",
    "PRAGMA checkpoint_fullfsync = ON",
  ]);
  assert.deepEqual(durabilityPragmas("linux"), [
    `PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`,
  ]);
});

test("sqliteVersionWarning() warns below 3.51.3 only", () => {
  assert.equal(olderThan("3.51.2", "3.51.3"), true);
  assert.equal(olderThan("3.51.3", "3.51.3"), false);
  assert.equal(olderThan("3.9.0", "3.51.3"), true);
  assert.equal(olderThan("4.0", "3.51.3"), false);
  assert.equal(sqliteVersionWarning("3.53.2"), null);
  assert.match(sqliteVersionWarning("3.45.1")!, /^SQLite 3\.45\.1 is older than 3\.51\.3/);
});

test("inspect() reports the -wal size, the SQLite warning and no stale FTS table", async () => {
  const path = tempDbPath();
  using db = await withMessages(path, 20);
  const info = db.inspect({ integrity: false });
  assert.equal(info.walBytes, walSize(path));
  assert.ok(info.walBytes > 0);
  assert.equal(info.sqliteWarning, sqliteVersionWarning(info.sqliteVersion));
  assert.deepEqual(info.staleFtsTables, []);
});

test("close() empties a -wal past 4 MiB with a TRUNCATE checkpoint while another connection stays open and idle", async () => {
  const path = tempDbPath();
  using other = await SessionDB.open({ path });
  using db = await withMessages(path, 400, 12_000);
  assert.ok(walSize(path) > WAL_TRUNCATE_BYTES, `WAL of ${walSize(path)} bytes`);
  db.close();
  assert.equal(walSize(path), 0);
  assert.equal(other.messageCount(), 400);
});

test("close() leaves a small -wal for passive checkpoints to reuse (no sync for a short command)", async () => {
  const path = tempDbPath();
  using _other = await SessionDB.open({ path }); // open until the end: db is not the last connection
  using db = await withMessages(path, 10);
  const before = walSize(path);
  assert.ok(before > 0 && before < WAL_TRUNCATE_BYTES);
  db.close();
  assert.equal(walSize(path), before);
});

test("pruneSessions() leaves an empty -wal behind when no other connection is busy", async () => {
  const path = tempDbPath();
  using other = await SessionDB.open({ path });
  using db = await withMessages(path, 400, 12_000);
  const pruned = db.pruneSessions({ olderThanDays: 0 });
  assert.equal(pruned, 0); // started "now" by the clock: not older than the cutoff
  using later = await SessionDB.open({ path, clock: () => 1_000 + 86_400 * 2 });
  assert.equal(later.pruneSessions({ olderThanDays: 1 }), 1);
  assert.equal(walSize(path), 0);
  assert.equal(other.messageCount(), 0);
});

test("a TRUNCATE checkpoint that cannot complete returns at once and leaves the data readable", async () => {
  const path = tempDbPath();
  using reader = await SessionDB.open({ path });
  // A checkpoint that waited would wait this long for the reader.
  using db = await withMessages(path, 400, 12_000, 5_000);
  const raw = storeOf(reader).db;
  raw.exec("BEGIN");
  raw.prepare("SELECT count(*) AS n FROM messages").get(); // holds this snapshot
  db.appendMessage("s1", { role: "user", content: "after the reader's snapshot" });
  assert.ok(walSize(path) > WAL_TRUNCATE_BYTES);
  const started = performance.now();
  db.close();
  assert.ok(performance.now() - started < 2_500, "the checkpoint waited for the reader");
  assert.ok(walSize(path) > 0, "the WAL was truncated under a reader of an older snapshot");
  assert.equal(reader.messageCount(), 400);
  raw.exec("COMMIT");
  assert.equal(reader.messageCount(), 401);
});
