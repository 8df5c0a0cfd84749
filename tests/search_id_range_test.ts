/**
 * A filtered search reads the full-text index over the ids its session and
 * time filters leave (`lib/sqlite/search/id_range.ts`): the same hits in
 * the same order as reading the whole index, on files whose timestamps
 * follow ids and on files where they do not (the bound is then not proven,
 * and not used). Each file's check runs under one of Deno, Bun and Node
 * (`caseSkip`); each file is built once and shared by the tests that read it.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import { idRangeOf } from "../lib/sqlite/search/id_range.ts";
import { inSnapshot } from "../lib/sqlite/search/snapshot.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { tempDbPath } from "./_helpers.ts";
import { insertRows, type MessageSeed } from "./_search_data.ts";
import { mulberry32 } from "./_random.ts";
import { caseSkip } from "./reliability/_runtimes.ts";

const START = 1_700_000_000;
const COUNT = 3000;
const SESSIONS = "abcdefghijkl".split("");
const WORDS = ["docker", "kernel", "deploy", "cache", "rust", "数据库性能"];

/** How timestamps relate to ids. */
type Shape = "growing" | "backdated" | "early-future" | "shuffled";

function messages(shape: Shape, seed: number): MessageSeed[] {
  const random = mulberry32(seed);
  const out: MessageSeed[] = [];
  let t = START;
  for (let i = 0; i < COUNT; i++) {
    if (random() >= 0.2) t += 1 + Math.floor(random() * 3);
    let timestamp = t;
    // An import of old messages: high ids, early times.
    if (shape === "backdated" && i > 2500 && random() < 0.3) timestamp = START + random() * 500;
    // A clock far ahead on one early writer: low ids, late times.
    if (shape === "early-future" && i < 400 && random() < 0.05) timestamp = START + 1e6;
    if (shape === "shuffled") timestamp = START + Math.floor(random() * COUNT * 2);
    const words = Array.from(
      { length: 1 + Math.floor(random() * 5) },
      () => WORDS[Math.floor(random() * WORDS.length)],
    );
    out.push({
      session_id: SESSIONS[(Math.floor(i / 250) + (random() < 0.3 ? 1 : 0)) % SESSIONS.length],
      role: random() < 0.5 ? "user" : "assistant",
      content: words.join(" "),
      timestamp,
    });
  }
  return out;
}

/** The file of each shape, written once: the tests only read it, each with a store of its own. */
const files = new Map<Shape, Promise<string>>();

async function writeFile(shape: Shape): Promise<string> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  await insertRows(path, SESSIONS.map((id) => ({ id, source: "cli" })), []);
  await insertRows(path, [], messages(shape, shape.length * 131));
  return path;
}

async function build(shape: Shape): Promise<Store> {
  if (!files.has(shape)) files.set(shape, writeFile(shape));
  const path = await files.get(shape)!;
  const { db, writer } = await openConnection({ path, readonly: true });
  return new Store(db, writer, { path, readonly: true });
}

/** Late, early, a window, past the end, before the start, and one that leaves out almost nothing. */
const FILTERS: SearchOptions[] = [
  { since: START + 4200 },
  { until: START + 700 },
  { since: START + 1500, until: START + 2600 },
  { since: START + 1e7 },
  { until: START - 10 },
  { since: START + 20 },
  { since: START + 4000, sessionId: "k" },
  { until: START + 900, sessionId: "a", roleFilter: ["user"] },
];
const PAGES: SearchOptions[] = [{ limit: 20 }, { limit: 7, offset: 11 }, { limit: 5000 }];
/** Words, a prefix, a phrase, NOT, three CJK characters (trigram) and two (substring). */
const QUERIES = [
  "docker",
  "kernel OR rust",
  "deplo*",
  '"docker kernel"',
  "cache NOT rust",
  "数据库",
  "性能",
  "库性 OR 数据",
];

for (
  const [index, shape] of (["growing", "backdated", "early-future", "shuffled"] as const).entries()
) {
  describe(`searchMessages() with time filters on a file whose timestamps are ${shape}`, {
    skip: caseSkip(index),
  }, () => {
    let store: Store;
    before(async () => {
      store = await build(shape);
    });
    after(() => store.db.close());

    // 576 searches checked against brute force (192 reads of it): a few seconds each on a slow
    // machine (Bun, Deno in parallel).
    test("searchMessages() gives what reading the whole index gives, hit for hit", {
      timeout: 60_000,
    }, () => {
      let hits = 0;
      for (const query of QUERIES) {
        for (const filter of FILTERS) {
          for (const sort of ["rank", "newest", "oldest"] as const) {
            // Every hit in order, read once; each page is its slice (the file holds fewer
            // messages than the largest page).
            const whole = searchMessages(store, query, { ...filter, sort, limit: COUNT }, {
              idRange: "none",
              sort: "full",
              substring: "scan",
            });
            for (const page of PAGES) {
              const options = { ...filter, ...page, sort };
              const offset = page.offset ?? 0;
              const got = searchMessages(store, query, options);
              assert.deepEqual(
                got,
                whole.slice(offset, offset + page.limit!),
                `${query} ${JSON.stringify(options)}`,
              );
              hits += got.length;
            }
          }
        }
      }
      assert.ok(hits > 1000, `the filters leave hits to compare: ${hits}`);
    });
  });
}

describe("idRangeOf()", () => {
  let growing: Store;
  let early: Store;
  let backdated: Store;
  before(async () => {
    [growing, early, backdated] = await Promise.all([
      build("growing"),
      build("early-future"),
      build("backdated"),
    ]);
  });
  after(() => [growing, early, backdated].forEach((s) => s.db.close()));

  const range = (store: Store, filters: Parameters<typeof idRangeOf>[1]) =>
    inSnapshot(store, () => idRangeOf(store, filters));
  const firstAtOrAfter = (store: Store, t: number) =>
    Number(store.db.prepare("SELECT min(id) AS id FROM messages WHERE timestamp >= ?").get(t)?.id);
  const lastBefore = (store: Store, t: number) =>
    Number(store.db.prepare("SELECT max(id) AS id FROM messages WHERE timestamp < ?").get(t)?.id);

  test("idRangeOf() bounds a late since and an early until by the first and last id in time", () => {
    const since = START + 4200, until = START + 700;
    assert.deepEqual(range(growing, { since }), { lo: firstAtOrAfter(growing, since), hi: null });
    assert.deepEqual(range(growing, { until }), { lo: null, hi: lastBefore(growing, until) });
    // Past the last message: nothing can match.
    const future = range(growing, { since: START + 1e7 });
    assert.ok(future.lo !== null && future.lo > lastBefore(growing, Infinity), String(future.lo));
  });

  test("idRangeOf() leaves a bound open when a message out of time order would fall outside it", () => {
    // Early ids with late timestamps: no lower bound can be proven for a late since.
    assert.deepEqual(range(early, { since: START + 4200 }), { lo: null, hi: null });
    assert.ok(firstAtOrAfter(early, START + 4200) < 400);
    // Late ids with early timestamps: no upper bound for an early until.
    assert.deepEqual(range(backdated, { until: START + 700 }), { lo: null, hi: null });
    // Away from the rows out of order, each file is in time order.
    assert.notEqual(range(early, { until: START + 700 }).hi, null);
    assert.notEqual(range(backdated, { since: START + 2000 }).lo, null);
  });

  test("idRangeOf() narrows a bound that leaves out little no further", () => {
    assert.deepEqual(range(growing, { since: START + 20 }), { lo: null, hi: null });
    assert.deepEqual(range(growing, {}), { lo: null, hi: null });
  });

  test("idRangeOf() reads a session's range as its first and last message, and an empty one as empty", () => {
    const ends = growing.db.prepare(
      "SELECT min(id) AS lo, max(id) AS hi FROM messages WHERE session_id = 'c'",
    ).get();
    assert.deepEqual(range(growing, { sessionId: "c" }), { lo: ends?.lo, hi: ends?.hi });
    const none = range(growing, { sessionId: "nobody" });
    assert.ok(none.lo !== null && none.hi !== null && none.lo > none.hi);
    // With a time bound too: the narrower of each end.
    const both = range(growing, { sessionId: "c", until: START + 700 });
    assert.equal(both.lo, ends?.lo);
    assert.equal(both.hi, Math.min(Number(ends?.hi), lastBefore(growing, START + 700)));
  });

  test("a since the bisection would misplace still finds the early message stamped late", () => {
    const late = early.db.prepare(
      "SELECT id FROM messages WHERE timestamp = ? AND content LIKE '%docker%' ORDER BY id LIMIT 1",
    ).get(START + 1e6);
    assert.ok(late !== undefined, "the file has an early docker message stamped late");
    for (const sort of ["rank", "newest", "oldest"] as const) {
      const ids = searchMessages(early, "docker", { since: START + 4200, limit: 5000, sort })
        .map((hit) => hit.id);
      assert.ok(ids.includes(Number(late.id)), sort);
    }
  });
});
