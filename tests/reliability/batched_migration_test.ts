import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { migrate } from "../../lib/sqlite/schema/migrate.ts";
import { finishFtsBackfill, pendingBackfills } from "../../lib/sqlite/schema/fts_backfill.ts";
import { Writer } from "../../lib/sqlite/write.ts";
import type { SqliteConnection } from "../../lib/sqlite/driver/types.ts";
import { copyFixture, expected, rawOpen } from "../_helpers.ts";

type Reference = { fts_rows: Record<string, { rowid: number; content: string }[]> };

function ftsRows(db: SqliteConnection, table: string) {
  return db.prepare(`SELECT rowid, content FROM ${table} ORDER BY rowid`).all();
}

function version(db: SqliteConnection): number {
  return Number(db.prepare("SELECT version FROM schema_version").get()?.version);
}

/** Runs the schema step of an open on a raw connection (what `SessionDB.open` does first). */
async function schemaStepOnly(path: string): Promise<{ db: SqliteConnection; writer: Writer }> {
  const db = await rawOpen(path);
  db.exec("PRAGMA journal_mode = WAL");
  const writer = new Writer(db);
  writer.run(() => migrate(db));
  return { db, writer };
}

for (
  const [fixture, want] of [["hermes-v6.db", "migrate_v6.json"], [
    "hermes-v10-external.db",
    "migrate_v10.json",
  ]]
) {
  test(`finishFtsBackfill() fills the v11 tables of ${fixture} in short transactions, as Python's one-shot rebuild does`, async (t) => {
    const path = copyFixture(fixture);
    const { db, writer } = await schemaStepOnly(path);
    t.after(() => db.close());
    assert.ok(version(db) < 11, "the version is set only once every row is copied");
    assert.deepEqual(pendingBackfills(db).map((p) => p.table), [
      "messages_fts",
      "messages_fts_trigram",
    ]);
    const pauses: number[] = [];
    const report = finishFtsBackfill((fn) => writer.run(fn), db, {
      holdMs: 0,
      sleep: (ms) => pauses.push(ms),
    });
    assert.equal(report?.transactions, 2);
    assert.equal(pauses.length, 1);
    assert.equal(version(db), 11);
    assert.deepEqual(pendingBackfills(db), []);
    const reference = await expected<Reference>(want);
    for (const table of ["messages_fts", "messages_fts_trigram"]) {
      assert.deepEqual(ftsRows(db, table), reference.fts_rows[table], table);
      db.exec(`INSERT INTO ${table}(${table}) VALUES('integrity-check')`);
    }
  });
}

test("a migration stopped between two transactions leaves a searchable file, and the next open finishes it", async (t) => {
  const path = copyFixture("hermes-v10-external.db");
  const { db, writer } = await schemaStepOnly(path);
  t.after(() => db.close());
  assert.throws(
    () =>
      finishFtsBackfill((fn) => writer.run(fn), db, {
        holdMs: 0,
        sleep: () => {
          throw new Error("killed between two transactions");
        },
      }),
    /killed/,
  );
  const left = pendingBackfills(db);
  assert.equal(left.length, 2);
  assert.ok(left[0].next > left[0].upto, "the first table was copied");
  assert.ok(left[1].next <= left[1].upto, "the second was not");
  db.close();
  // Meanwhile, search reads the unfinished table by substring: nothing is missed.
  using reader = await SessionDB.open({ path, readonly: true });
  assert.equal(reader.searchMessages("LEGACYARG").length, 1);
  reader.close();
  using reopened = await SessionDB.open({ path });
  reopened.close();
  using raw = await rawOpen(path, true);
  assert.equal(version(raw), 11);
  assert.deepEqual(pendingBackfills(raw), []);
  const reference = await expected<Reference>("migrate_v10.json");
  for (const table of ["messages_fts", "messages_fts_trigram"]) {
    assert.deepEqual(ftsRows(raw, table), reference.fts_rows[table], table);
  }
});

test("a Python writer gets the lock between two migration transactions, and its message is indexed", async () => {
  const path = copyFixture("hermes-v10-external.db");
  const { db, writer } = await schemaStepOnly(path);
  const session = String(db.prepare("SELECT id FROM sessions LIMIT 1").get()?.id);
  finishFtsBackfill((fn) => writer.run(fn), db, {
    holdMs: 0,
    sleep: () => {
      const script = [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1], timeout=1)",
        "c.execute(\"INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'written mid-migration', 9e9)\", (sys.argv[2],))",
        "c.commit()",
      ].join("\n");
      const run = spawnSync("python3", ["-c", script, path, session], { encoding: "utf8" });
      assert.equal(run.status, 0, run.stderr);
    },
  });
  db.close();
  using reopened = await SessionDB.open({ path });
  const hits = reopened.searchMessages("mid-migration");
  assert.equal(hits.length, 1);
});
