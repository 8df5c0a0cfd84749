/**
 * Speed audit at 1,000,000 messages: a ranked search whose filters leave no
 * hit (`search the --role system`: 4.5 s, of which ranking 2.7–3.7 s) or a
 * page past the last hit (`search docker --offset 1000000`: 1.4 s) ranked
 * every match, reading each match's message in rank order before a filter
 * could refuse it. Such a page is now known empty by counting the matches
 * in rowid order up to `offset + 1` (0.24–0.43 s there), and is not ranked.
 * The pages must stay Python's statement's, hit for hit.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { type MessageSeed, seeded } from "./_search_data.ts";

/** A store on `path` that `using` closes. */
async function openStore(path: string): Promise<Store & Disposable> {
  const { db, writer } = await openConnection({ path });
  const store = new Store(db, writer, { path, readonly: false });
  return Object.assign(store, { [Symbol.dispose]: () => db.close() });
}

/** The SQL of every statement `store` prepares or reuses while `fn` runs, and `fn`'s value. */
function withStatements<T>(store: Store, fn: () => T): { value: T; sqls: string[] } {
  const sqls: string[] = [];
  const statement = store.statement.bind(store);
  store.statement = (sql: string) => {
    sqls.push(sql);
    return statement(sql);
  };
  try {
    return { value: fn(), sqls };
  } finally {
    store.statement = statement;
  }
}

const ranks = (sqls: readonly string[]) => sqls.some((sql) => /ORDER BY rank/.test(sql));

/** Python's ranked statement (ids only): the page every search must give. */
function pythonIds(store: Store, word: string, roles: string[] | null, page: SearchOptions) {
  const role = roles === null ? "" : " AND m.role IN (SELECT value FROM json_each(?))";
  const params = roles === null ? [] : [JSON.stringify(roles)];
  return store.db.prepare(
    `SELECT m.id AS id FROM messages_fts
     JOIN messages m ON m.id = messages_fts.rowid
     JOIN sessions s ON s.id = m.session_id
     WHERE messages_fts MATCH ?${role}
     ORDER BY rank LIMIT ? OFFSET ?`,
  ).all(word, ...params, page.limit ?? 20, page.offset ?? 0).map((row) => Number(row.id));
}

/**
 * 400 messages of users and assistants (no system message) in two
 * sessions; "alpha" in every one, more often in some, so the ranks differ
 * and tie; "omega" in the tool messages of one session only.
 */
async function corpus(): Promise<string> {
  const messages: MessageSeed[] = [];
  for (let i = 1; i <= 400; i++) {
    const words = Array.from({ length: 1 + (i % 5) }, () => "alpha").join(" ");
    messages.push({
      session_id: `s${i % 2}`,
      role: i % 7 === 0 ? "tool" : i % 2 === 0 ? "user" : "assistant",
      content: `${words} message ${i}${i % 7 === 0 && i % 2 === 0 ? " omega" : ""}`,
      timestamp: 1000 + i,
    });
  }
  const s = await seeded([{ id: "s0" }, { id: "s1", source: "telegram" }], messages);
  s.db.close();
  return s.path;
}

describe("a ranked page known empty by a count is not ranked", () => {
  let path: string;
  before(async () => {
    path = await corpus();
  });

  test("a filter that leaves no hit: nothing ranked, nothing found", async () => {
    using store = await openStore(path);
    const { value, sqls } = withStatements(
      store,
      () => searchMessages(store, "alpha", { roleFilter: ["system"] }),
    );
    assert.deepEqual(value, []);
    assert.ok(!ranks(sqls), "no statement ranks the 400 matches");
    const source = withStatements(
      store,
      () => searchMessages(store, "omega", { sourceFilter: ["telegram"] }),
    );
    assert.deepEqual(source.value, []);
    assert.ok(!ranks(source.sqls), "omega is in session s0 (cli) only");
  });

  test("a page past the last hit: nothing ranked", async () => {
    using store = await openStore(path);
    for (const offset of [400, 401, 100_000]) {
      const { value, sqls } = withStatements(
        store,
        () => searchMessages(store, "alpha", { offset, limit: 5 }),
      );
      assert.deepEqual(value, [], `offset ${offset}`);
      assert.ok(!ranks(sqls), `offset ${offset}: no statement ranks`);
    }
    const tools = withStatements(
      store,
      () => searchMessages(store, "alpha", { roleFilter: ["tool"], offset: 57, limit: 5 }),
    );
    assert.deepEqual(tools.value, [], "57 tool messages: the 58th is past the last");
    assert.ok(!ranks(tools.sqls));
  });

  test("a page with hits is still ranked", async () => {
    using store = await openStore(path);
    const { value, sqls } = withStatements(
      store,
      () => searchMessages(store, "alpha", { roleFilter: ["tool"], offset: 56, limit: 5 }),
    );
    assert.equal(value.length, 1, "the 57th tool message");
    assert.ok(ranks(sqls));
  });

  test("every page is Python's statement's, on both sides of the last hit", async () => {
    using store = await openStore(path);
    const cases: [string, string[] | null, SearchOptions][] = [];
    for (const roles of [null, ["tool"], ["user"], ["system"], ["user", "tool"]]) {
      for (const offset of [0, 1, 19, 56, 57, 58, 199, 200, 201, 399, 400, 401, 5000]) {
        for (const limit of [1, 5, 20]) cases.push(["alpha", roles, { offset, limit }]);
      }
    }
    for (const offset of [0, 27, 28, 29]) cases.push(["omega", null, { offset, limit: 3 }]);
    for (const [word, roles, page] of cases) {
      const options = { ...page, ...(roles === null ? {} : { roleFilter: roles }) };
      assert.deepEqual(
        searchMessages(store, word, options).map((hit) => hit.id),
        pythonIds(store, word, roles, page),
        `${word} ${JSON.stringify(options)}`,
      );
    }
  });
});
