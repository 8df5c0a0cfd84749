/**
 * A page of a time-sorted search past the first (`search docker --sort
 * oldest --offset 200000`) makes snippets for its own hits only. The walk's
 * first chunk carried the hit rows of every match up to the page, skipped
 * ones included: 200,022 snippets for a page of 21 at a million messages
 * (4.5 s; 1.1 s now). The answers are the full sort's either way.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import type { SqliteStatement } from "../lib/sqlite/driver/types.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { type MessageSeed, seeded } from "./_search_data.ts";

/** Messages in id order with growing timestamps, every one a match of "docker". */
const COUNT = 600;

/** The store, counting the rows its statements that make snippets return. */
interface CountingStore {
  readonly store: Store;
  snippets: number;
}

async function countingStore(path: string): Promise<CountingStore> {
  const { db, writer } = await openConnection({ path, readonly: true });
  const store = new Store(db, writer, { path, readonly: true });
  const counting: CountingStore = { store, snippets: 0 };
  const statement = store.statement.bind(store);
  store.statement = (sql: string): SqliteStatement => {
    const prepared = statement(sql);
    if (!sql.includes("snippet(")) return prepared;
    return new Proxy(prepared, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key !== "all" || typeof value !== "function") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (...params: Parameters<SqliteStatement["all"]>) => {
          const rows = value.apply(target, params);
          counting.snippets += rows.length;
          return rows;
        };
      },
    });
  };
  return counting;
}

describe("time-sorted search past the first page", () => {
  let counting: CountingStore;

  before(async () => {
    const messages: MessageSeed[] = Array.from({ length: COUNT }, (_, i) => ({
      session_id: i < COUNT / 2 ? "a" : "b",
      role: i % 2 === 0 ? "user" : "assistant",
      content: `docker note ${i}`,
      timestamp: 1_700_000_000 + i,
    }));
    const { db, path } = await seeded([{ id: "a" }, { id: "b", source: "telegram" }], messages);
    db.close();
    counting = await countingStore(path);
  });

  after(() => counting.store.db.close());

  for (const sort of ["oldest", "newest"] as const) {
    for (const page of [{ offset: 500, limit: 5 }, { offset: 40, limit: 20 }]) {
      test(`sort ${sort}, offset ${page.offset}: snippets for the page only, the full sort's hits`, () => {
        const options: SearchOptions = { sort, ...page };
        const full = searchMessages(counting.store, "docker", options, { sort: "full" });
        counting.snippets = 0;
        const walked = searchMessages(counting.store, "docker", options, { sort: "walk" });
        assert.equal(walked.length, page.limit);
        assert.deepEqual(walked, full);
        assert.ok(
          counting.snippets <= page.limit,
          `${counting.snippets} snippets made for a page of ${page.limit}`,
        );
      });
    }
  }

  test("the first page still comes with its snippets in one statement", () => {
    const options: SearchOptions = { sort: "newest", limit: 10 };
    const full = searchMessages(counting.store, "docker", options, { sort: "full" });
    counting.snippets = 0;
    const walked = searchMessages(counting.store, "docker", options, { sort: "walk" });
    assert.deepEqual(walked, full);
    assert.ok(walked.every((hit) => hit.snippet?.includes(">>>docker<<<")));
    // The first chunk: the page and the one more that tells whether the walk may stop.
    assert.equal(counting.snippets, 11);
  });
});
