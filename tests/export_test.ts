import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture, rawOpen, tempDbPath } from "./_helpers.ts";
import { runtimeName } from "../lib/sqlite/driver/load.ts";

/** Opens a store on `path` with a settable clock; it is closed when test `t` ends. */
async function open(
  t: TestContext,
  path = tempDbPath(),
): Promise<{ db: SessionDB; at: number[]; path: string }> {
  const at = [1000];
  const db = await SessionDB.open({ path, clock: () => at[0] });
  t.after(() => db.close());
  return { db, at, path };
}

/** Sessions whose order by (last activity, start, id) differs from their order by start. */
async function sample(t: TestContext): Promise<{ db: SessionDB; at: number[]; path: string }> {
  const opened = await open(t);
  const { db, at } = opened;
  at[0] = 1000;
  db.createSession("old_busy", "cli");
  at[0] = 1001;
  db.createSession("quiet", "telegram");
  at[0] = 1002;
  db.createSession("child", "cli", { parentSessionId: "old_busy" });
  at[0] = 1002;
  db.createSession("twin", "cli");
  at[0] = 1500;
  db.appendMessage("old_busy", { role: "user", content: "late activity" });
  at[0] = 1100;
  db.appendMessages("child", [{ role: "user", content: "a" }, { role: "assistant", content: "b" }]);
  return opened;
}

test("exportSession() returns every session column and the messages", async (t) => {
  const { db } = await sample(t);
  const exported = db.exportSession("child")!;
  const { messages, ...session } = exported;
  assert.deepEqual(session, db.getSession("child"));
  assert.deepEqual(messages, db.getMessages("child"));
  assert.equal(messages.length, 2);
  assert.equal(db.exportSession("missing"), undefined);
});

test("exportAll() orders by last activity, then start, then id, children included", async (t) => {
  const { db } = await sample(t);
  const all = db.exportAll();
  assert.deepEqual(all.map((s) => [s.id, s.last_active]), [
    ["old_busy", 1500],
    ["child", 1100 + 1e-6],
    ["twin", 1002],
    ["quiet", 1001],
  ]);
  assert.deepEqual(all[1].messages.map((m) => m.content), ["a", "b"]);
  assert.deepEqual(Object.keys(all[0]).slice(-2), ["last_active", "messages"]);
});

test("exportAll() filters by source; an empty source means every source", async (t) => {
  const { db } = await sample(t);
  assert.deepEqual(db.exportAll({ source: "telegram" }).map((s) => s.id), ["quiet"]);
  assert.deepEqual(db.exportAll({ source: "discord" }), []);
  assert.equal(db.exportAll({ source: "" }).length, 4);
  assert.equal(db.exportAll({ source: null }).length, 4);
});

test("iterateExport() yields what exportAll() returns, in the same order, lazily", async (t) => {
  const { db } = await open(t, copyFixture("hermes-v11.db"));
  const all = db.exportAll();
  assert.equal(all.length, 42);
  const iterator = db.iterateExport();
  const first = iterator.next();
  assert.equal(first.done, false);
  assert.deepEqual(first.value, all[0]);
  assert.deepEqual([first.value, ...iterator], all);
  assert.deepEqual([...db.iterateExport({ source: "cron" })], db.exportAll({ source: "cron" }));
});

test("iterateExport() stopped early releases its snapshot so the next write succeeds", async (t) => {
  const { db, path } = await sample(t);
  db.close();
  using reopened = await SessionDB.open({
    path,
    clock: () => 2000,
    retry: { maxAttempts: 2, sleep: () => {}, busyTimeoutMs: 0 },
  });
  for (const session of reopened.iterateExport()) {
    assert.equal(session.id, "old_busy");
    break;
  }
  using other = await rawOpen(path);
  other.exec("INSERT INTO sessions (id, source, started_at) VALUES ('from_elsewhere', 'cli', 1)");
  other.close();
  reopened.appendMessage("quiet", { role: "user", content: "after the export" });
  assert.equal(reopened.messageCount("quiet"), 1);
});

test("iterateExport() runs alongside another export without disturbing it", async (t) => {
  const { db } = await sample(t);
  const a = db.iterateExport();
  const b = db.iterateExport();
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    ids.push(a.next().value!.id, b.next().value!.id);
  }
  assert.deepEqual(ids, [
    "old_busy",
    "old_busy",
    "child",
    "child",
    "twin",
    "twin",
    "quiet",
    "quiet",
  ]);
  assert.equal(a.next().done, true);
  assert.equal(b.next().done, true);
});

test("iterateExport() sees one snapshot even when another process writes meanwhile", async (t) => {
  const { db, path } = await sample(t);
  const iterator = db.iterateExport();
  assert.equal(iterator.next().value!.id, "old_busy");
  using other = await rawOpen(path);
  other.exec("INSERT INTO sessions (id, source, started_at) VALUES ('newcomer', 'cli', 5000)");
  other.close();
  assert.deepEqual([...iterator].map((s) => s.id), ["child", "twin", "quiet"]);
  assert.equal(db.exportAll().length, 5);
});

test("iterateExport() gives each session whole, its row with its messages, while another process writes", async (t) => {
  const { db, path } = await sample(t);
  const iterator = db.iterateExport();
  assert.equal(iterator.next().value!.id, "old_busy");
  const other = await SessionDB.open({ path });
  other.appendMessage("child", { role: "user", content: "written meanwhile" });
  other.deleteSession("quiet");
  other.close();
  const rest = [...iterator];
  // Each session as one snapshot saw it: its counters are its messages (on Deno and Node the
  // list was read before the writes, each session after them; on Bun one snapshot holds all).
  for (const session of rest) {
    assert.equal(session.message_count, session.messages.length, session.id);
  }
  const expected = runtimeName() === "bun" ? ["child", "twin", "quiet"] : ["child", "twin"];
  assert.deepEqual(rest.map((s) => s.id), expected);
});
