import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { NotStateDbError, OpenError } from "../../lib/core/errors.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { FIXTURES, rawOpen, tempDir } from "../_helpers.ts";
import { newLedger, record, snapshot, verify } from "./_checks.ts";
import { startWorker, workerRuntimes } from "./_runtimes.ts";
import type { WriterConfig } from "./_writer.ts";

/** A session of the v11 fixture. */
const KNOWN = "20251221_090000_9738df";
const V11 = readFileSync(join(FIXTURES, "hermes-v11.db"));

/** A fresh folder holding `state.db` with `bytes`; returns the file's path. */
function fileWith(bytes: Uint8Array | string): string {
  const path = join(tempDir(), "state.db");
  writeFileSync(path, bytes);
  return path;
}

/**
 * Opens `path` twice, read-write and read-only: each must fail with a
 * one-line OpenError naming the path and matching `reason`, and the file's
 * bytes must stay as they were.
 */
async function assertRefused(path: string, reason: RegExp): Promise<void> {
  const before = snapshot(join(path, ".."))["state.db"];
  for (const readonly of [false, true, false]) {
    await assert.rejects(SessionDB.open({ path, readonly }), (error) => {
      assert.ok(error instanceof OpenError, String(error));
      assert.equal(error.path, path);
      assert.ok(error.message.startsWith(`Cannot open database "${path}": `), error.message);
      assert.match(error.message, reason);
      assert.ok(!error.message.includes("\n"), "one line");
      return true;
    });
    assert.equal(
      snapshot(join(path, ".."))["state.db"],
      before,
      `bytes changed (readonly ${readonly})`,
    );
  }
}

test("SessionDB.open() refuses a text file, read-write and read-only, leaving its bytes alone", async () => {
  await assertRefused(fileWith("name,age\nada,36\n".repeat(500)), /file is not a database/);
});

test("SessionDB.open() refuses random bytes that start like SQLite, leaving them alone", async () => {
  const bytes = new Uint8Array(8192).map((_, i) => (i * 7919) % 251);
  bytes.set(V11.subarray(0, 100));
  await assertRefused(fileWith(bytes), /malformed|not a database/);
});

for (const [label, end] of [["its header", 100], ["half of it", V11.length / 2]] as const) {
  test(`SessionDB.open() refuses a SQLite file cut after ${label}, leaving its bytes alone`, async () => {
    await assertRefused(fileWith(V11.subarray(0, end)), /malformed|not a database/);
  });
}

test("SessionDB.open() refuses a file whose schema page is overwritten, leaving its bytes alone", async () => {
  const bytes = Uint8Array.from(V11);
  bytes.fill(0x41, 100, 4096);
  await assertRefused(fileWith(bytes), /malformed/);
});

test("SessionDB.open() makes a zero-byte file a new v11 database", async () => {
  const path = fileWith("");
  using db = await SessionDB.open({ path });
  db.setMeta("k", "v");
  db.close();
  using raw = await rawOpen(path, true);
  assert.equal(raw.prepare("SELECT version FROM schema_version").get()!.version, 11);
  assert.equal(raw.prepare("SELECT value FROM state_meta WHERE key = 'k'").get()!.value, "v");
});

test("SessionDB.open({ readonly }) refuses a zero-byte file or a SQLite file that is not a Hermes store", async () => {
  const empty = fileWith("");
  await assert.rejects(
    SessionDB.open({ path: empty, readonly: true }),
    new NotStateDbError(empty, { missing: "sessions", empty: true }),
  );
  assert.equal(readFileSync(empty).length, 0);
  const other = join(tempDir(), "other.db");
  using raw = await rawOpen(other);
  raw.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi')");
  raw.close();
  await assert.rejects(
    SessionDB.open({ path: other, readonly: true }),
    {
      name: "NotStateDbError",
      message: `Cannot open database "${other}": not a Hermes state.db (no sessions table)`,
      empty: false,
    },
  );
});

test("SessionDB.open() refuses a folder, read-write and read-only", async () => {
  const dir = tempDir();
  for (const readonly of [false, true]) {
    await assert.rejects(
      SessionDB.open({ path: dir, readonly }),
      new OpenError(dir, "it is a folder"),
    );
  }
  assert.deepEqual(readdirSync(dir), []);
});

test("SessionDB.open() ignores a -wal file of garbage and keeps the database's rows", async () => {
  const dir = tempDir();
  const path = join(dir, "state.db");
  copyFileSync(join(FIXTURES, "hermes-v11.db"), path);
  writeFileSync(`${path}-wal`, "not a write-ahead log ".repeat(1000));
  using db = await SessionDB.open({ path });
  assert.equal(db.getSession(KNOWN)?.id, KNOWN);
  db.setMeta("after", "garbage wal");
  db.close();
  using again = await SessionDB.open({ path, readonly: true });
  assert.equal(again.getMeta("after"), "garbage wal");
  assert.equal(again.getSession(KNOWN)?.id, KNOWN);
});

test("SessionDB.open() of a newer schema (version 30, extra table and columns) reads it and changes none of it", async () => {
  const dir = tempDir();
  const path = join(dir, "state.db");
  copyFileSync(join(FIXTURES, "hermes-v11.db"), path);
  using raw = await rawOpen(path);
  raw.exec(`
    UPDATE schema_version SET version = 30;
    ALTER TABLE sessions ADD COLUMN mood TEXT DEFAULT 'calm';
    ALTER TABLE messages ADD COLUMN embedding BLOB;
    CREATE TABLE future_things (id INTEGER PRIMARY KEY, what TEXT);
    INSERT INTO future_things (what) VALUES ('kept');
    DROP TRIGGER messages_fts_insert;
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
      INSERT INTO messages_fts(rowid, content) VALUES (new.id, 'future: ' || COALESCE(new.content, ''));
    END;`);
  const schema = () => raw.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
  const before = schema();
  using db = await SessionDB.open({ path });
  assert.equal(db.getSession(KNOWN)?.mood, "calm");
  db.setMeta("written", "by an older reader");
  db.close();
  assert.deepEqual(schema(), before, "no object added, dropped or rewritten");
  assert.equal(raw.prepare("SELECT version FROM schema_version").get()!.version, 30);
  assert.equal(raw.prepare("SELECT what FROM future_things").get()!.what, "kept");
});

test("SessionDB.close() removes the -wal and -shm files when it is the last connection", async () => {
  const dir = tempDir();
  const path = join(dir, "state.db");
  using db = await SessionDB.open({ path });
  db.setMeta("k", "v");
  assert.equal(db.getMeta("k"), "v");
  assert.deepEqual(readdirSync(dir).sort(), ["state.db", "state.db-shm", "state.db-wal"]);
  db.close();
  assert.deepEqual(readdirSync(dir), ["state.db"]);
});

test("SessionDB.open() of a copy of a killed writer's db and -wal recovers every acknowledged append, without changing the copied files when read-only", async () => {
  const dir = tempDir();
  const path = join(dir, "state.db");
  const other = workerRuntimes(["bun", "deno"]).find((r) => r !== runtimeName()) ?? runtimeName();
  const config: WriterConfig = { path, name: "k", own: "killed", count: 0, seed: 7 };
  const worker = startWorker(other, "_writer.ts", [JSON.stringify(config)]);
  try {
    await worker.waitFor((line) => line.startsWith("ack kx20 "), "20 appends");
  } finally {
    worker.kill("SIGKILL");
  }
  await worker.exited;
  const crash = join(tempDir(), "crash");
  mkdirSync(crash);
  copyFileSync(path, join(crash, "state.db"));
  copyFileSync(`${path}-wal`, join(crash, "state.db-wal"));
  const copied = snapshot(crash);
  assert.ok(readFileSync(join(crash, "state.db-wal")).length > 0, "the WAL holds commits");
  const ledger = newLedger();
  record(ledger, worker.lines);
  // A read-only open sees the WAL's commits without writing to the copied files.
  using reader = await SessionDB.open({ path: join(crash, "state.db"), readonly: true });
  assert.ok(Number(reader.getSession("killed")?.message_count) >= ledger.acks.size);
  reader.close();
  const after = snapshot(crash);
  assert.equal(after["state.db"], copied["state.db"]);
  assert.equal(after["state.db-wal"], copied["state.db-wal"]);
  const verdict = await verify(join(crash, "state.db"), ledger);
  assert.deepEqual([verdict.lost, verdict.duplicated, verdict.halfWritten], [[], [], []]);
  assert.equal(verdict.integrity, "ok");
  assert.deepEqual(verdict.fts, []);
  assert.deepEqual(verdict.counters, []);
});
