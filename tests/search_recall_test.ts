/**
 * Recall on SQLite: the queries a user types after a conversation with an
 * agent (code, paths, errors, versions, many languages and scripts, emoji,
 * tool calls) find the messages they remember, and none throws. The same
 * cases run on PostgreSQL (tests/store/postgres_search_recall_test.ts).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../lib/open_store.ts";
import type { SessionStore } from "../lib/core/session_store.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { isMatchError } from "../lib/sqlite/search/query_error.ts";
import { tempDbPath } from "./_helpers.ts";
import { RECALL_QUERIES, writeRecallMessages } from "./_search_cases.ts";

describe("searchMessages() recall on SQLite", () => {
  let store: SessionStore;
  let labels: Map<number, string>;
  before(async () => {
    store = await openStore(tempDbPath());
    labels = await writeRecallMessages(store);
  });
  after(async () => await store?.close());

  for (const [query, want] of RECALL_QUERIES) {
    test(`searchMessages(${JSON.stringify(query)}) finds ${want.join(", ")}`, async () => {
      for (const sort of ["rank", "newest", "oldest"] as const) {
        const hits = await store.searchMessages(query, { limit: 100, sort });
        assert.deepEqual(hits.map((h) => labels.get(h.id)).sort(), [...want].sort(), sort);
      }
    });
  }
});

describe("isMatchError() on column filters FTS5 rejects", () => {
  const noSuchColumn = (name: string) => new SqliteError(`no such column: ${name}`, 1);

  test("a name whose Σ lower-cases differently alone and in the query (final sigma)", () => {
    assert.ok(isMatchError(noSuchColumn("ΚΩΔΙΚΟΣ"), "ΚΩΔΙΚΟΣ:abc123"));
  });

  test("a quoted name holding a doubled quote, named unquoted", () => {
    assert.ok(isMatchError(noSuchColumn('a"b'), '"a""b":x'));
  });

  test("an empty quoted name, and only where the query quotes nothing", () => {
    assert.ok(isMatchError(noSuchColumn(""), '"": 1'));
    assert.ok(!isMatchError(noSuchColumn(""), "docker"), "no empty name in the query");
    assert.ok(!isMatchError(noSuchColumn("s.model"), '"": 1'), "a schema problem");
  });
});
