/**
 * Bad input to every method of the PostgreSQL store is refused as the SQLite
 * store refuses it: the same class of error and the same message, naming
 * the value (tests/api_bad_input_test.ts holds the SQLite side); and input
 * the SQLite store accepts is accepted. Both stores start from the same
 * rows and take the same calls in order, so what an accepted call writes
 * stays the same on both.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { tempDbPath, tempDir } from "../_helpers.ts";
import { openPgStore, PG_SKIP } from "./_pg.ts";

// deno-lint-ignore no-explicit-any -- the wrong types are what is tested
type Loose = any;

/** A call of the store with bad input. */
type Call = (store: Loose) => unknown;

/** Values that are not a string (nor an absent optional). */
const NOT_TEXT: readonly [string, unknown][] = [
  ["undefined", undefined],
  ["an object", {}],
  ["an array", ["s1"]],
  ["a boolean", true],
  ["a symbol", Symbol("s1")],
  ["a bigint", 5n],
  ["a function", () => "s1"],
];

/** Values that are not a finite number (or not a count). */
const NOT_COUNT: readonly [string, unknown][] = [
  ["text", "5"],
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["-1", -1],
  ["1.5", 1.5],
  ["an object", {}],
  ["a bigint", 5n],
  ["null", null],
  ["2^53", 2 ** 53],
];

/** Option bags that are not one. */
const NOT_OPTIONS: readonly [string, unknown][] = [
  ["text", "x"],
  ["a number", 5],
  ["an array", []],
  ["a boolean", true],
];

/** Messages that are not one. */
const NOT_MESSAGE: readonly [string, unknown][] = [
  ["null", null],
  ["text", "hi"],
  ["no role", { content: "x" }],
  ["a number role", { role: 5, content: "x" }],
  ["an object content", { role: "user", content: { a: 1 } }],
  ["a number content", { role: "user", content: 5 }],
  ["a boolean content", { role: "user", content: true }],
  ["text tool calls", { role: "assistant", toolCalls: "call" }],
  ["a text token count", { role: "user", content: "x", tokenCount: "7" }],
  ["a NaN token count", { role: "user", content: "x", tokenCount: NaN }],
  ["an object tool name", { role: "tool", toolName: {} }],
  ["an array reasoning", { role: "assistant", reasoning: ["r"] }],
  [
    "a cyclic tool call",
    (() => {
      const cycle: Loose = { role: "assistant" };
      cycle.toolCalls = [cycle];
      return cycle;
    })(),
  ],
];

/** Every call, by name. */
function calls(sessionsDir: string): [string, Call][] {
  const list: [string, Call][] = [];
  const add = (name: string, call: Call) => list.push([name, call]);
  const idMethods: [string, Call][] = [
    ["createSession", (s) => (id: unknown) => s.createSession(id, "cli")],
    ["ensureSession", (s) => (id: unknown) => s.ensureSession(id, "cli")],
    ["endSession", (s) => (id: unknown) => s.endSession(id, "x")],
    ["reopenSession", (s) => (id: unknown) => s.reopenSession(id)],
    ["updateSystemPrompt", (s) => (id: unknown) => s.updateSystemPrompt(id, "p")],
    ["getSession", (s) => (id: unknown) => s.getSession(id)],
    ["updateTokenCounts", (s) => (id: unknown) => s.updateTokenCounts(id, { inputTokens: 1 })],
    ["appendMessage", (s) => (id: unknown) => s.appendMessage(id, { role: "user", content: "x" })],
    ["appendMessages", (s) => (id: unknown) => s.appendMessages(id, [{ role: "user" }])],
    ["replaceMessages", (s) => (id: unknown) => s.replaceMessages(id, [{ role: "user" }])],
    ["clearMessages", (s) => (id: unknown) => s.clearMessages(id)],
    ["getMessages", (s) => (id: unknown) => s.getMessages(id)],
    ["countMessages", (s) => (id: unknown) => s.countMessages(id)],
    ["getMessagesAsConversation", (s) => (id: unknown) => s.getMessagesAsConversation(id)],
    ["messageCount", (s) => (id: unknown) => s.messageCount(id)],
    ["searchMessages", (s) => (id: unknown) => s.searchMessages(id)],
    ["countSearchHits", (s) => (id: unknown) => s.countSearchHits(id, {}, 5)],
    ["resolveSessionId", (s) => (id: unknown) => s.resolveSessionId(id)],
    ["sessionIdsWithPrefix", (s) => (id: unknown) => s.sessionIdsWithPrefix(id)],
    ["setSessionTitle", (s) => (id: unknown) => s.setSessionTitle(id, "t")],
    ["getSessionTitle", (s) => (id: unknown) => s.getSessionTitle(id)],
    ["getSessionByTitle", (s) => (id: unknown) => s.getSessionByTitle(id)],
    ["resolveSessionByTitle", (s) => (id: unknown) => s.resolveSessionByTitle(id)],
    ["getNextTitleInLineage", (s) => (id: unknown) => s.getNextTitleInLineage(id)],
    ["getCompressionTip", (s) => (id: unknown) => s.getCompressionTip(id)],
    ["resolveResumeSessionId", (s) => (id: unknown) => s.resolveResumeSessionId(id)],
    ["getAncestors", (s) => (id: unknown) => s.getAncestors(id)],
    ["getDescendants", (s) => (id: unknown) => s.getDescendants(id)],
    ["exportSession", (s) => (id: unknown) => s.exportSession(id)],
    ["deleteSession", (s) => (id: unknown) => s.deleteSession(id)],
    ["getMeta", (s) => (id: unknown) => s.getMeta(id)],
    ["setMeta", (s) => (id: unknown) => s.setMeta(id, "v")],
  ];
  for (const [method, bind] of idMethods) {
    for (const [kind, value] of NOT_TEXT) {
      add(`${method}(${kind})`, (s) => (bind(s) as (id: unknown) => unknown)(value));
    }
  }
  // A second argument that is not text.
  for (const [kind, value] of NOT_TEXT) {
    if (value === undefined) continue;
    add(`createSession(source ${kind})`, (s) => s.createSession("c", value));
    add(`endSession(reason ${kind})`, (s) => s.endSession("s1", value));
    add(`updateSystemPrompt(${kind})`, (s) => s.updateSystemPrompt("s1", value));
    add(`setSessionTitle(${kind})`, (s) => s.setSessionTitle("s1", value));
    add(`setMeta(value ${kind})`, (s) => s.setMeta("k", value));
    for (const field of ["model", "systemPrompt", "userId", "parentSessionId"]) {
      add(
        `createSession(${field} ${kind})`,
        (s) => s.createSession("c", "cli", { [field]: value }),
      );
    }
    add(`ensureSession(model ${kind})`, (s) => s.ensureSession("e", "cli", { model: value }));
    for (
      const field of ["model", "costStatus", "costSource", "pricingVersion", "billingProvider"]
    ) {
      add(
        `updateTokenCounts(${field} ${kind})`,
        (s) => s.updateTokenCounts("s1", { [field]: value }),
      );
    }
  }
  // Titles the SQLite store refuses for what they hold.
  for (const title of ["x".repeat(101), "a\nb", "\u0000", "  "]) {
    add(
      `setSessionTitle(${JSON.stringify(title.slice(0, 8))})`,
      (s) => s.setSessionTitle("s1", title),
    );
  }
  // Numbers.
  for (const [kind, value] of NOT_COUNT) {
    for (
      const field of ["inputTokens", "outputTokens", "cacheReadTokens", "estimatedCostUsd"]
    ) {
      add(
        `updateTokenCounts(${field} ${kind})`,
        (s) => s.updateTokenCounts("s1", { [field]: value }),
      );
    }
    for (const field of ["afterId", "beforeId", "fromId"]) {
      add(`getMessages(${field} ${kind})`, (s) => s.getMessages("s1", { [field]: value }));
      add(`countMessages(${field} ${kind})`, (s) => s.countMessages("s1", { [field]: value }));
    }
    for (const field of ["limit", "offset", "since", "until"]) {
      add(`searchMessages(${field} ${kind})`, (s) => s.searchMessages("hello", { [field]: value }));
    }
    add(`countSearchHits(upTo ${kind})`, (s) => s.countSearchHits("hello", {}, value));
    for (const field of ["limit", "offset", "startedAfter", "startedBefore"]) {
      add(`listSessionsRich(${field} ${kind})`, (s) => s.listSessionsRich({ [field]: value }));
      add(`listedSessionCount(${field} ${kind})`, (s) => s.listedSessionCount({ [field]: value }));
    }
    for (const field of ["limit", "offset"]) {
      add(`searchSessions(${field} ${kind})`, (s) => s.searchSessions({ [field]: value }));
    }
    add(
      `sessionIdsWithPrefix(limit ${kind})`,
      (s) => s.sessionIdsWithPrefix("s", { limit: value }),
    );
    for (const field of ["startedAfter", "startedBefore"]) {
      add(`exportAll(${field} ${kind})`, (s) => s.exportAll({ [field]: value }));
    }
    add(`pruneSessions(olderThanDays ${kind})`, (s) => s.pruneSessions({ olderThanDays: value }));
    add(
      `pruneCandidates(olderThanDays ${kind})`,
      (s) => s.pruneCandidates({ olderThanDays: value }),
    );
    for (const field of ["retentionDays", "minIntervalHours"]) {
      add(
        `maybeAutoPruneAndVacuum(${field} ${kind})`,
        (s) => s.maybeAutoPruneAndVacuum({ [field]: value, vacuum: false }),
      );
    }
    add(`topSessionsByTokens(${kind})`, (s) => s.topSessionsByTokens(value));
    for (const field of ["since", "until"]) {
      add(`usageReport(${field} ${kind})`, (s) => s.usageReport({ [field]: value }));
    }
  }
  // Filters of the wrong type.
  for (const [kind, value] of [["an array", ["cli"]], ["an object", {}], ["a number", 5]]) {
    add(`listSessionsRich(source ${kind})`, (s) => s.listSessionsRich({ source: value }));
    add(
      `listSessionsRich(excludeSources ${kind})`,
      (s) => s.listSessionsRich({ excludeSources: [value] }),
    );
    add(`listSessionsRich(hasChildren ${kind})`, (s) => s.listSessionsRich({ hasChildren: value }));
    add(`listedSessionCount(source ${kind})`, (s) => s.listedSessionCount({ source: value }));
    add(`searchSessions(source ${kind})`, (s) => s.searchSessions({ source: value }));
    add(`sessionCount(source ${kind})`, (s) => s.sessionCount({ source: value }));
    add(
      `searchMessages(sessionId ${kind})`,
      (s) => s.searchMessages("hello", { sessionId: value }),
    );
    for (const field of ["sourceFilter", "excludeSources", "roleFilter"]) {
      add(`searchMessages(${field} ${kind})`, (s) => s.searchMessages("hello", { [field]: value }));
      add(
        `searchMessages(${field} [${kind}])`,
        (s) => s.searchMessages("hello", { [field]: [value] }),
      );
    }
    add(`searchMessages(sort ${kind})`, (s) => s.searchMessages("hello", { sort: value }));
    add(
      `searchMessages(includeInactive ${kind})`,
      (s) => s.searchMessages("hello", { includeInactive: value }),
    );
    add(
      `getMessages(includeInactive ${kind})`,
      (s) => s.getMessages("s1", { includeInactive: value }),
    );
    add(`exportAll(source ${kind})`, (s) => s.exportAll({ source: value }));
    add(`iterateExport(source ${kind})`, async (s) => {
      for await (const _ of s.iterateExport({ source: value })) { /* drained */ }
    });
    add(`pruneSessions(source ${kind})`, (s) => s.pruneSessions({ source: value }));
    add(`pruneCandidates(source ${kind})`, (s) => s.pruneCandidates({ source: value }));
    add(`pruneCandidates(ghosts ${kind})`, (s) => s.pruneCandidates({ ghosts: value }));
    add(`usageReport(source ${kind})`, (s) => s.usageReport({ source: value }));
    add(`usageReport(by ${kind})`, (s) => s.usageReport({ by: value }));
    add(`usageReport(timeZone ${kind})`, (s) => s.usageReport({ timeZone: value }));
    add(
      `deleteSession(sessionsDir ${kind})`,
      (s) => s.deleteSession("nobody", { sessionsDir: value }),
    );
    add(
      `pruneEmptyGhostSessions(sessionsDir ${kind})`,
      (s) => s.pruneEmptyGhostSessions({ sessionsDir: value }),
    );
    add(
      `maybeAutoPruneAndVacuum(vacuum ${kind})`,
      (s) => s.maybeAutoPruneAndVacuum({ vacuum: value }),
    );
    add(
      `importSession(replace ${kind})`,
      (s) => s.importSession({ id: "imp", source: "cli" }, { replace: value }),
    );
  }
  add("usageReport(by unknown)", (s) => s.usageReport({ by: "fortnight" }));
  add("usageReport(timeZone unknown)", (s) => s.usageReport({ timeZone: "Mars/Base" }));
  add("searchMessages(sort unknown)", (s) => s.searchMessages("hello", { sort: "random" }));
  // Option bags that are not one.
  for (const [kind, value] of NOT_OPTIONS) {
    add(`createSession(options ${kind})`, (s) => s.createSession("o", "cli", value));
    add(`getMessages(options ${kind})`, (s) => s.getMessages("s1", value));
    add(`searchMessages(options ${kind})`, (s) => s.searchMessages("hello", value));
    add(`listSessionsRich(options ${kind})`, (s) => s.listSessionsRich(value));
    add(`sessionCount(options ${kind})`, (s) => s.sessionCount(value));
    add(`exportAll(options ${kind})`, (s) => s.exportAll(value));
    add(`pruneSessions(options ${kind})`, (s) => s.pruneSessions(value));
    add(`updateTokenCounts(options ${kind})`, (s) => s.updateTokenCounts("s1", value));
    add(`usageReport(options ${kind})`, (s) => s.usageReport(value));
    add(
      `importSession(options ${kind})`,
      (s) => s.importSession({ id: "imp", source: "cli" }, value),
    );
  }
  // Messages.
  for (const [kind, value] of NOT_MESSAGE) {
    add(`appendMessage(${kind})`, (s) => s.appendMessage("s1", value));
    add(`appendMessages([${kind}])`, (s) => s.appendMessages("s1", [{ role: "user" }, value]));
    add(`replaceMessages([${kind}])`, (s) => s.replaceMessages("s2", [value]));
  }
  for (const [kind, value] of [["null", null], ["text", "x"], ["an object", {}], ["a number", 5]]) {
    add(`appendMessages(${kind})`, (s) => s.appendMessages("s1", value));
    add(`replaceMessages(${kind})`, (s) => s.replaceMessages("s2", value));
    add(`restoreParentLinks(${kind})`, (s) => s.restoreParentLinks(value));
    add(`importSession(${kind})`, (s) => s.importSession(value));
  }
  add("restoreParentLinks([{}])", (s) => s.restoreParentLinks([{}]));
  add("restoreParentLinks([{ id: 5 }])", (s) => s.restoreParentLinks([{ id: 5, parentId: "s1" }]));
  add("importSession({ id: 5 })", (s) => s.importSession({ id: 5, source: "cli" }));
  const record = (id: string, fields: Record<string, unknown>) => ({
    id,
    source: "cli",
    ...fields,
  });
  for (
    const [kind, fields] of [
      ["messages text", { messages: "x" }],
      ["messages [5]", { messages: [5] }],
      ["a message without role", { messages: [{ content: "x" }] }],
      ["a message of a number id", { messages: [{ id: "x", role: "user" }] }],
      ["title 5", { title: 5 }],
      ["a title too long", { title: "t".repeat(101) }],
      ["model {}", { model: {} }],
      ["input_tokens text", { input_tokens: "many" }],
      ["ended_at text", { ended_at: "later" }],
      ["parent_session_id 5", { parent_session_id: 5 }],
    ] as [string, Record<string, unknown>][]
  ) {
    add(`importSession(${kind})`, (s) => s.importSession(record(`imp-${kind}`, fields)));
  }
  add(
    "importSession({ id, started_at: 'x' })",
    (s) => s.importSession({ id: "imp4", source: "cli", started_at: "x" }),
  );
  add("deleteSession(sessionsDir ok)", (s) => s.deleteSession("nobody", { sessionsDir }));
  return list;
}

/** Calls refused for what the store holds (or not): missing sessions, taken titles, cycles. */
const STATE_CALLS: readonly [string, Call][] = [
  ["createSession of a taken id", (s) => s.createSession("s1", "cli")],
  [
    "createSession with a missing parent",
    (s) => s.createSession("c", "cli", { parentSessionId: "nope" }),
  ],
  ["appendMessage to a missing session", (s) => s.appendMessage("nope", { role: "user" })],
  ["appendMessages to a missing session", (s) => s.appendMessages("nope", [{ role: "user" }])],
  ["replaceMessages of a missing session", (s) => s.replaceMessages("nope", [{ role: "user" }])],
  ["setSessionTitle taken", (s) => s.setSessionTitle("s2", "first")],
  ["setSessionTitle of a missing session", (s) => s.setSessionTitle("nope", "t")],
  ["endSession of a missing session", (s) => s.endSession("nope", "x")],
  [
    "updateTokenCounts of a missing session",
    (s) => s.updateTokenCounts("nope", { inputTokens: 1 }),
  ],
  ["getCompressionTip of a missing session", (s) => s.getCompressionTip("nope")],
  [
    "importSession of a taken id",
    (s) => s.importSession({ id: "s1", source: "cli", started_at: 1 }),
  ],
  [
    "importSession with a missing parent",
    (s) => s.importSession({ id: "i1", source: "cli", started_at: 1, parent_session_id: "nope" }),
  ],
  [
    "importSession of a taken title",
    (s) => s.importSession({ id: "i4", source: "cli", started_at: 1, title: "first" }),
  ],
  [
    "importSession of an empty id",
    (s) => s.importSession({ id: "", source: "cli", started_at: 1 }),
  ],
  [
    "restoreParentLinks of a missing session",
    (s) => s.restoreParentLinks([{ id: "nope", parentId: "s1" }]),
  ],
  ["restoreParentLinks into a cycle", (s) => s.restoreParentLinks([{ id: "s1", parentId: "s2" }])],
  ["ensureSession of another source", (s) => s.ensureSession("s1", "telegram")],
  [
    "usageReport in an unknown time zone",
    (s) => s.usageReport({ by: "day", timeZone: "Nope/Zone" }),
  ],
];

/** What a call did: its class and message when it threw, else that it answered. */
async function outcome(store: SessionStore, call: Call, target: string): Promise<string> {
  try {
    await call(store);
    return "answered";
  } catch (error) {
    const name = error instanceof TypeError || error instanceof RangeError
      ? error.constructor.name
      : (error as Error)?.constructor?.name === "SqliteError"
      ? "StorageError"
      : (error as Error)?.constructor?.name;
    return `${name}: ${String((error as Error)?.message).replaceAll(target, "<target>")}`;
  }
}

describe("bad input to the PostgreSQL store", { skip: PG_SKIP }, () => {
  let sqlite: SessionStore;
  let pg: SessionStore;
  before(async () => {
    sqlite = await openStore(tempDbPath());
    pg = await openPgStore();
    for (const store of [sqlite, pg]) {
      await store.createSession("s1", "cli", { model: "m" });
      await store.appendMessage("s1", { role: "user", content: "hello docker" });
      await store.createSession("s2", "cli", { parentSessionId: "s1" });
      await store.setSessionTitle("s1", "first");
      await store.setMeta("k", "v");
    }
  });
  after(async () => {
    await sqlite?.close();
    await pg?.close();
  });

  test("each call is refused (or answered) as the SQLite store does, with its message", {
    timeout: 120_000,
  }, async () => {
    const differences: string[] = [];
    for (const [name, call] of calls(tempDir())) {
      const want = await outcome(sqlite, call, sqlite.target);
      const got = await outcome(pg, call, pg.target);
      if (got !== want) differences.push(`${name}\n  SQLite:     ${want}\n  PostgreSQL: ${got}`);
    }
    assert.equal(differences.join("\n"), "");
  });

  test("calls refused for what the store holds are refused alike", async () => {
    const differences: string[] = [];
    for (const [name, call] of STATE_CALLS) {
      const want = await outcome(sqlite, call, sqlite.target);
      const got = await outcome(pg, call, pg.target);
      if (got !== want) differences.push(`${name}\n  SQLite:     ${want}\n  PostgreSQL: ${got}`);
    }
    assert.equal(differences.join("\n"), "");
  });
});
