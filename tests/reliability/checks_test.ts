// The checker the reliability tests rely on must itself catch each kind of damage.
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SqliteConnection } from "../../lib/sqlite/driver/types.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { type Ledger, newLedger, record, sound, verify } from "./_checks.ts";

/** A file with session `s` holding w0x0…w0x3 (the last two appended in one call). */
async function fixture(
  t: TestContext,
): Promise<{ path: string; db: SqliteConnection; ledger: Ledger }> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  const db = await rawOpen(path);
  t.after(() => db.close()); // the tests close it before verify(); this is for a failed step
  db.exec("INSERT INTO sessions (id, source, started_at, message_count) VALUES ('s', 'x', 1, 4)");
  const insert = db.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, 1)",
  );
  const lines = ["try s w0x0", "try s w0x1", "try s w0x2,w0x3"];
  for (let i = 0; i < 4; i++) {
    const id = insert.run(`hello w0x${i} from test`).lastInsertRowid;
    if (i < 2) lines.push(`ack w0x${i} ${id} s 0`);
  }
  lines.push("ack w0x2 3 s 0", "ack w0x3 4 s 0");
  const ledger = newLedger();
  record(ledger, lines);
  return { path, db, ledger };
}

test("verify() finds a sound file sound", async (t) => {
  const { path, db, ledger } = await fixture(t);
  db.close();
  const verdict = await verify(path, ledger);
  assert.ok(sound(verdict), JSON.stringify(verdict));
  assert.equal(verdict.appends, 4);
  assert.equal(verdict.rows, 4);
});

test("verify() reports a lost, a duplicated and a half-written append", async (t) => {
  const { path, db, ledger } = await fixture(t);
  db.exec("DELETE FROM messages WHERE content LIKE 'hello w0x3 %'");
  db.exec(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'hello w0x0 from test', 2)",
  );
  db.close();
  const verdict = await verify(path, ledger);
  assert.deepEqual(verdict.lost, ["w0x3"]);
  assert.deepEqual(verdict.duplicated, ["w0x0"]);
  assert.deepEqual(verdict.halfWritten, ["w0x2,w0x3"]);
  assert.ok(!sound(verdict));
});

test("verify() reports a row nobody tried to write and a wrong counter", async (t) => {
  const { path, db, ledger } = await fixture(t);
  db.exec(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'stray', 2)",
  );
  db.close();
  const verdict = await verify(path, ledger);
  assert.deepEqual(verdict.unexpected, ["#5"]);
  assert.equal(verdict.counters.length, 1);
  assert.match(verdict.counters[0], /message_count 4\/5/);
});

test("verify() reports an FTS index that missed a message", async (t) => {
  const { path, db, ledger } = await fixture(t);
  db.exec("DROP TRIGGER messages_fts_trigram_insert");
  db.exec("UPDATE sessions SET message_count = 5");
  db.exec(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'hello w0x9 from test', 2)",
  );
  db.close();
  const extra = newLedger();
  record(extra, [...ledger.attempts.map((a) => `try s ${a.tokens.join(",")}`), "try s w0x9"]);
  const verdict = await verify(path, { attempts: extra.attempts, acks: ledger.acks });
  assert.deepEqual(verdict.fts, ["messages_fts_trigram row 5 differs"]);
  assert.ok(!sound(verdict));
});
