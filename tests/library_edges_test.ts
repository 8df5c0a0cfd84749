/**
 * The library as an agent builder uses it, on Deno, Bun and Node: the
 * README's quick start run as written, `null` options read as absent on
 * every method (as JSON-built options hold them), many calls of the
 * asynchronous store in flight at once, and a store closed while a call
 * waits for a lock another connection holds.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openStore, SessionDB, SqliteError } from "../mod.ts";
import type { MessagesOptions, SearchOptions, SessionStore } from "../mod.ts";
import { rawOpen, ROOT, tempDbPath, tempDir } from "./_helpers.ts";
import { openPgStore, PG_SKIP } from "./store/_pg.ts";

/** `null` where an option may be left out, as options built from JSON hold it. */
const NULL = null as never;

/** The README's "Library quick start" block, its `console.assert`s made to throw. */
function quickStart(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Library quick start"));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, "the README has a quick start block");
  const mod = pathToFileURL(join(ROOT, "mod.ts")).href;
  return [
    "const console = {",
    "  assert(ok: unknown, ...what: unknown[]) {",
    '    if (!ok) throw new Error(`quick start assertion failed ${what.join(" ")}`);',
    "  },",
    "};",
    block[1].replace('"./mod.ts"', JSON.stringify(mod)),
  ].join("\n");
}

describe("the README's library quick start", () => {
  test("runs as written, every assertion holding, on this runtime", async () => {
    const file = join(tempDir(), "quick_start.ts");
    writeFileSync(file, quickStart());
    await import(pathToFileURL(file).href);
  });
});

describe("options given as null", () => {
  test("getMessages() and countMessages() read a null option as absent", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    db.createSession("s", "cli");
    db.appendMessages("s", [{ role: "user", content: "a" }, { role: "assistant", content: "b" }]);
    const options: MessagesOptions = {
      afterId: NULL,
      beforeId: NULL,
      fromId: NULL,
      limit: NULL,
      last: NULL,
      includeInactive: NULL,
      excludeHidden: NULL,
    };
    assert.deepEqual(db.getMessages("s", options).map((m) => m.content), ["a", "b"]);
    assert.equal(db.countMessages("s", options), 2);
    // A value that is there is still checked.
    assert.throws(
      () => db.getMessages("s", { limit: NULL, last: -1 }),
      {
        name: "TypeError",
        message: "Cannot read messages: last must be a whole number from 0: current value is -1",
      },
    );
  });

  test("searchMessages() reads sort: null as the default order", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    db.createSession("s", "cli");
    db.appendMessage("s", { role: "user", content: "docker compose" });
    const options: SearchOptions = { sort: NULL, limit: NULL, offset: NULL, since: NULL };
    assert.equal(db.searchMessages("docker", options).length, 1);
    assert.throws(() => db.searchMessages("docker", { sort: "best" as never }), RangeError);
  });

  /** Checks the asynchronous store of either engine. */
  async function readsNullAsAbsent(store: SessionStore): Promise<void> {
    await store.createSession("s", "cli");
    await store.appendMessage("s", { role: "user", content: "docker" });
    assert.equal((await store.getMessages("s", { afterId: NULL, last: NULL })).length, 1);
    assert.equal(await store.countMessages("s", { beforeId: NULL }), 1);
    assert.equal((await store.searchMessages("docker", { sort: NULL })).length, 1);
  }

  test("the asynchronous store reads them so too", async () => {
    await using store = await openStore(tempDbPath());
    await readsNullAsAbsent(store);
  });

  test("the PostgreSQL store reads them so too", { skip: PG_SKIP }, async () => {
    await using store = await openPgStore();
    await readsNullAsAbsent(store);
  });
});

describe("a message value that cannot be written as JSON", () => {
  test("appendMessage() and replaceMessages() name the field of a circular value", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    db.createSession("s", "cli");
    const call: Record<string, unknown> = { id: "c1", type: "function" };
    call.self = call;
    const circular = "cannot be written as JSON: the value contains a circular reference";
    assert.throws(() => db.appendMessage("s", { role: "assistant", toolCalls: [call as never] }), {
      name: "TypeError",
      message: `Cannot append message: toolCalls ${circular}`,
    });
    assert.throws(() => db.appendMessage("s", { role: "user", content: [call as never] }), {
      name: "TypeError",
      message: `Cannot append message: content ${circular}`,
    });
    assert.throws(
      () => db.appendMessages("s", [{ role: "assistant", reasoningDetails: call as never }]),
      { name: "TypeError", message: `Cannot append messages: reasoningDetails ${circular}` },
    );
    db.appendMessage("s", { role: "user", content: "kept" });
    assert.throws(
      () =>
        db.replaceMessages("s", [{
          role: "assistant",
          content: null,
          tool_calls: [call as never],
        }]),
      { name: "TypeError", message: `Cannot replace messages: tool_calls ${circular}` },
    );
    assert.deepEqual(db.getMessages("s").map((m) => m.content), ["kept"]);
    assert.equal(db.getSession("s")?.message_count, 1);
  });
});

describe("the asynchronous store with many calls in flight", () => {
  test("appends not awaited one by one all land, with a search among them", async () => {
    await using store = await openStore(tempDbPath());
    await store.createSession("s 1 日本", "cli");
    const appends = Array.from(
      { length: 40 },
      (_, i) => store.appendMessage("s 1 日本", { role: "user", content: `turn ${i} docker` }),
    );
    const search = store.searchMessages("docker", { limit: 100 });
    const ids = await Promise.all(appends);
    assert.equal(new Set(ids).size, 40);
    assert.equal((await search).length, 40);
    const rows = await store.getMessages("s 1 日本");
    assert.deepEqual(rows.map((m) => m.id).sort((a, b) => a - b), [...ids].sort((a, b) => a - b));
    assert.equal((await store.getSession("s 1 日本"))?.message_count, 40);
  });

  test("close() while a call waits for another connection's lock: the call rejects as closed", async () => {
    const path = tempDbPath();
    const store = await openStore(path, { retry: { timeoutMs: 5_000 } });
    await store.createSession("s", "cli");
    using raw = await rawOpen(path);
    raw.exec("BEGIN IMMEDIATE");
    try {
      const waiting = store.appendMessage("s", { role: "user", content: "while locked" });
      await store.close();
      await assert.rejects(
        waiting,
        (error) => error instanceof SqliteError && error.message === "database is not open",
      );
    } finally {
      raw.exec("ROLLBACK");
    }
    using db = await SessionDB.open({ path, readonly: true });
    assert.equal(db.messageCount("s"), 0);
  });
});

describe("opening with a target that is not a string", () => {
  test("openStore() and SessionDB.open() name the value in a TypeError, creating nothing", async () => {
    for (const target of [undefined, null, 5, {}]) {
      await assert.rejects(
        openStore(target as unknown as string),
        (error) =>
          error instanceof TypeError &&
          error.message ===
            "Cannot open store: target must be a file path, sqlite:PATH or a postgres:// URL: " +
              `current value is ${target === undefined ? "undefined" : JSON.stringify(target)}`,
        String(target),
      );
    }
    for (const path of [5, {}, true]) {
      await assert.rejects(
        SessionDB.open({ path: path as unknown as string }),
        (error) =>
          error instanceof TypeError &&
          error.message ===
            `Cannot open database: path must be a file path (a string): current value is ${
              JSON.stringify(path)
            }`,
        String(path),
      );
    }
  });
});
