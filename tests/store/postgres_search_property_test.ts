/**
 * The search property test on PostgreSQL, with the SQLite engine as the
 * oracle: generated hostile queries (the generator of
 * `tests/search_property_test.ts`) against the v11 fixture's data on both
 * engines; PostgreSQL never throws, returns well-formed hits, and finds
 * exactly the messages SQLite finds (all matches compared, order aside).
 * The oracle is a new SQLite file filled the same way as the PostgreSQL
 * store (importSession), not the fixture itself: the fixture's trigram
 * index was built by SQLite 3.40, which indexed text only up to a NUL.
 * Each chunk of queries runs under one of Deno, Bun and Node (`caseSkip`).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { openStore } from "../../lib/open_store.ts";
import { tempDbPath } from "../_helpers.ts";
import { HIT_KEYS, hostileQuery, searchOptions } from "../_search_cases.ts";
import { mulberry32 } from "../_random.ts";
import { loadFixture } from "./_fixture_data.ts";
import { openPgStore, PG_SKIP } from "./_pg.ts";
import { caseSkip } from "../reliability/_runtimes.ts";

const QUERIES = 2_000;
const CHUNKS = 4;
const SEED = 0x5eed;

describe("searchMessages() on PostgreSQL against the SQLite oracle", { skip: PG_SKIP }, () => {
  let store: SessionStore;
  let oracle: SessionDB;
  before(async () => {
    store = await openPgStore();
    await loadFixture(store);
    const path = tempDbPath();
    const sqlite = await openStore(path);
    await loadFixture(sqlite);
    await sqlite.close();
    oracle = await SessionDB.open({ path });
  });
  after(async () => {
    await store?.close();
    oracle?.close();
  });

  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    const first = chunk * (QUERIES / CHUNKS);
    const last = first + QUERIES / CHUNKS;
    test(`generated queries ${first}–${last - 1}: same matches as SQLite, never a throw`, {
      timeout: 120_000,
      skip: caseSkip(chunk),
    }, async () => {
      const rnd = mulberry32(SEED + 7919 * chunk);
      let withHits = 0;
      for (let i = first; i < last; i++) {
        const text = hostileQuery(rnd, i);
        const option = searchOptions(rnd);
        const wide = { ...option, limit: 1000, offset: 0 };
        let hits;
        try {
          hits = await store.searchMessages(text, wide);
        } catch (error) {
          assert.fail(
            `query #${i} ${JSON.stringify(text)} ${JSON.stringify(option)} threw ${error}`,
          );
        }
        const want = oracle.searchMessages(text, wide);
        assert.deepEqual(
          hits.map((h) => h.id).sort((a, b) => a - b),
          want.map((h) => h.id).sort((a, b) => a - b),
          `query #${i} ${JSON.stringify(text)} ${JSON.stringify(option)}`,
        );
        for (const hit of hits) {
          assert.equal(Object.keys(hit).join(","), HIT_KEYS, `query #${i}`);
          assert.ok(hit.snippet === null || typeof hit.snippet === "string", `query #${i}`);
        }
        if (hits.length > 0) withHits++;
      }
      assert.ok(
        withHits > (last - first) / 20,
        `many generated queries find something: ${withHits}`,
      );
    });
  }
});
