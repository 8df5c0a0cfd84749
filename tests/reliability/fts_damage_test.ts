import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { SessionDB, storeOf } from "../../lib/sqlite/session_db.ts";
import { staleFtsTables } from "../../lib/sqlite/fts_stale.ts";
import { closeSync, openSync, writeSync } from "node:fs";
import { SqliteError } from "../../lib/sqlite/driver/sqlite_error.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";

/** Runs a Python sqlite3 script on `path` (a real other writer, as Python Hermes is). */
function python(path: string, lines: readonly string[]): string {
  const script = [
    "import sqlite3, sys",
    "c = sqlite3.connect(sys.argv[1], timeout=5)",
    ...lines,
    "c.commit()",
    "c.close()",
  ].join("\n");
  const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

/** Overwrites the FTS5 structure record (row 10 of `<table>_data`) with garbage. */
function corruptStructure(path: string, table: string): void {
  python(path, [`c.execute("UPDATE ${table}_data SET block = x'ffffffffffffffff' WHERE id = 10")`]);
}

async function seeded(): Promise<string> {
  const path = tempDbPath();
  using db = await SessionDB.open({ path, clock: () => 1_700_000_000 });
  db.createSession("s1", "cli");
  db.appendMessage("s1", { role: "user", content: "deploy with docker before" });
  db.close();
  return path;
}

function triggerNames(db: SessionDB): string[] {
  return storeOf(db).db.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name",
  ).all().map((row) => String(row.name));
}

test("appendMessage() keeps writing when the messages_fts structure record is corrupt, and marks the table stale", async () => {
  const path = await seeded();
  corruptStructure(path, "messages_fts");
  using db = await SessionDB.open({ path, clock: () => 1_700_000_100 });
  for (let i = 0; i < 20; i++) {
    db.appendMessage("s1", { role: "user", content: `docker message ${i}` });
  }
  assert.equal(db.getMessages("s1").length, 21);
  assert.equal(db.getSession("s1")?.message_count, 21);
  const [stale, ...others] = staleFtsTables(storeOf(db).db);
  assert.equal(others.length, 0);
  assert.equal(stale.table, "messages_fts");
  assert.match(stale.reason, /corrupt structure record/);
  assert.equal(stale.at, 1_700_000_100);
  assert.match(db.getMeta("fts_stale:messages_fts")!, /^\{"reason":"fts5: corrupt/);
  assert.deepEqual(triggerNames(db), [
    "messages_fts_trigram_delete",
    "messages_fts_trigram_insert",
    "messages_fts_trigram_update",
  ]);
  // The trigram table was not damaged and is still kept current.
  const trigram = storeOf(db).db.prepare(
    "SELECT count(*) AS n FROM messages_fts_trigram WHERE messages_fts_trigram MATCH '\"docker\"'",
  ).get();
  assert.equal(Number(trigram?.n), 21);
});

test("searchMessages() falls back to substring matching for a stale table and finds every message", async () => {
  const path = await seeded();
  corruptStructure(path, "messages_fts");
  using db = await SessionDB.open({ path });
  // Before any write marks it, a damaged table is read by substring too.
  assert.equal(db.searchMessages("docker").length, 1);
  for (let i = 0; i < 20; i++) db.appendMessage("s1", { role: "user", content: `Docker run ${i}` });
  assert.equal(db.searchMessages("docker", { limit: 100 }).length, 21);
  assert.equal(db.searchMessages("docker run", { limit: 100 }).length, 20);
  // The operators mean what they mean on the index: NOT leaves out, OR widens.
  assert.equal(db.searchMessages("docker NOT run", { limit: 100 }).length, 1);
  assert.equal(db.searchMessages("docker OR run", { limit: 100 }).length, 21);
  assert.equal(db.searchMessages("nothing-like-this").length, 0);
});

test("a write survives both full-text tables being damaged; Python keeps writing the file", async () => {
  const path = await seeded();
  corruptStructure(path, "messages_fts");
  corruptStructure(path, "messages_fts_trigram");
  using db = await SessionDB.open({ path });
  const id = db.appendMessage("s1", { role: "assistant", content: "記憶が断裂した docker" });
  assert.ok(id > 0);
  db.deleteSession("s1");
  db.createSession("s2", "cli");
  db.appendMessage("s2", { role: "user", content: "記憶が断裂した after delete" });
  assert.deepEqual(staleFtsTables(storeOf(db).db).map((s) => s.table), [
    "messages_fts",
    "messages_fts_trigram",
  ]);
  assert.deepEqual(triggerNames(db), []);
  python(path, [
    "c.execute(\"INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s2', 'user', 'from python', 1.0)\")",
  ]);
  assert.equal(db.getMessages("s2").length, 2);
  assert.equal(db.searchMessages("記憶が断裂").length, 1);
  assert.equal(db.searchMessages("python").length, 1);
});

test("Store.write() rethrows an error that is not FTS damage, with nothing written", async () => {
  const path = await seeded();
  using db = await SessionDB.open({ path });
  assert.throws(() => db.appendMessage("missing", { role: "user", content: "x" }), /FOREIGN KEY/);
  assert.deepEqual(staleFtsTables(storeOf(db).db), []);
  assert.equal(triggerNames(db).length, 6);
});

test("hermes-state search says once that a stale index was read by substring, and finds every message", async () => {
  const path = await seeded();
  corruptStructure(path, "messages_fts");
  using db = await SessionDB.open({ path });
  for (let i = 0; i < 3; i++) db.appendMessage("s1", { role: "user", content: `docker ${i}` });
  db.close();
  const run = await runCli(["--db", path, "search", "docker", "--json"]);
  assert.equal(run.code, 0, run.err);
  assert.equal(JSON.parse(run.out).length, 4);
  const notes = run.err.trim().split("\n");
  assert.equal(notes.length, 1, run.err);
  assert.match(notes[0], /messages_fts is stale after damage \(run "hermes-state doctor --fix"\)/);
  const healthy = await runCli(["--db", await seeded(), "search", "docker"]);
  assert.equal(healthy.err, "");
});

test("appendMessage() fails, marking nothing, on a bare SQLITE_CORRUPT (a damaged page: no FTS provenance)", async () => {
  const path = await seeded();
  using raw = await rawOpen(path, true);
  const root = Number(
    raw.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'messages_fts_data'").get()!
      .rootpage,
  );
  const pageSize = Number(raw.prepare("PRAGMA page_size").get()!.page_size);
  raw.close();
  // A page overwritten in place: "database disk image is malformed", which
  // names no object; the file may be damaged beyond the index (hermes-agent#99652).
  const fd = openSync(path, "r+");
  writeSync(fd, new Uint8Array(pageSize).fill(0xff), 0, pageSize, (root - 1) * pageSize);
  closeSync(fd);
  using db = await SessionDB.open({ path });
  assert.throws(
    () => db.appendMessage("s1", { role: "user", content: "docker after" }),
    (error) => error instanceof SqliteError && error.code === 11,
  );
  assert.equal(db.getMessages("s1").length, 1);
  assert.deepEqual(staleFtsTables(storeOf(db).db), []);
  // Reading still works, around the index.
  assert.equal(db.searchMessages("docker").length, 1);
});
