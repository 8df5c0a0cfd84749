import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { ReadonlyError } from "../lib/core/errors.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { openClocked, rawOpen, tempDbPath } from "./_helpers.ts";

const T0 = 1776675600.123456;

/** Opens a store on `path` with a settable clock at T0; it is closed when test `t` ends. */
function open(t: TestContext, path?: string): ReturnType<typeof openClocked> {
  return openClocked(t, T0, path);
}

async function raw(path: string, sql: string, ...params: string[]) {
  const conn = await rawOpen(path, true);
  try {
    return conn.prepare(sql).all(...params);
  } finally {
    conn.close();
  }
}

test("createSession() stores every option and started_at from the clock", async (t) => {
  const { db, path } = await open(t);
  const id = db.createSession("root", "cli", { model: "m1" });
  assert.equal(id, "root");
  db.createSession("child", "telegram", {
    model: "anthropic/claude",
    modelConfig: { max_iterations: 90, reasoning_config: { effort: "médium" } },
    systemPrompt: "You are Hermes.",
    userId: "tg:1",
    parentSessionId: "root",
  });
  const row = db.getSession("child")!;
  assert.equal(row.source, "telegram");
  assert.equal(row.model, "anthropic/claude");
  assert.equal(row.system_prompt, "You are Hermes.");
  assert.equal(row.user_id, "tg:1");
  assert.equal(row.parent_session_id, "root");
  assert.equal(row.started_at, T0);
  assert.equal(row.ended_at, null);
  assert.equal(row.message_count, 0);
  assert.equal(row.estimated_cost_usd, null);
  db.close();
  // Byte for byte what Python's json.dumps writes.
  const [stored] = await raw(path, "SELECT model_config FROM sessions WHERE id = 'child'");
  assert.equal(
    stored.model_config,
    '{"max_iterations": 90, "reasoning_config": {"effort": "m\\u00e9dium"}}',
  );
});

test("createSession() stores an empty model config as NULL", async (t) => {
  const { db } = await open(t);
  db.createSession("a", "cli", { modelConfig: {} });
  db.createSession("b", "cli", { modelConfig: [] });
  assert.equal(db.getSession("a")!.model_config, null);
  assert.equal(db.getSession("b")!.model_config, null);
});

test("createSession() leaves an existing session untouched (first write wins)", async (t) => {
  const { db, at } = await open(t);
  db.createSession("s", "cli", { model: "first", systemPrompt: "one" });
  at[0] = T0 + 50;
  assert.equal(db.createSession("s", "telegram", { model: "second", systemPrompt: "two" }), "s");
  const row = db.getSession("s")!;
  assert.deepEqual([row.source, row.model, row.system_prompt, row.started_at], [
    "cli",
    "first",
    "one",
    T0,
  ]);
});

test("createSession() throws the foreign-key SqliteError and writes nothing when the parent is missing", async (t) => {
  const { db, path } = await open(t);
  assert.throws(() => db.createSession("orphan", "cli", { parentSessionId: "nope" }), (error) => {
    assert.ok(error instanceof SqliteError);
    assert.equal(error.codeName, "SQLITE_CONSTRAINT");
    assert.ok(error.isConstraint);
    assert.match(error.message, /FOREIGN KEY/);
    return true;
  });
  assert.equal(db.getSession("orphan"), undefined);
  db.close();
  assert.deepEqual(await raw(path, "SELECT COUNT(*) AS n FROM sessions"), [{ n: 0 }]);
});

test("ensureSession() creates a missing session with source unknown and keeps an existing one", async (t) => {
  const { db } = await open(t);
  assert.equal(db.ensureSession("e1"), "e1");
  assert.equal(db.getSession("e1")!.source, "unknown");
  db.ensureSession("e2", "cron", { model: "gpt" });
  assert.equal(db.getSession("e2")!.model, "gpt");
  db.ensureSession("e2", "cli", { model: "other" });
  assert.equal(db.getSession("e2")!.source, "cron");
  assert.equal(db.getSession("e2")!.model, "gpt");
});

test("endSession() ends a live session once; the first reason and time stay", async (t) => {
  const { db, at } = await open(t);
  db.createSession("s", "cli");
  at[0] = T0 + 10.5;
  db.endSession("s", "compression");
  at[0] = T0 + 99;
  db.endSession("s", "cli_close");
  const row = db.getSession("s")!;
  assert.equal(row.end_reason, "compression");
  assert.equal(row.ended_at, T0 + 10.5);
});

test("reopenSession() clears the end so a later endSession() applies again", async (t) => {
  const { db, at } = await open(t);
  db.createSession("s", "cli");
  db.endSession("s", "cli_close");
  db.reopenSession("s");
  let row = db.getSession("s")!;
  assert.equal(row.ended_at, null);
  assert.equal(row.end_reason, null);
  at[0] = T0 + 3;
  db.endSession("s", "branched");
  row = db.getSession("s")!;
  assert.equal(row.end_reason, "branched");
  assert.equal(row.ended_at, T0 + 3);
});

test("updateSystemPrompt() replaces the stored prompt", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli", { systemPrompt: "old" });
  db.updateSystemPrompt("s", "new prompt 🧪");
  assert.equal(db.getSession("s")!.system_prompt, "new prompt 🧪");
});

test("endSession(), reopenSession() and updateSystemPrompt() do nothing for an unknown id", async (t) => {
  const { db, path } = await open(t);
  db.endSession("ghost", "cli_close");
  db.reopenSession("ghost");
  db.updateSystemPrompt("ghost", "p");
  assert.equal(db.getSession("ghost"), undefined);
  db.close();
  assert.deepEqual(await raw(path, "SELECT COUNT(*) AS n FROM sessions"), [{ n: 0 }]);
});

test("getSession() returns undefined for an unknown id and keeps columns a newer Hermes added", async (t) => {
  const path = tempDbPath();
  const first = await open(t, path);
  first.db.createSession("s", "cli");
  first.db.close();
  using conn = await rawOpen(path);
  conn.exec("ALTER TABLE sessions ADD COLUMN handoff_state TEXT");
  conn.exec("UPDATE sessions SET handoff_state = 'pending'");
  conn.close();
  const { db } = await open(t, path);
  assert.equal(db.getSession("missing"), undefined);
  assert.equal(db.getSession("s")!.handoff_state, "pending");
});

test("createSession() and the lifecycle writes throw ReadonlyError on a read-only database", async (t) => {
  const path = tempDbPath();
  const first = await open(t, path);
  first.db.createSession("s", "cli");
  first.db.close();
  using db = await SessionDB.open({ path, readonly: true });
  assert.throws(() => db.createSession("t", "cli"), ReadonlyError);
  assert.throws(() => db.ensureSession("t"), ReadonlyError);
  assert.throws(() => db.endSession("s", "x"), ReadonlyError);
  assert.throws(() => db.reopenSession("s"), ReadonlyError);
  assert.throws(() => db.updateSystemPrompt("s", "p"), ReadonlyError);
  assert.equal(db.getSession("s")!.ended_at, null);
});

test("a closed SessionDB throws SqliteError 'database is not open' on every runtime, reads and writes alike", async () => {
  const db = await SessionDB.open({ path: tempDbPath() });
  db.createSession("s1", "cli");
  db.close();
  for (const call of [() => db.getSession("s1"), () => db.createSession("s2", "cli")]) {
    assert.throws(call, (error) => error instanceof SqliteError && /not open/.test(error.message));
  }
});
