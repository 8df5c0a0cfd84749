/**
 * 20,000 generated hostile queries against a copy of the v11 fixture: every
 * call returns an array of well-formed hits and none throws. A tenth of the
 * substring-path queries are also checked against Python's full scan.
 *
 * Then generated well-formed queries (mixed CJK, Latin and emoji words,
 * phrases, prefixes, AND/OR/NOT) against a generated corpus, each checked
 * against a brute-force oracle (`_search_oracle.ts`) that scans the same
 * rows: every path (unicode61, trigram, trigram plus substring check,
 * substring) must find exactly the messages the oracle names.
 *
 * Each chunk runs under one of Deno, Bun and Node (`caseSkip`).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import { planSearch } from "../lib/core/search/plan.ts";
import { sanitizeFts5Query } from "../lib/core/search/sanitize.ts";
import { copyFixture } from "./_helpers.ts";
import { HIT_KEYS, hostileQuery, searchOptions } from "./_search_cases.ts";
import { mulberry32 } from "./_random.ts";
import { caseSkip } from "./reliability/_runtimes.ts";
import { type Seeded, seeded } from "./_search_data.ts";
import {
  bySubstring,
  fallsBackToSubstring,
  oracleCorpus,
  oracleMatches,
  oracleQuery,
  queryText,
} from "./_search_oracle.ts";

const QUERIES = 20_000;
/** Run as chunks, each under the runners' default per-test timeout. */
const CHUNKS = 10;
const SEED = 0x5eed;

let store: Store;
let messageIds: Set<number>;

before(async () => {
  const path = copyFixture("hermes-v11.db");
  const { db, writer } = await openConnection({ path });
  store = new Store(db, writer, { path, readonly: false });
  messageIds = new Set(db.prepare("SELECT id FROM messages").all().map((r) => Number(r.id)));
});

after(() => store.db.close());

for (let chunk = 0; chunk < CHUNKS; chunk++) {
  const first = chunk * (QUERIES / CHUNKS);
  const last = first + QUERIES / CHUNKS;
  test(
    `searchMessages() returns well-formed hits and never throws for generated queries ${first}–${
      last - 1
    }`,
    // A few seconds alone; Bun's default 5 s is too short on a loaded machine.
    { timeout: 120_000, skip: caseSkip(chunk) },
    () => {
      const rnd = mulberry32(SEED + chunk);
      let withHits = 0;
      let compared = 0;
      for (let i = first; i < last; i++) {
        const text = hostileQuery(rnd, i);
        const option = searchOptions(rnd);
        let hits;
        try {
          assert.equal(typeof sanitizeFts5Query(text), "string");
          hits = searchMessages(store, text, option);
        } catch (error) {
          assert.fail(
            `query #${i} ${JSON.stringify(text)} ${JSON.stringify(option)} threw ${error}`,
          );
        }
        assert.ok(Array.isArray(hits), `query #${i}`);
        assert.ok(hits.length <= (option.limit ?? 20), `query #${i} respects the limit`);
        for (const hit of hits) {
          assert.equal(Object.keys(hit).join(","), HIT_KEYS, `query #${i}`);
          assert.ok(messageIds.has(hit.id), `query #${i} returns stored messages`);
          assert.ok(hit.snippet === null || typeof hit.snippet === "string", `query #${i}`);
          assert.ok(hit.context.length <= 3, `query #${i}`);
        }
        if (hits.length > 0) withHits++;
        if (i % 10 === 0 && planSearch(text).kind === "substring") {
          const scan = searchMessages(store, text, option, { substring: "scan" });
          assert.deepEqual(hits, scan, `query #${i} ${JSON.stringify(text)}: fast path = scan`);
          compared++;
        }
      }
      const size = QUERIES / CHUNKS;
      assert.ok(withHits > size / 20, `many generated queries find something: ${withHits}`);
      assert.ok(
        compared > size / 200,
        `enough substring queries compared with the scan: ${compared}`,
      );
    },
  );
}

const ORACLE_QUERIES = 1_500;
/** Run as chunks, each well under Bun's default 5 s per test. */
const ORACLE_CHUNKS = 5;
const ORACLE_ROWS = 400;

describe("searchMessages() agrees with a brute-force oracle", () => {
  let s: Seeded;
  let rows: { id: number; content: string }[];
  before(async () => {
    const corpus = oracleCorpus(mulberry32(SEED), ORACLE_ROWS);
    s = await seeded([{ id: "o", source: "cli" }], corpus);
    rows = corpus.map((m, i) => ({ id: s.ids[i], content: m.content ?? "" }));
  });
  after(() => s.db.close());

  for (let chunk = 0; chunk < ORACLE_CHUNKS; chunk++) {
    const size = ORACLE_QUERIES / ORACLE_CHUNKS;
    test(
      `searchMessages() finds exactly the oracle's messages for generated mixed queries (${
        chunk + 1
      }/${ORACLE_CHUNKS})`,
      { timeout: 120_000, skip: caseSkip(chunk) },
      () => {
        const rnd = mulberry32(SEED + 100 + chunk);
        const seen = { substring: 0, words: 0, hits: 0, operators: new Set<string>() };
        for (let i = 0; i < size; i++) {
          const parts = oracleQuery(rnd);
          const text = queryText(parts);
          let want = rows.filter((r) => oracleMatches(parts, r.content)).map((r) => r.id);
          if (want.length === 0 && fallsBackToSubstring(parts)) {
            want = rows.filter((r) => oracleMatches(parts, r.content, true)).map((r) => r.id);
          }
          const got = s.db.searchMessages(text, { limit: ORACLE_ROWS }).map((h) => h.id);
          assert.deepEqual(
            got.sort((a, b) => a - b),
            want,
            `query #${i} ${JSON.stringify(text)} (${planSearch(text).kind})`,
          );
          if (bySubstring(parts)) seen.substring++;
          else seen.words++;
          if (want.length > 0) seen.hits++;
          for (const p of parts) if (p.kind === "op" && p.op !== "") seen.operators.add(p.op);
        }
        assert.ok(seen.substring > size / 4, `substring queries: ${seen.substring}`);
        assert.ok(seen.words > size / 10, `word queries: ${seen.words}`);
        assert.ok(seen.hits > size / 3, `queries with hits: ${seen.hits}`);
        assert.equal(seen.operators.size, 3);
      },
    );
  }

  test("searchMessages() requires every word of a mixed query", () => {
    const texts = ["记忆 docker", "记忆 AND docker", "docker 数据", "docker 🚀", "记忆断裂 go"];
    for (const text of texts) {
      const hits = s.db.searchMessages(text, { limit: ORACLE_ROWS });
      assert.ok(hits.length > 0, text);
      for (const hit of hits) {
        const content = rows.find((r) => r.id === hit.id)!.content.toLowerCase();
        for (const word of text.replace(" AND ", " ").split(" ")) {
          assert.ok(content.includes(word.toLowerCase()), `${text}: ${content}`);
        }
      }
    }
  });
});
