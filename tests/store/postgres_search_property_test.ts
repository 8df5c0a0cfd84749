/**
 * The search property test on PostgreSQL, with the SQLite engine as the
 * oracle: generated hostile queries (the generator of
 * `tests/search_property_test.ts`) against the v11 fixture's data on both
 * engines; PostgreSQL never throws, returns well-formed hits, and finds
 * exactly the messages SQLite finds (all matches compared, order aside).
 * The oracle is a new SQLite file filled the same way as the PostgreSQL
 * store (importSession), not the fixture itself: the fixture's trigram
 * index was built by SQLite 3.40, which indexed text only up to a NUL.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SearchOptions } from "../../lib/core/search/options.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { openStore } from "../../lib/open_store.ts";
import { tempDbPath } from "../_helpers.ts";
import { mulberry32 } from "../_random.ts";
import { loadFixture } from "./_fixture_data.ts";
import { openPgStore, PG_SKIP } from "./_pg.ts";

const QUERIES = 2_000;
const CHUNKS = 4;
const SEED = 0x5eed;

const WORDS = [
  "docker",
  "kubernetes",
  "chat-send",
  "P2.2",
  "sp_new",
  "simulate.p2.test.ts",
  "C++",
  "terminal",
  "vision_analyze",
  "ZEBRAFISH42",
  "canary",
  "e.g.",
  "foo:bar",
  "记忆",
  "断裂",
  "记忆断裂",
  "数据",
  "通信",
  "Agent通信",
  "100%完成",
  "こんにちは",
  "テスト",
  "週次レポート",
  "안녕",
  "회의록",
  "🚀",
  "👩🏽‍💻",
  "🧑‍🚀",
  "café",
];
const OPERATORS = [
  "AND",
  "OR",
  "NOT",
  "NEAR",
  "NEAR(",
  "NEAR/2",
  "and",
  "Or",
  "nOt",
  "aNd",
  "near",
];
const PUNCTUATION = Array.from("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
const SPACES = [" ", "  ", "\t", "\n", "\u3000", "\u0085", "\u001f", "\u00a0", "\u2028", ""];
const ODD = [
  "\u0000",
  "\ud800",
  "\udfff",
  "\udc00x",
  "\ufeff",
  "\u200b",
  "\u0301",
  "\u007f",
  "\u0007",
];

type Random = () => number;

function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

/** A code point from one of the CJK ranges, Hangul jamo, half-width kana or emoji. */
function randomChar(rnd: Random): string {
  const ranges: Array<[number, number]> = [
    [0x4e00, 0x9fff],
    [0x3040, 0x30ff],
    [0xac00, 0xd7af],
    [0x3000, 0x303f],
    [0x20000, 0x2a6df],
    [0x1100, 0x11ff],
    [0xff61, 0xff9f],
    [0x1f300, 0x1faff],
    [0x20, 0x7e],
  ];
  const [lo, hi] = pick(rnd, ranges);
  return String.fromCodePoint(lo + Math.floor(rnd() * (hi - lo + 1)));
}

function fragment(rnd: Random): string {
  const r = rnd();
  if (r < 0.3) return pick(rnd, WORDS);
  if (r < 0.45) return pick(rnd, OPERATORS);
  if (r < 0.65) {
    return Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(rnd, PUNCTUATION)).join("");
  }
  if (r < 0.85) {
    return Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => randomChar(rnd)).join("");
  }
  return pick(rnd, ODD);
}

function query(rnd: Random, i: number): string {
  const parts: string[] = [];
  const count = 1 + Math.floor(rnd() * 7);
  for (let j = 0; j < count; j++) parts.push(fragment(rnd), pick(rnd, SPACES));
  let text = parts.join("");
  if (i % 200 === 0) {
    // Some 5,000-character queries.
    while (text.length < 5000) text += pick(rnd, SPACES) + fragment(rnd);
    text = text.slice(0, 5000);
  }
  return text;
}

function options(rnd: Random): SearchOptions {
  const sources = ["cli", "telegram", "discord", "tool", "cron", "acp", "tui", "nope"];
  const subset = () => sources.filter(() => rnd() < 0.3);
  const o: SearchOptions = {};
  if (rnd() < 0.2) o.sourceFilter = subset();
  if (rnd() < 0.2) o.excludeSources = subset();
  if (rnd() < 0.2) o.roleFilter = ["user", "assistant", "tool", "system"].filter(() => rnd() < 0.5);
  if (rnd() < 0.3) o.limit = Math.floor(rnd() * 40);
  if (rnd() < 0.2) o.offset = Math.floor(rnd() * 10);
  return o;
}

const KEYS = "id,session_id,role,snippet,timestamp,tool_name,source,model,session_started,context";

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
    }, async () => {
      const rnd = mulberry32(SEED + 7919 * chunk);
      let withHits = 0;
      for (let i = first; i < last; i++) {
        const text = query(rnd, i);
        const option = options(rnd);
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
          assert.equal(Object.keys(hit).join(","), KEYS, `query #${i}`);
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
