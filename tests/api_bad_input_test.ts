// The public API fed what an agent builder may pass by mistake (undefined, an object, an array
// where an id or a filter goes; null where options go; a number where text goes), on both the
// synchronous SessionDB and the asynchronous store of openStore(). A refused call throws an
// error naming the value and leaves every table exactly as it was; an accepted one stores what
// Python's hermes_state.py would store, the same on every runtime.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { rawOpen, tempDbPath, tempDir } from "./_helpers.ts";

// deno-lint-ignore no-explicit-any -- the wrong types are what is tested
type Loose = any;

/** Every row of every table of the file (FTS copies included), as text. */
async function tableRows(path: string): Promise<string> {
  using raw = await rawOpen(path, true);
  const tables = raw.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' " +
      "AND name NOT LIKE 'messages_fts%_%' ORDER BY name",
  ).all().map((row) => String(row.name));
  const dump: Record<string, unknown> = {};
  for (const table of tables) {
    dump[table] = raw.prepare(`SELECT rowid AS _rowid, * FROM "${table}" ORDER BY rowid`).all();
  }
  return JSON.stringify(dump, (_key, value) => typeof value === "bigint" ? `${value}n` : value);
}

async function seeded(): Promise<SessionDB> {
  let tick = 1_700_000_000;
  const db = await SessionDB.open({ path: tempDbPath(), clock: () => tick++ });
  db.createSession("s1", "cli", { model: "m", systemPrompt: "prompt" });
  db.appendMessage("s1", { role: "user", content: "hello docker" });
  db.createSession("s2", "cli", { parentSessionId: "s1" });
  db.endSession("s2", "user_exit");
  db.setSessionTitle("s1", "first");
  db.setMeta("k", "v");
  return db;
}

/** Values that are not a string (nor an absent optional). */
const NOT_TEXT: readonly [string, unknown][] = [
  ["undefined", undefined],
  ["an object", {}],
  ["an array", ["s1"]],
  ["a boolean", true],
  ["a symbol", Symbol("s1")],
];

/** A call per method that takes a session id (or a key, a title, a prefix) as its first argument. */
const ID_CALLS: readonly [string, (db: Loose, id: unknown) => unknown][] = [
  ["endSession", (db, id) => db.endSession(id, "x")],
  ["reopenSession", (db, id) => db.reopenSession(id)],
  ["updateSystemPrompt", (db, id) => db.updateSystemPrompt(id, "p")],
  ["getSession", (db, id) => db.getSession(id)],
  ["appendMessage", (db, id) => db.appendMessage(id, { role: "user", content: "x" })],
  ["appendMessages", (db, id) => db.appendMessages(id, [{ role: "user", content: "x" }])],
  ["replaceMessages", (db, id) => db.replaceMessages(id, [{ role: "user", content: "x" }])],
  ["clearMessages", (db, id) => db.clearMessages(id)],
  ["getMessages", (db, id) => db.getMessages(id)],
  ["getMessagesAsConversation", (db, id) => db.getMessagesAsConversation(id)],
  ["setSessionTitle", (db, id) => db.setSessionTitle(id, "t")],
  ["getSessionTitle", (db, id) => db.getSessionTitle(id)],
  ["getSessionByTitle", (db, id) => db.getSessionByTitle(id)],
  ["resolveSessionByTitle", (db, id) => db.resolveSessionByTitle(id)],
  ["getNextTitleInLineage", (db, id) => db.getNextTitleInLineage(id)],
  ["resolveSessionId", (db, id) => db.resolveSessionId(id)],
  ["sessionIdsWithPrefix", (db, id) => db.sessionIdsWithPrefix(id)],
  ["getCompressionTip", (db, id) => db.getCompressionTip(id)],
  ["resolveResumeSessionId", (db, id) => db.resolveResumeSessionId(id)],
  ["getAncestors", (db, id) => db.getAncestors(id)],
  ["getDescendants", (db, id) => db.getDescendants(id)],
  ["exportSession", (db, id) => db.exportSession(id)],
  ["deleteSession", (db, id) => db.deleteSession(id)],
  ["getMeta", (db, id) => db.getMeta(id)],
];

test("SessionDB: an id that is not a string is a TypeError naming it, and nothing changes", async () => {
  using db = await seeded();
  const before = await tableRows(db.path);
  for (const [method, call] of ID_CALLS) {
    for (const [kind, value] of NOT_TEXT) {
      assert.throws(
        () => call(db, value),
        (error) =>
          error instanceof TypeError &&
          /^Cannot [a-z ]+: [A-Za-z]+ must be a string: current value is /
            .test(error.message),
        `${method}(${kind})`,
      );
    }
  }
  assert.equal(await tableRows(db.path), before);
});

test("openStore(): an id that is not a string rejects with a TypeError naming it, and nothing changes", async () => {
  await using store = await openStore(tempDbPath());
  await store.createSession("s1", "cli");
  await store.appendMessage("s1", { role: "user", content: "hello docker" });
  await store.setMeta("k", "v");
  const before = await tableRows(store.target);
  for (const [method, call] of ID_CALLS) {
    for (const [kind, value] of NOT_TEXT) {
      await assert.rejects(
        async () => await call(store, value),
        (error) =>
          error instanceof TypeError && /must be a string: current value is /.test(error.message),
        `${method}(${kind})`,
      );
    }
  }
  assert.equal(await tableRows(store.target), before);
});

test("an object given as a text value is refused, not bound as named parameters (a silent no-op)", async () => {
  using db = await seeded();
  const before = await tableRows(db.path);
  assert.throws(
    () => db.updateSystemPrompt("s1", {} as Loose),
    /^TypeError: Cannot update system prompt: prompt must be a string: current value is \{\}$/,
  );
  assert.throws(
    () => db.endSession("s1", ["x"] as Loose),
    /endReason must be a string: current value is \["x"\]/,
  );
  assert.throws(
    () => db.setMeta("k", {} as Loose),
    /Cannot set meta: value must be a string: current value is \{\}/,
  );
  for (const field of ["model", "systemPrompt", "userId"]) {
    assert.throws(
      () => db.createSession("c", "cli", { [field]: { a: 1 } }),
      new RegExp(`Cannot create session: ${field} must be a string: current value is \\{"a":1\\}`),
    );
  }
  assert.throws(
    () => db.createSession("c", "cli", { parentSessionId: ["s1"] as Loose }),
    /Cannot create session: parentSessionId must be a string: current value is \["s1"\]/,
  );
  assert.equal(await tableRows(db.path), before);
  assert.equal(db.getSession("s1")?.system_prompt, "prompt");
});

test("a number where text goes is stored as Python binds it: 5, not 5.0", async () => {
  using db = await seeded();
  db.createSession("n", "cli", {
    model: 5 as Loose,
    systemPrompt: 1.5 as Loose,
    userId: 42 as Loose,
  });
  db.endSession("n", 7 as Loose);
  db.updateSystemPrompt("s1", 3 as Loose);
  db.setMeta("count", 12 as Loose);
  const row = db.getSession("n")!;
  assert.deepEqual([row.model, row.system_prompt, row.user_id, row.end_reason], [
    "5",
    "1.5",
    "42",
    "7",
  ]);
  assert.equal(db.getSession("s1")?.system_prompt, "3");
  assert.equal(db.getMeta("count"), "12");
});

test("importSession() stores a whole number where text goes as Python does, the same on every runtime", async () => {
  // Deno's and Node's drivers bound it as a REAL: "123456789.0" there, "123456789" on Bun.
  using db = await seeded();
  db.importSession({
    id: "imp",
    source: "cli",
    started_at: 1_700_000_500,
    user_id: 123456789,
    model: 4,
    title: 7,
    estimated_cost_usd: 2,
    messages: [{
      role: "tool",
      content: "x",
      timestamp: 1_700_000_501,
      tool_call_id: 42,
      tool_name: 9,
    }],
  });
  const row = db.getSession("imp")!;
  assert.deepEqual([row.user_id, row.model, row.title, row.estimated_cost_usd], [
    "123456789",
    "4",
    "7",
    2,
  ]);
  const [message] = db.getMessages("imp");
  assert.deepEqual([message.tool_call_id, message.tool_name], ["42", "9"]);
  using raw = await rawOpen(db.path, true);
  assert.deepEqual(
    raw.prepare(
      "SELECT typeof(estimated_cost_usd) AS t, typeof(started_at) AS s FROM sessions WHERE id = 'imp'",
    )
      .get(),
    { t: "real", s: "real" },
  );
});

test("a yes-or-no option given another value is a TypeError naming it, and nothing changes", async () => {
  // `absolute: "false"` set the token counts (wiping the totals); `replace: "false"` replaced.
  using db = await seeded();
  db.updateTokenCounts("s1", { inputTokens: 1000, outputTokens: 200 });
  const before = await tableRows(db.path);
  const record = { ...db.exportSession("s1")!, title: null };
  const cases: [string, () => unknown, RegExp][] = [
    [
      "absolute",
      () => db.updateTokenCounts("s1", { inputTokens: 10, absolute: "false" as Loose }),
      /^Cannot update token counts: absolute must be true or false: current value is "false"$/,
    ],
    [
      "replace",
      () => db.importSession(record, { replace: "false" as Loose }),
      /^Cannot import session: replace must be true or false: current value is "false"$/,
    ],
    [
      "includeArchived",
      () => db.listSessionsRich({ includeArchived: 1 as Loose }),
      /includeArchived must be true or false: current value is 1/,
    ],
    [
      "includeInactive",
      () => db.getMessages("s1", { includeInactive: "yes" as Loose }),
      /includeInactive must be true or false: current value is "yes"/,
    ],
  ];
  for (const [name, call, message] of cases) {
    assert.throws(call, (error) => error instanceof TypeError && message.test(error.message), name);
  }
  // Never throws, as Python's: the error is in its answer.
  const auto = db.maybeAutoPruneAndVacuum({ retentionDays: 1, vacuum: "no" as Loose });
  assert.match(auto.error ?? "", /vacuum must be true or false: current value is "no"/);
  assert.equal(await tableRows(db.path), before);
  await using store = await openStore(db.path);
  await assert.rejects(
    store.updateTokenCounts("s1", { inputTokens: 10, absolute: "false" as Loose }),
    /absolute must be true or false/,
  );
  assert.equal(await tableRows(db.path), before);
});

test("a number given as text is named in quotes, not as the number it looks like", async () => {
  // "olderThanDays must be a non-negative number: current value is 30" read as 30 refused.
  using db = await seeded();
  const cases: [() => unknown, RegExp][] = [
    [
      () => db.pruneSessions({ olderThanDays: "30" as Loose }),
      /olderThanDays must be a non-negative number: current value is "30"$/,
    ],
    [
      () => db.searchMessages("docker", { since: "5" as Loose }),
      /since must be a finite number of seconds: current value is "5"$/,
    ],
    [
      () => db.appendMessage("s1", { role: "user", tokenCount: "5" as Loose }),
      /tokenCount must be a number: current value is "5"$/,
    ],
  ];
  for (const [call, message] of cases) assert.throws(call, message);
});

test("a session is never made its own parent (it would leave every listing), on both stores", async () => {
  using db = await seeded();
  const before = await tableRows(db.path);
  assert.throws(
    () => db.createSession("c", "cli", { parentSessionId: "c" }),
    /^TypeError: Cannot create session: parentSessionId names the session itself: current value is "c"$/,
  );
  assert.throws(
    () => db.restoreParentLinks([{ id: "s2", parentId: "s1" }, { id: "s1", parentId: "s1" }]),
    /^TypeError: Cannot restore parent links: link 1 makes session "s1" its own parent$/,
  );
  assert.equal(await tableRows(db.path), before);
  await using store = await openStore(db.path);
  await assert.rejects(store.createSession("c", "cli", { parentSessionId: "c" }), TypeError);
  await assert.rejects(store.restoreParentLinks([{ id: "s1", parentId: "s1" }]), TypeError);
  assert.equal(await tableRows(db.path), before);
});

test("options of null read as the defaults, as deleteSession's already do", async () => {
  using db = await seeded();
  const before = await tableRows(db.path);
  assert.equal(db.searchMessages("docker", null as Loose).length, 1);
  assert.equal(db.listSessionsRich(null as Loose).length, 1);
  assert.equal(db.listedSessionCount(null as Loose), 1);
  assert.equal(db.searchSessions(null as Loose).length, 2);
  assert.equal(db.sessionCount(null as Loose), 2);
  assert.equal(db.exportAll(null as Loose).length, 2);
  assert.equal([...db.iterateExport(null as Loose)].length, 2);
  assert.equal(db.getMessages("s1", null as Loose).length, 1);
  assert.equal(db.getMessagesAsConversation("s1", null as Loose).length, 1);
  assert.deepEqual(db.sessionIdsWithPrefix("s", null as Loose).count, 2);
  assert.ok(Array.isArray(db.usageReport(null as Loose)));
  assert.ok(Array.isArray(db.pruneCandidates(null as Loose)));
  assert.equal(await tableRows(db.path), before);
  assert.equal(db.pruneSessions(null as Loose), 0);
  assert.equal(db.pruneEmptyGhostSessions(null as Loose), 0);
  db.createSession("o", "cli", null as Loose);
  db.ensureSession("e", "cli", null as Loose);
  assert.equal(db.getSession("o")?.source, "cli");
  assert.equal(db.getSession("e")?.source, "cli");
});

test("a filter of the wrong type is a TypeError naming it, not a driver error or a silent miss", async () => {
  using db = await seeded();
  const cases: [string, () => unknown, RegExp][] = [
    [
      "listSessionsRich source",
      () => db.listSessionsRich({ source: ["cli"] as Loose }),
      /list sessions: source must be a string: current value is \["cli"\]/,
    ],
    [
      "listSessionsRich excludeSources",
      () => db.listSessionsRich({ excludeSources: [5] as Loose }),
      /list sessions: excludeSources must be an array of strings: current value is \[5\]/,
    ],
    [
      "listedSessionCount source",
      () => db.listedSessionCount({ source: true as Loose }),
      /list sessions: source must be a string: current value is true/,
    ],
    [
      "searchSessions source",
      () => db.searchSessions({ source: {} as Loose }),
      /search sessions: source must be a string: current value is \{\}/,
    ],
    [
      "sessionCount source",
      () => db.sessionCount({ source: ["cli"] as Loose }),
      /count sessions: source must be a string/,
    ],
    [
      "searchMessages sessionId",
      () => db.searchMessages("docker", { sessionId: {} as Loose }),
      /search messages: sessionId must be a string: current value is \{\}/,
    ],
    [
      "searchMessages sourceFilter",
      () => db.searchMessages("docker", { sourceFilter: [5n] as Loose }),
      /search messages: sourceFilter must be an array of strings: current value is /,
    ],
    [
      "searchMessages roleFilter",
      () => db.searchMessages("docker", { roleFilter: "user" as Loose }),
      /search messages: roleFilter must be an array of strings: current value is "user"/,
    ],
    [
      "exportAll source",
      () => db.exportAll({ source: ["cli"] as Loose }),
      /export sessions: source must be a string/,
    ],
    [
      "iterateExport source",
      () => [...db.iterateExport({ source: true as Loose })],
      /export sessions: source must be a string/,
    ],
    [
      "messageCount",
      () => db.messageCount(["s1"] as Loose),
      /count messages: sessionId must be a string: current value is \["s1"\]/,
    ],
    [
      "pruneSessions source",
      () => db.pruneSessions({ source: {} as Loose }),
      /prune sessions: source must be a string/,
    ],
  ];
  const before = await tableRows(db.path);
  for (const [name, call, message] of cases) {
    assert.throws(call, (error) => error instanceof TypeError && message.test(error.message), name);
  }
  assert.equal(await tableRows(db.path), before);
});

test("a sessionsDir that is not a path is refused before the delete, which does not happen", async () => {
  using db = await seeded();
  const dir = join(tempDir(), "sessions");
  mkdirSync(dir);
  writeFileSync(join(dir, "s2.json"), "{}");
  const before = await tableRows(db.path);
  for (const sessionsDir of [5, {}, ["dir"]]) {
    assert.throws(
      () => db.deleteSession("s2", { sessionsDir: sessionsDir as Loose }),
      /Cannot delete session: sessionsDir must be a string: current value is /,
    );
    assert.throws(
      () => db.pruneSessions({ olderThanDays: 0, sessionsDir: sessionsDir as Loose }),
      /Cannot prune sessions: sessionsDir must be a string: current value is /,
    );
  }
  assert.equal(await tableRows(db.path), before);
  assert.equal(db.deleteSession("s2", { sessionsDir: dir }), true);
});

test("SessionDB: a method called after close() throws `database is not open`, cached statement or not", async () => {
  const db = await seeded();
  db.getSession("s1"); // its statement is cached now
  db.getMessages("s1");
  db.close();
  db.close(); // does nothing
  for (
    const call of [
      () => db.getSession("s1"),
      () => db.getMessages("s1"),
      () => db.appendMessage("s1", { role: "user", content: "x" }),
      () => [...db.iterateExport()],
    ]
  ) {
    assert.throws(
      call,
      (error) => error instanceof SqliteError && error.message === "database is not open",
    );
  }
});

test("openStore(): after close() every method rejects (none throws at the call), and a second close is fine", async () => {
  const store = await openStore(tempDbPath());
  await store.createSession("s1", "cli");
  await store.getSession("s1");
  await store.close();
  await store.close();
  for (
    const call of [
      () => store.getSession("s1"),
      () => store.pruneSessions(),
      () => store.pruneEmptyGhostSessions(),
    ]
  ) {
    let promise: Promise<unknown> | undefined;
    assert.doesNotThrow(() => {
      promise = call();
    });
    await assert.rejects(
      promise!,
      (error) => error instanceof SqliteError && /not open/.test(error.message),
    );
  }
});
