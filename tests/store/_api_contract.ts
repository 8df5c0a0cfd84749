/**
 * The library contract of {@linkcode SessionStore} as `lib/core/session_store.ts`
 * states it, held to by every engine (part of the conformance suite, see
 * `_conformance.ts`): an argument of the wrong type is a `TypeError` or a
 * `RangeError` naming it (never a driver's message, never a silent empty
 * answer), a read-only store refuses every write, a closed one every call
 * (`database is not open`), and null options read as no options. The
 * PostgreSQL engine answered a number given as an id with "not found",
 * a Symbol with "the connection failed", and a closed store with the
 * client's `CONNECTION_ENDED`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { ReadonlyError, StorageError } from "../../lib/core/errors.ts";

// deno-lint-ignore no-explicit-any -- the wrong types are what is tested
type Loose = any;

/** How the contract cases open stores (a subset of the conformance suite's factory). */
export interface ContractStores {
  /** A new, empty store, closed when the suite ends. */
  empty(): Promise<SessionStore>;
  /** The same data as `store`, opened again read-only, closed when the suite ends. */
  readonly(store: SessionStore): Promise<SessionStore>;
}

/** The methods that take a session id (or a title, a prefix, a key) first, and a valid rest. */
const BY_ID: [method: string, rest: unknown[]][] = [
  ["createSession", ["cli"]],
  ["ensureSession", []],
  ["endSession", ["done"]],
  ["reopenSession", []],
  ["updateSystemPrompt", ["prompt"]],
  ["getSession", []],
  ["updateTokenCounts", [{ inputTokens: 1 }]],
  ["appendMessage", [{ role: "user", content: "x" }]],
  ["appendMessages", [[{ role: "user", content: "x" }]]],
  ["replaceMessages", [[{ role: "user", content: "x" }]]],
  ["clearMessages", []],
  ["getMessages", []],
  ["countMessages", []],
  ["getMessagesAsConversation", []],
  ["resolveSessionId", []],
  ["sessionIdsWithPrefix", []],
  ["setSessionTitle", ["t"]],
  ["getSessionTitle", []],
  ["getSessionByTitle", []],
  ["resolveSessionByTitle", []],
  ["getNextTitleInLineage", []],
  ["getCompressionTip", []],
  ["resolveResumeSessionId", []],
  ["getAncestors", []],
  ["getDescendants", []],
  ["exportSession", []],
  ["deleteSession", []],
  ["getMeta", []],
  ["getModelUsage", []],
  ["setMeta", ["v"]],
];

/** Every method with arguments it takes, to call on a closed store. */
const EVERY_CALL: [method: string, args: unknown[]][] = [
  ...BY_ID.map(([method, rest]): [string, unknown[]] => [method, ["s", ...rest]]),
  ["messageCount", []],
  ["searchMessages", ["docker"]],
  // A query with nothing to search, and a count of none, never reach the database: closed all the same.
  ["searchMessages", ["***"]],
  ["countSearchHits", ["docker", {}, 10]],
  ["countSearchHits", ["***", {}, 10]],
  ["countSearchHits", ["docker", {}, 0]],
  ["listSessionsRich", []],
  ["searchSessions", []],
  ["sessionCount", []],
  ["listedSessionCount", []],
  ["exportAll", []],
  ["pruneSessions", []],
  ["pruneEmptyGhostSessions", []],
  ["vacuum", []],
  ["maybeAutoPruneAndVacuum", []],
  ["usageByModel", []],
  ["topSessionsByTokens", []],
  ["usageBySource", []],
  ["usageReport", []],
  ["dataVersion", []],
  ["inspect", []],
  ["pruneCandidates", []],
  ["importSession", [{ id: "i", source: "cli", started_at: 1, messages: [] }]],
  ["restoreParentLinks", [[]]],
];

/** Calls `method` of `store` by name. */
function call(store: SessionStore, method: string, args: unknown[]): Promise<unknown> {
  return (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]
    .apply(store, args);
}

/** An empty store holding a parent `p` and a child `child` whose link was deferred. */
async function withOrphan(stores: ContractStores): Promise<SessionStore> {
  const store = await stores.empty();
  await store.importSession({
    id: "child",
    source: "cli",
    started_at: 2,
    parent_session_id: "p",
    messages: [],
  });
  await store.importSession({ id: "p", source: "cli", started_at: 1, messages: [] });
  return store;
}

/**
 * Runs the library contract cases against the engine `stores` opens.
 *
 * @param name The engine, for test names.
 * @param stores Opens its stores.
 */
export function apiContract(name: string, stores: ContractStores): void {
  describe(`${name}: the library contract of SessionStore`, () => {
    test("an id, a title, a prefix or a key that is not a string is a TypeError naming it", async () => {
      const store = await stores.empty();
      await store.createSession("s", "cli");
      for (const [method, rest] of BY_ID) {
        const values: [unknown, string][] = [[5, "5"], [Symbol("x"), "Symbol\\(x\\)"], [
          [],
          "\\[\\]",
        ]];
        for (const [value, shown] of values) {
          await assert.rejects(
            call(store, method, [value, ...rest]),
            (error) =>
              error instanceof TypeError &&
              new RegExp(`^Cannot [a-z ]+: [A-Za-z]+ must be a string: current value is ${shown}$`)
                .test(error.message),
            `${method}(${shown})`,
          );
        }
      }
      assert.equal(await store.sessionCount(), 1);
      assert.equal(await store.messageCount("s"), 0);
    });

    test("a free-text value that is no text is a TypeError naming it, and nothing is written", async () => {
      const store = await stores.empty();
      await store.createSession("s", "cli");
      const named = (field: string, shown: string) => (error: unknown) =>
        error instanceof TypeError &&
        new RegExp(`${field} must be a string: current value is ${shown}$`).test(error.message);
      await assert.rejects(
        store.createSession("t", "cli", { model: {} as Loose }),
        named("model", "\\{\\}"),
      );
      await assert.rejects(
        store.createSession("t", "cli", { parentSessionId: 5 as Loose }),
        named("parentSessionId", "5"),
      );
      await assert.rejects(store.endSession("s", NaN as Loose), named("endReason", "NaN"));
      await assert.rejects(store.updateSystemPrompt("s", [1] as Loose), named("prompt", "\\[1\\]"));
      await assert.rejects(store.setMeta("k", true as Loose), named("value", "true"));
      assert.equal(await store.getSession("t"), undefined);
      assert.equal((await store.getSession("s"))?.end_reason, null);
      assert.equal(await store.getMeta("k"), undefined);
      // A number is stored as Python binds it: a whole one as its digits, every one of them.
      await store.createSession("n", "cli", { model: 1e21 as Loose });
      assert.equal((await store.getSession("n"))?.model, "1000000000000000000000");
    });

    test("a filter that is not a string or a list of strings is a TypeError naming it", async () => {
      const store = await stores.empty();
      const listing =
        /list sessions: excludeSources must be an array of strings: current value is 5$/;
      await assert.rejects(store.listSessionsRich({ excludeSources: 5 as Loose }), listing);
      await assert.rejects(store.listedSessionCount({ source: [] as Loose }), /source must be/);
      await assert.rejects(store.searchSessions({ source: 5 as Loose }), /source must be/);
      await assert.rejects(store.sessionCount({ source: {} as Loose }), /source must be/);
      await assert.rejects(store.messageCount(5 as Loose), /sessionId must be a string/);
      await assert.rejects(store.exportAll({ source: 5 as Loose }), /source must be a string/);
      await assert.rejects(store.iterateExport({ source: 5 as Loose }).next(), TypeError);
      await assert.rejects(store.pruneSessions({ source: 5 as Loose }), /source must be/);
      await assert.rejects(store.pruneCandidates({ source: 5 as Loose }), /source must be/);
      await assert.rejects(store.usageReport({ source: 5 as Loose }), /source must be/);
      for (const field of ["sourceFilter", "excludeSources", "roleFilter"]) {
        for (const value of ["cli", [5], 5]) {
          await assert.rejects(
            store.searchMessages("docker", { [field]: value } as Loose),
            (error) =>
              error instanceof TypeError &&
              error.message.startsWith(`Cannot search messages: ${field} must be an array`),
            `${field}: ${JSON.stringify(value)}`,
          );
          await assert.rejects(
            store.countSearchHits("docker", { [field]: value } as Loose, 10),
            (error) =>
              error instanceof TypeError &&
              error.message.startsWith(`Cannot search messages: ${field} must be an array`),
            `count, ${field}: ${JSON.stringify(value)}`,
          );
        }
      }
      await assert.rejects(
        store.searchMessages("docker", { sessionId: 5 as Loose }),
        /sessionId must be a string: current value is 5$/,
      );
      await assert.rejects(
        store.countSearchHits("docker", { sessionId: 5 as Loose }, 10),
        /search messages: sessionId must be a string: current value is 5$/,
      );
      await assert.rejects(store.deleteSession("s", { sessionsDir: 5 as Loose }), /sessionsDir/);
      // A list that is not one is named as JSON, not as "[object Object]".
      await assert.rejects(
        store.appendMessages("s", { role: "user" } as Loose),
        /append messages: messages must be an array: current value is \{"role":"user"\}$/,
      );
      await assert.rejects(
        store.replaceMessages("s", { role: "user" } as Loose),
        /replace messages: messages must be an array: current value is \{"role":"user"\}$/,
      );
    });

    test("a Symbol where a number goes is a RangeError naming it, not a failed conversion", async () => {
      const store = await stores.empty();
      const symbol = Symbol("x") as Loose;
      const named = (error: unknown) =>
        error instanceof RangeError && /current value is Symbol\(x\)$/.test(error.message);
      await assert.rejects(store.pruneSessions({ olderThanDays: symbol }), named);
      await assert.rejects(store.pruneCandidates({ olderThanDays: symbol }), named);
      await assert.rejects(store.listSessionsRich({ startedAfter: symbol }), named);
      await assert.rejects(store.searchMessages("docker", { since: symbol }), named);
      await assert.rejects(store.countSearchHits("docker", { until: symbol }, 10), named);
      await assert.rejects(store.countSearchHits("docker", {}, symbol), named);
    });

    test("countSearchHits() refuses a bound that is not a count, and a bad time, naming it", async () => {
      const store = await stores.empty();
      for (const upTo of [-1, 1.5, Number.NaN, "10", null, undefined]) {
        await assert.rejects(
          store.countSearchHits("docker", {}, upTo as Loose),
          (error) =>
            error instanceof RangeError &&
            error.message.startsWith(
              "Cannot count search hits: upTo must be a non-negative integer: current value is ",
            ),
          String(upTo),
        );
      }
      await assert.rejects(
        store.countSearchHits("docker", { since: Number.NaN }, 5),
        (error) =>
          error instanceof RangeError && /^Cannot search messages: since/.test(error.message),
      );
      // The page's own options are not the count's: they are not checked.
      assert.equal(await store.countSearchHits("docker", { limit: -1, sort: "x" } as Loose, 5), 0);
    });

    test("null options read as no options", async () => {
      const store = await stores.empty();
      await store.createSession("s", "cli", null as Loose);
      await store.ensureSession("e", "cli", null as Loose);
      await store.appendMessage("s", { role: "user", content: "prune docker" });
      const none = null as Loose;
      assert.equal((await store.getMessages("s", none)).length, 1);
      assert.equal(await store.countMessages("s", none), 1);
      assert.equal((await store.getMessagesAsConversation("s", none)).length, 1);
      assert.equal((await store.searchMessages("docker", none)).length, 1);
      assert.equal(await store.countSearchHits("docker", none, 10), 1);
      assert.equal((await store.listSessionsRich(none)).length, 2);
      assert.equal((await store.searchSessions(none)).length, 2);
      assert.equal(await store.sessionCount(none), 2);
      assert.equal(await store.listedSessionCount(none), 2);
      assert.equal((await store.exportAll(none)).length, 2);
      assert.equal((await store.sessionIdsWithPrefix("s", none)).count, 1);
      assert.equal((await store.usageReport(none)).length, 1);
      assert.deepEqual(await store.pruneCandidates(none), []);
      assert.equal(await store.pruneSessions(none), 0);
      assert.equal(await store.pruneEmptyGhostSessions(none), 0);
      assert.equal((await store.maybeAutoPruneAndVacuum(none)).error, undefined);
      assert.equal((await store.inspect(none)).sessions, 2);
    });

    test("restoreParentLinks() refuses links that are not { id, parentId } strings, naming them", async () => {
      const store = await withOrphan(stores);
      const bad: [unknown, RegExp][] = [
        ["child", /links must be an array of \{ id, parentId \}: current value is "child"$/],
        [null, /links must be an array .*: current value is null$/],
        [[5], /link 0 must be \{ id, parentId \} with both strings: current value is 5$/],
        [
          [{ id: "child", parentId: "p" }, { id: 5, parentId: "p" }],
          /link 1 .*\{"id":5,"parentId":"p"\}$/,
        ],
        [[{ id: "child" }], /link 0 .*\{"id":"child"\}$/],
      ];
      for (const [links, message] of bad) {
        await assert.rejects(
          store.restoreParentLinks(links as Loose),
          (error) => error instanceof TypeError && message.test(error.message),
          String(message),
        );
      }
      // Nothing linked by the list whose second link was bad.
      assert.equal((await store.getSession("child"))?.parent_session_id, null);
      assert.equal(await store.restoreParentLinks([{ id: "child", parentId: "p" }]), 1);
    });

    test("a read-only store refuses restoreParentLinks([]) as every write, and names why an auto-prune failed", async () => {
      const store = await withOrphan(stores);
      const ro = await stores.readonly(store);
      await assert.rejects(ro.appendMessages("p", []), ReadonlyError);
      await assert.rejects(ro.restoreParentLinks([]), ReadonlyError);
      await assert.rejects(ro.restoreParentLinks([{ id: "child", parentId: "p" }]), ReadonlyError);
      await assert.rejects(ro.replaceMessages("p", [null] as Loose), ReadonlyError);
      const result = await ro.maybeAutoPruneAndVacuum();
      assert.ok(result.cause instanceof ReadonlyError, String(result.cause));
      assert.equal(result.error, result.cause.message);
      assert.equal((await store.getSession("child"))?.parent_session_id, null);
    });

    test("setMeta(key, null) keeps the key with no value: getMeta answers null, not undefined", async () => {
      const store = await stores.empty();
      await store.setMeta("k", "v");
      await store.setMeta("k", null);
      assert.equal(await store.getMeta("k"), null);
      assert.equal(await store.getMeta("absent"), undefined);
      assert.deepEqual((await store.inspect()).metaKeys, ["k"]);
    });

    test("after close() every method rejects with 'database is not open'; the getters still answer", async () => {
      const store = await stores.empty();
      await store.createSession("s", "cli");
      const { engine, target } = store;
      await store.close();
      await store.close();
      const notOpen = (error: unknown) =>
        error instanceof StorageError && error.message === "database is not open";
      for (const [method, args] of EVERY_CALL) {
        await assert.rejects(call(store, method, args), notOpen, method);
      }
      await assert.rejects(store.iterateExport().next(), notOpen, "iterateExport");
      assert.deepEqual([store.engine, store.target, store.readonly], [engine, target, false]);
    });

    test("iterateExport() resumed after close() rejects with 'database is not open'", async () => {
      const store = await stores.empty();
      for (const id of ["s1", "s2", "s3"]) await store.createSession(id, "cli");
      const sessions = store.iterateExport();
      assert.equal((await sessions.next()).done, false);
      await store.close();
      await assert.rejects(
        sessions.next(),
        (error) => error instanceof StorageError && error.message === "database is not open",
      );
    });
  });
}
