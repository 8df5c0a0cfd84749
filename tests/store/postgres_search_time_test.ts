/**
 * A search by time on PostgreSQL reads the latest (or earliest) messages
 * first and falls back to ordering every match when they cannot hold the
 * page (lib/postgres/search.ts, `wordsByTime`). The same 3,000 messages,
 * written with the same clock to a SQLite file and to the server, must give
 * the same hits in the same time order on both sides of that line: a page
 * found among the rows read, a word the latest rows lack, a word older than
 * all of them, a page that ends in a run of equal timestamps at the last row
 * read, session and time bounds, deep pages; and ranked searches in one
 * session or a small time window, which go through the session or time
 * index.
 *
 * The cases that rank or sort a thousand hits and more (the slowest) are
 * spread: each runs under one of Deno, Bun and Node (`caseSkip`). Which
 * hits they give is the server's answer to the library's query; the rows
 * come back through the runtime's client as in every other case, which
 * every runtime runs, each path (session index, time index, the words, a
 * sort by time) among them.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { SearchOptions } from "../../lib/core/search/options.ts";
import { tempDbPath } from "../_helpers.ts";
import { openPgStore, PG_SKIP } from "./_pg.ts";
import { caseSkip } from "../reliability/_runtimes.ts";

const START = 1_700_000_000;

/** Writes the corpus through `store`, whose clock reads `clock.now`. */
async function fill(store: SessionStore, clock: { now: number }): Promise<void> {
  await store.createSession("old", "cli");
  await store.createSession("new", "telegram");
  // 400 old messages, a second apart: "relic" only here, "ancient" in all.
  for (let batch = 0; batch < 4; batch++) {
    clock.now = START + batch * 100;
    await store.appendMessages(
      "old",
      Array.from({ length: 100 }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        content: `ancient relic ${batch * 100 + i}`,
      })),
    );
  }
  // 2,600 between them, "middle" in all: with them, a window from START holds more messages
  // than a ranked search checks one by one (SMALL_WINDOW, 5,000), and goes through the words.
  await store.createSession("mid", "cli");
  for (let batch = 0; batch < 26; batch++) {
    clock.now = START + 1_000 + batch * 100;
    await store.appendMessages(
      "mid",
      Array.from({ length: 100 }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        content: `middle fresh ${batch * 100 + i}${i === 50 ? " relic" : ""}`,
      })),
    );
  }
  // 2,600 newer ones: "fresh" in all, "ancient" in one of 500.
  for (let batch = 0; batch < 26; batch++) {
    clock.now = START + 10_000 + batch * 100;
    await store.appendMessages(
      "new",
      Array.from({ length: 100 }, (_, i) => {
        const k = batch * 100 + i;
        return {
          role: i % 2 ? "assistant" : "user",
          content: `fresh note ${k}${k % 500 === 7 ? " ancient" : ""}${k >= 2590 ? " edge" : ""}`,
        };
      }),
    );
  }
  // A run of 40 messages with one timestamp where the 1,000 latest rows end: below batches
  // 17-25 and the 70 newest of batch 16 (appendMessages spaces a batch by 1e-6 s), so rows
  // 971-1,010 share it. A page of "edge" (the 10 newest rows, then the run) ends inside it.
  for (let i = 0; i < 40; i++) {
    clock.now = START + 10_000 + 16 * 100 + 29.5e-6;
    await store.appendMessage("new", { role: "user", content: `edge tie ${i}` });
  }
}

describe("search by time on PostgreSQL, against the SQLite engine", { skip: PG_SKIP }, () => {
  const clocks = { sqlite: { now: START }, pg: { now: START } };
  let sqlite: SessionStore;
  let pg: SessionStore;
  before(async () => {
    sqlite = await openStore(tempDbPath(), { clock: () => clocks.sqlite.now });
    pg = await openPgStore({ clock: () => clocks.pg.now });
    await fill(sqlite, clocks.sqlite);
    await fill(pg, clocks.pg);
  });
  after(async () => {
    await sqlite?.close();
    await pg?.close();
  });

  /** The next spread case's number, for `caseSkip`. */
  let spread = 0;
  const cases: [string, SearchOptions][] = [
    ["fresh", {}], // found among the latest rows
    ["fresh", { offset: 130, limit: 7 }],
    ["ancient", {}], // the latest rows hold too few
    ["relic", {}], // none among the latest rows
    ["edge", {}], // the page ends in the run of equal timestamps
    ["edge", { limit: 15 }],
    ["relic", { sessionId: "old", limit: 5 }],
    ["fresh", { since: START + 12_000, limit: 9 }],
    ["ancient", { until: START + 20_000, limit: 12 }],
    ["fresh OR relic", { roleFilter: ["assistant"], limit: 11 }],
    ["ancient", { sourceFilter: ["telegram"] }],
    ["fresh", { offset: 2_000, limit: 5 }], // past the rows read for the first pages
    ["fresh", { limit: 1_000 }],
  ];
  // Ranked, one session's matches are found through the session index, and a small time
  // window's through the time index (a wide one through the words): the same hits.
  for (
    const [text, options, many] of [
      ["relic", { sessionId: "old" }],
      ["ancient", { sessionId: "new" }],
      ["fresh", { sessionId: "new", since: START + 12_000, until: START + 12_500 }],
      ["fresh", { since: START + 12_000 }], // 500 messages in the window
      ["fresh", { since: START + 12_000, sourceFilter: ["telegram"] }],
      ["middle", { until: START + 2_000 }], // 1,400
      ["fresh OR relic", { since: START + 500, until: START + 11_000 }, "spread"], // 3,700
      ["fresh", { since: START }, "spread"], // all 5,640: wide
      ["relic", { until: START + 50_000, excludeSources: ["telegram"] }], // wide
      ["ancient", { since: START - 1, roleFilter: ["user"] }], // wide
    ] as [string, SearchOptions, "spread"?][]
  ) {
    const skip = many === "spread" && caseSkip(spread++);
    test(`${text} ranked ${JSON.stringify(options)}`, { skip }, async () => {
      const wide = { ...options, limit: 10_000 };
      const ids = (hits: { id: number }[]) => hits.map((h) => h.id).sort((a, b) => a - b);
      const want = ids(await sqlite.searchMessages(text, wide));
      assert.ok(want.length > 0, "the case finds something");
      assert.deepEqual(ids(await pg.searchMessages(text, wide)), want);
    });
  }
  for (const sort of ["newest", "oldest"] as const) {
    for (const [text, options] of cases) {
      const skip = options.limit === 1_000 && caseSkip(spread++);
      test(`${text} ${sort} ${JSON.stringify(options)}`, { skip }, async () => {
        const want = await sqlite.searchMessages(text, { ...options, sort });
        const got = await pg.searchMessages(text, { ...options, sort });
        const times = (hits: { timestamp: number }[]) => hits.map((h) => h.timestamp);
        assert.ok(want.length > 0, "the case finds something");
        assert.deepEqual(times(got), times(want));
        // Equal timestamps may come in another order (the engines rank differently): same set.
        const ids = (hits: { id: number }[]) => hits.map((h) => h.id).sort((a, b) => a - b);
        if (!want.some((h, i) => i > 0 && h.timestamp === want[i - 1].timestamp)) {
          assert.deepEqual(got.map((h) => h.id), want.map((h) => h.id));
        } else assert.deepEqual(ids(got), ids(want));
        // Each hit's neighbours in its session, ties in time by id, as SQLite gives them.
        const contexts = (hits: { id: number; context: unknown }[]) =>
          Object.fromEntries(hits.map((h) => [h.id, h.context]));
        assert.deepEqual(contexts(got), contexts(want));
      });
    }
  }
});
