import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { currentSchemaVersion } from "../lib/sqlite/schema/migrate.ts";
import { copyFixture, expected, FIXTURES, rawOpen, tempDbPath } from "./_helpers.ts";

const MASTER_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name";

async function masterOf(path: string) {
  using db = await rawOpen(path, true);
  return db.prepare(MASTER_SQL).all();
}

async function scalar(path: string, sql: string, ...params: (string | number)[]) {
  using db = await rawOpen(path, true);
  const row = db.prepare(sql).get(...params);
  return row ? Object.values(row)[0] : undefined;
}

test("SessionDB.open() creates a file whose schema equals the Python v11 schema byte for byte", async () => {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  const want = JSON.parse(readFileSync(join(FIXTURES, "schema-v11.json"), "utf8"));
  assert.deepEqual(await masterOf(path), want);
  assert.equal(await scalar(path, "SELECT version FROM schema_version"), 11);
  assert.equal(await scalar(path, "SELECT count(*) FROM schema_version"), 1);
});

test("SessionDB.open() twice leaves the schema as it was", async () => {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  const first = await masterOf(path);
  (await SessionDB.open({ path })).close();
  assert.deepEqual(await masterOf(path), first);
  assert.equal(await scalar(path, "SELECT count(*) FROM schema_version"), 1);
});

test("SessionDB.open() leaves the rows of a v11 fixture untouched", async () => {
  const path = copyFixture("hermes-v11.db");
  const dump = async () => {
    using db = await rawOpen(path, true);
    const out = {
      sessions: db.prepare("SELECT * FROM sessions ORDER BY id").all(),
      messages: db.prepare("SELECT * FROM messages ORDER BY id").all(),
      meta: db.prepare("SELECT * FROM state_meta ORDER BY key").all(),
      fts: db.prepare("SELECT rowid, content FROM messages_fts ORDER BY rowid").all(),
    };
    db.close();
    return out;
  };
  const before = await dump();
  (await SessionDB.open({ path })).close();
  assert.deepEqual(await dump(), before);
  assert.equal(before.messages.length, 197);
  assert.equal(before.sessions.length, 42);
});

for (
  const [fixture, want] of [["hermes-v6.db", "migrate_v6.json"], [
    "hermes-v10-external.db",
    "migrate_v10.json",
  ]]
) {
  test(`SessionDB.open() migrates ${fixture} to v11 as Python does`, async () => {
    const path = copyFixture(fixture);
    (await SessionDB.open({ path })).close();
    const reference = await expected<{
      sqlite_master: unknown[];
      fts_rows: Record<string, { rowid: number; content: string }[]>;
    }>(want);
    assert.equal(await scalar(path, "SELECT version FROM schema_version"), 11);
    assert.deepEqual(await masterOf(path), reference.sqlite_master);
    using db = await rawOpen(path, true);
    for (const table of ["messages_fts", "messages_fts_trigram"]) {
      const rows = db.prepare(`SELECT rowid, content FROM ${table} ORDER BY rowid`).all();
      assert.deepEqual(rows, reference.fts_rows[table], table);
    }
  });
}

test("SessionDB.open() makes tool names and tool-call arguments of a v10 file findable", async () => {
  const path = copyFixture("hermes-v10-external.db");
  (await SessionDB.open({ path })).close();
  for (const word of ["LEGACYTOOL", "LEGACYARG"]) {
    for (const table of ["messages_fts", "messages_fts_trigram"]) {
      const n = await scalar(path, `SELECT count(*) FROM ${table} WHERE ${table} MATCH ?`, word);
      assert.equal(n, 1, `${word} in ${table}`);
    }
  }
});

test("SessionDB.open() keeps a newer schema version, extra columns and tables", async () => {
  const path = copyFixture("hermes-v11.db");
  using raw = await rawOpen(path);
  raw.exec("UPDATE schema_version SET version = 30");
  raw.exec("ALTER TABLE messages ADD COLUMN future_flag TEXT DEFAULT 'x'");
  raw.exec("ALTER TABLE sessions ADD COLUMN future_score REAL");
  raw.exec("CREATE TABLE future_table (k TEXT)");
  raw.exec("INSERT INTO future_table VALUES ('kept')");
  raw.close();
  const before = await masterOf(path);
  using db = await SessionDB.open({ path });
  db.close();
  assert.deepEqual(await masterOf(path), before);
  assert.equal(await scalar(path, "SELECT version FROM schema_version"), 30);
  assert.equal(await scalar(path, "SELECT k FROM future_table"), "kept");
});

test("SessionDB.open() adds columns an older file lacks, in declared order", async () => {
  const path = tempDbPath();
  using raw = await rawOpen(path);
  raw.exec(
    `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL);
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version VALUES (11);`,
  );
  raw.close();
  (await SessionDB.open({ path })).close();
  using db = await rawOpen(path, true);
  const columns = db.prepare("SELECT name FROM pragma_table_info('sessions')").all().map((r) =>
    r.name
  );
  db.close();
  assert.equal(columns.length, 27);
  assert.deepEqual(columns.slice(0, 4), ["id", "source", "started_at", "user_id"]);
  assert.equal(columns.at(-1), "api_call_count");
});

test("currentSchemaVersion() gives the version only when the schema step would change nothing", async () => {
  const versionOf = async (path: string) => {
    using db = await rawOpen(path, true);
    return currentSchemaVersion(db);
  };
  assert.equal(await versionOf(copyFixture("hermes-v6.db")), undefined);
  assert.equal(await versionOf(copyFixture("hermes-v10-external.db")), undefined);
  assert.equal(await versionOf(copyFixture("hermes-v11.db")), 11);
  assert.equal(await versionOf(copyFixture("hermes-v21.db")), 21, "a newer file is left as it is");
  const noTitleIndex = copyFixture("hermes-v11.db");
  {
    using raw = await rawOpen(noTitleIndex);
    raw.exec("DROP INDEX idx_sessions_title_unique");
  }
  assert.equal(await versionOf(noTitleIndex), undefined, "an index is missing");
  (await SessionDB.open({ path: noTitleIndex })).close();
  assert.equal(
    await scalar(
      noTitleIndex,
      "SELECT count(*) FROM sqlite_master WHERE name = ?",
      "idx_sessions_title_unique",
    ),
    1,
    "the open made it again",
  );
  assert.equal(await versionOf(noTitleIndex), 11);
  const pending = copyFixture("hermes-v11.db");
  {
    using raw = await rawOpen(pending);
    raw.prepare("INSERT INTO state_meta (key, value) VALUES (?, ?)").run(
      "fts_backfill:messages_fts",
      JSON.stringify({ next: 1, upto: 0 }),
    );
  }
  assert.equal(await versionOf(pending), undefined, "a backfill is pending");
  (await SessionDB.open({ path: pending })).close();
  assert.equal(await versionOf(pending), 11, "the open finished it");
});
