// The public contract of mod.ts as its JSDoc states it, checked where the audit found the code
// and the documentation apart: bad input named in the error (never a driver's message or a silent
// empty answer), a read-only store refusing every write, null options taken as no options. Each
// holds for the synchronous SessionDB and for the asynchronous store of openStore() alike.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import process from "node:process";
import {
  containsCjk,
  OpenError,
  openStore,
  ReadonlyError,
  sanitizeFts5Query,
  sanitizeTitle,
  SessionDB,
  SqliteError,
} from "../mod.ts";
import { tempDbPath } from "./_helpers.ts";

// deno-lint-ignore no-explicit-any -- the wrong types are what is tested
type Loose = any;

/** A file with a parent and an orphaned child, as an import leaves them. */
async function withOrphan(): Promise<string> {
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  db.importSession({
    id: "child",
    source: "cli",
    started_at: 2,
    parent_session_id: "p",
    messages: [],
  });
  db.importSession({ id: "p", source: "cli", started_at: 1, messages: [] });
  return path;
}

test("restoreParentLinks() refuses links that are not { id, parentId } strings, naming them, and links nothing", async () => {
  const path = await withOrphan();
  using db = await SessionDB.open({ path });
  const bad: [unknown, RegExp][] = [
    ["child", /links must be an array of \{ id, parentId \}: current value is "child"/],
    [null, /links must be an array .*: current value is null/],
    [[5], /link 0 must be \{ id, parentId \} with both strings: current value is 5/],
    [
      [{ id: "child", parentId: "p" }, { id: 5, parentId: "p" }],
      /link 1 .*\{"id":5,"parentId":"p"\}/,
    ],
    [[{ id: "child" }], /link 0 .*\{"id":"child"\}/],
  ];
  for (const [links, message] of bad) {
    assert.throws(
      () => db.restoreParentLinks(links as Loose),
      (e) => e instanceof TypeError && message.test(e.message),
    );
  }
  assert.equal(db.getSession("child")?.parent_session_id, null);
  await using store = await openStore(path);
  await assert.rejects(store.restoreParentLinks([{ id: 5 }] as Loose), /link 0 must be/);
  assert.equal(await store.restoreParentLinks([{ id: "child", parentId: "p" }]), 1);
});

test("restoreParentLinks([]) on a read-only store is refused as every write, as appendMessages([]) is", async () => {
  const path = await withOrphan();
  using db = await SessionDB.open({ path, readonly: true });
  assert.throws(() => db.appendMessages("p", []), ReadonlyError);
  assert.throws(() => db.restoreParentLinks([]), ReadonlyError);
  await using store = await openStore(path, { readonly: true });
  await assert.rejects(store.restoreParentLinks([]), ReadonlyError);
});

test("pruneCandidates() and usageReport() refuse a source that is not a string, as the other listings do", async () => {
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  db.createSession("s1", "cli");
  const source = 5 as Loose;
  assert.throws(
    () => db.pruneCandidates({ source }),
    /source must be a string: current value is 5/,
  );
  assert.throws(() => db.usageReport({ source }), /source must be a string: current value is 5/);
  assert.throws(() => db.pruneSessions({ source }), /source must be a string: current value is 5/);
  // A blank source still means every source.
  assert.equal(db.usageReport({ source: "" })[0].sessions, 1);
  await using store = await openStore(path);
  await assert.rejects(store.pruneCandidates({ source: ["cli"] as Loose }), TypeError);
  await assert.rejects(store.usageReport({ source: { a: 1 } as Loose }), TypeError);
});

test("inspect(null) reads as inspect(), as the other methods take null options", async () => {
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  assert.equal(db.inspect(null as Loose).schemaVersion, 11);
  await using store = await openStore(path);
  assert.equal((await store.inspect(null as Loose)).schemaVersion, 11);
});

test("sanitizeTitle(), sanitizeFts5Query() and containsCjk() name a value that is not text", async () => {
  assert.throws(() => sanitizeTitle(5 as Loose), /title must be a string: current value is 5$/);
  assert.throws(() => sanitizeTitle({ a: 1 } as Loose), /current value is \{"a":1\}$/);
  assert.equal(sanitizeTitle(null), null);
  assert.equal(sanitizeTitle(undefined), null);
  assert.throws(() => sanitizeFts5Query(5 as Loose), /query must be a string: current value is 5$/);
  assert.throws(
    () => containsCjk(["記憶"] as Loose),
    /text must be a string: current value is \["記憶"\]$/,
  );
  using db = await SessionDB.open({ path: tempDbPath() });
  db.createSession("s1", "cli");
  assert.throws(() => db.setSessionTitle("s1", 42 as Loose), /current value is 42$/);
  // searchMessages keeps its promise: never a throw for the query itself.
  assert.deepEqual(db.searchMessages(5 as Loose), []);
});

test("a symbol where a number goes is a RangeError naming it, not a failed string conversion", async () => {
  using db = await SessionDB.open({ path: tempDbPath() });
  const symbol = Symbol("x") as Loose;
  const named = (e: unknown) =>
    e instanceof RangeError && /current value is Symbol\(x\)$/.test(e.message);
  assert.throws(() => db.pruneSessions({ olderThanDays: symbol }), named);
  assert.throws(() => db.pruneCandidates({ olderThanDays: symbol }), named);
  assert.throws(() => db.listSessionsRich({ startedAfter: symbol }), named);
  assert.throws(() => db.searchMessages("docker", { since: symbol }), named);
});

test("setMeta(key, null) keeps the key with a NULL value, and getMeta answers null, not undefined", async () => {
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  db.setMeta("k", null);
  assert.equal(db.getMeta("k"), null);
  assert.equal(db.getMeta("absent"), undefined);
  await using store = await openStore(path);
  assert.equal(await store.getMeta("k"), null);
});

test("open() refuses a synchronous level or retry setting it cannot honour, naming it, and creates nothing", async () => {
  const bad: [Loose, RegExp][] = [
    [{ synchronous: "off" }, /synchronous must be "full" or "normal": current value is "off"$/],
    [
      { retry: { maxAttempts: 0 } },
      /retry\.maxAttempts must be a positive integer: current value is 0$/,
    ],
    [{ retry: { busyTimeoutMs: "5" } }, /retry\.busyTimeoutMs .*: current value is "5"$/],
    [
      { retry: { minDelayMs: NaN } },
      /retry\.minDelayMs must be a non-negative number: current value is NaN$/,
    ],
  ];
  for (const [options, message] of bad) {
    const path = tempDbPath();
    await assert.rejects(
      SessionDB.open({ path, ...options }),
      (e) => e instanceof RangeError && message.test(e.message),
    );
    assert.equal(existsSync(path), false);
  }
  const path = tempDbPath();
  await assert.rejects(
    openStore(path, { synchronous: "off" as Loose }),
    /synchronous must be "full" or "normal"/,
  );
  await assert.rejects(
    openStore(path, { retry: { timeoutMs: NaN } }),
    /retry\.timeoutMs must be .*: current value is NaN$/,
  );
  await assert.rejects(openStore(path, { retry: { maxDelayMs: -1 } }), RangeError);
  assert.equal(existsSync(path), false);
});

test("open(null) and openStore(path, null) read as no options, as every method's null options do", async () => {
  const path = tempDbPath();
  {
    await using store = await openStore(path, null as Loose);
    await store.createSession("s1", "cli");
  }
  const home = process.env.HERMES_HOME;
  process.env.HERMES_HOME = dirname(path);
  try {
    using db = await SessionDB.open(null as Loose);
    assert.equal(db.path, path);
    assert.equal(db.getSession("s1")?.source, "cli");
  } finally {
    if (home === undefined) delete process.env.HERMES_HOME;
    else process.env.HERMES_HOME = home;
  }
});

test("open() of an empty path is refused with an error that says so, not a bare ENOENT", async () => {
  for (const open of [() => SessionDB.open({ path: "" }), () => openStore("")]) {
    await assert.rejects(
      open(),
      (e) =>
        e instanceof OpenError && e.kind === "not_found" &&
        /"": the path is empty$/.test(e.message),
    );
  }
  await assert.rejects(openStore("sqlite:"), /the path is empty/);
});

test("iterateExport() resumed after close() throws 'database is not open', as every method then does", async () => {
  const db = await SessionDB.open({ path: tempDbPath() });
  for (const id of ["s1", "s2", "s3"]) db.createSession(id, "cli");
  const sessions = db.iterateExport();
  assert.equal(sessions.next().done, false);
  db.close();
  assert.throws(
    () => sessions.next(),
    (e) => e instanceof SqliteError && e.message === "database is not open",
  );
  assert.deepEqual(sessions.next(), { done: true, value: undefined });
});

test("an id prefix or title longer than SQLite's LIKE pattern limit is compared, not refused", async () => {
  const db = await SessionDB.open({ path: tempDbPath() });
  try {
    const long = "x".repeat(60_000);
    db.createSession(`${long}-tail`, "cli");
    db.createSession("other", "cli");
    // SQLite refuses a LIKE pattern beyond 50,000 bytes ("LIKE or GLOB pattern too complex").
    assert.equal(db.resolveSessionId(long.toUpperCase()), `${long}-tail`);
    assert.deepEqual(db.sessionIdsWithPrefix(long), { count: 1, ids: [`${long}-tail`] });
    assert.equal(db.resolveSessionId(`${long}-tails`), undefined);
    assert.equal(db.resolveSessionByTitle("t".repeat(60_000)), undefined);
    assert.equal(typeof db.getNextTitleInLineage("t".repeat(60_000)), "string");
  } finally {
    db.close();
  }
});
