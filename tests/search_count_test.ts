/**
 * `countSearchHits` (what `search --offset N` past the last hit says: "past
 * the first N hits") counts exactly the hits `searchMessages` returns, with
 * every filter, on every path (unicode61, trigram, substring, and a file
 * without the trigram table), up to its bound; and the CLI's message keeps
 * the count. At a million messages the CLI read every hit's snippet and
 * context to count them (22 s for a word of 275,622 hits; 2.3 s counted).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { copyFixture } from "./_helpers.ts";
import { hostileQuery, searchOptions } from "./_search_cases.ts";
import { mulberry32 } from "./_random.ts";
import { ALL, checkCounts, COUNT_QUERIES, filterCases } from "./_search_count.ts";

describe("countSearchHits", () => {
  let v11: SessionDB;
  let v6: SessionDB;
  let filters: SearchOptions[];

  before(async () => {
    v11 = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
    // Read as it is: an old layout without the trigram table (CJK by substring).
    v6 = await SessionDB.open({ path: copyFixture("hermes-v6.db"), readonly: true });
    const [first, second] = v11.listSessionsRich({ includeChildren: true, limit: 2 });
    filters = filterCases(first, second);
  });

  after(() => {
    v11.close();
    v6.close();
  });

  test("counts what searchMessages returns, with each filter, on the v11 fixture", async () => {
    const counted = COUNT_QUERIES.map((query) => v11.countSearchHits(query, {}, ALL));
    // The fixture's words are found: the comparison is not of empty answers.
    assert.ok(counted.filter((n) => n > 1).length >= 5, JSON.stringify(counted));
    await checkCounts(v11, COUNT_QUERIES, filters);
  });

  test("counts what searchMessages returns on a file without the trigram table", async () => {
    await checkCounts(v6, COUNT_QUERIES, [{}, { roleFilter: ["user"] }, { sourceFilter: ["cli"] }]);
  });

  test("counts what searchMessages returns for generated hostile queries and options", async () => {
    const rnd = mulberry32(0xc0de);
    for (let i = 1; i <= 300; i++) {
      const query = hostileQuery(rnd, i);
      const options = searchOptions(rnd);
      await checkCounts(v11, [query], [{ ...options, limit: undefined, offset: undefined }]);
    }
  });

  test("the store the CLI opens on a file counts (else its search past the end reads every hit)", async () => {
    const store = await openStore(copyFixture("hermes-v11.db"), { readonly: true });
    try {
      assert.equal(typeof store.countSearchHits, "function");
      const hits = await store.searchMessages("docker", { limit: ALL });
      assert.ok(hits.length > 1);
      assert.equal(await store.countSearchHits("docker", {}, ALL), hits.length);
    } finally {
      await store.close();
    }
  });

  test("refuses a bound that is not a count, naming it", () => {
    assert.throws(() => v11.countSearchHits("docker", {}, -1), /upTo.*-1/);
    assert.throws(() => v11.countSearchHits("docker", { since: Number.NaN }, 5), RangeError);
  });
});
