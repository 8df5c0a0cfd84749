/**
 * `countSearchHits` on PostgreSQL (what `search --offset N` past the last
 * hit says: "past the first N hits") counts exactly the hits
 * `searchMessages` returns there — words, prefixes, phrases, NOT/OR, CJK
 * short words (substring) and long ones (trigram), text the search retries
 * or answers [] for, every filter and the origins of a synced store — up to
 * its bound. The store had no such method: the CLI searched again, building
 * a snippet and a context for every hit, to count them.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { SearchOptions } from "../../lib/core/search/options.ts";
import { openStore } from "../../lib/open_store.ts";
import {
  hostileQuery,
  RECALL_QUERIES,
  searchOptions,
  writeRecallMessages,
} from "../_search_cases.ts";
import { mulberry32 } from "../_random.ts";
import { ALL, checkCounts, COUNT_QUERIES, filterCases } from "../_search_count.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

describe("countSearchHits() on PostgreSQL", { skip: SKIP }, () => {
  let url: string;
  let store: SessionStore;
  let filters: SearchOptions[];

  before(async () => {
    url = schemaUrl(freshSchema());
    // The v11 fixture synced from two origins, and the recall corpus beside them.
    for (const origin of ["web-1", "web-2"]) {
      const synced = await runCli(["sync", v11Copy(), "--to", url, "--origin", origin]);
      assert.equal(synced.code, 0, synced.err);
    }
    store = await openStore(url);
    await writeRecallMessages(store);
    const [first, second] = await store.listSessionsRich({ includeChildren: true, limit: 2 });
    filters = [
      ...filterCases(first, second),
      { origin: "web-1" } as SearchOptions,
      { origin: "web-2", roleFilter: ["user"] } as SearchOptions,
      { origin: "" } as SearchOptions,
    ];
  });
  after(async () => await store?.close());

  test("the store has countSearchHits (else a search past the end reads every hit to count)", () => {
    assert.equal(typeof store.countSearchHits, "function");
  });

  test("counts what searchMessages() finds, with each filter and origin", {
    timeout: 120_000,
  }, async () => {
    const found = await checkCounts(store, COUNT_QUERIES, filters);
    assert.ok(found >= 30, `${found} queries and filters with hits`);
    const all = await store.countSearchHits("docker", {}, ALL);
    const origin = { origin: "web-1" } as SearchOptions;
    // Each origin holds one copy of the fixture's sessions.
    assert.ok(all > 2, String(all));
    assert.equal(await store.countSearchHits("docker", origin, ALL) * 2, all);
  });

  test(
    "counts what searchMessages() finds for the recall corpus",
    { timeout: 120_000 },
    async () => {
      const queries = RECALL_QUERIES.map(([query]) => query);
      const found = await checkCounts(store, queries, [{}, { sessionId: "recall" }, {
        roleFilter: ["user"],
      }]);
      assert.ok(found >= 5, `${found} recall queries with hits`);
    },
  );

  test("counts what searchMessages() finds for generated hostile queries and options", {
    timeout: 120_000,
  }, async () => {
    const rnd = mulberry32(0xc0de);
    for (let i = 1; i <= 200; i++) {
      const options = searchOptions(rnd);
      await checkCounts(store, [hostileQuery(rnd, i)], [{
        ...options,
        limit: undefined,
        offset: undefined,
      }]);
    }
  });

  test("refuses an origin that is no text, naming it, as searchMessages() does", async () => {
    const origin = { origin: 5 } as unknown as SearchOptions;
    await assert.rejects(
      store.countSearchHits("docker", origin, 10),
      /^TypeError: Cannot search messages: origin must be a string: current value is 5$/,
    );
  });

  test("search --offset past the last hit says how many there are, counted", {
    timeout: 60_000,
  }, async () => {
    for (const extra of [[], ["--origin", "web-2"], ["--role", "user"]]) {
      const all = await runCli([
        "--db",
        url,
        "--json",
        "search",
        "docker",
        "--limit",
        "1000",
        ...extra,
      ]);
      assert.equal(all.code, 0, all.err);
      const hits = JSON.parse(all.out).length;
      assert.ok(hits > 1, `${extra}: ${hits}`);
      const past = await runCli(["--db", url, "search", "docker", "--offset", "100000", ...extra]);
      assert.equal(past.code, 0, past.err);
      assert.equal(past.out, `No hits for "docker" past the first ${hits} hits.\n`, `${extra}`);
    }
  });
});
