/**
 * A common word with a source of few sessions (`search the --source
 * signal`) is ranked over those sessions' ids only (`source_ranges.ts`),
 * where FTS5 ranked every match of the word before the filter refused
 * nearly all of them. The pages must stay the one statement's, hit for hit,
 * snippet for snippet, on both sides of the choice.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import { MAX_SESSIONS, sourceRangesOf } from "../lib/sqlite/search/source_ranges.ts";
import type { RankedQuery } from "../lib/sqlite/search/ranked.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { mulberry32, type Random } from "./_random.ts";
import { type MessageSeed, seeded, type SessionSeed } from "./_search_data.ts";

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

/** Sources by how many sessions they hold: one over the limit, the rest under it. */
const SOURCES: readonly [string, number][] = [
  ["signal", 1],
  ["matrix", 2],
  ["whatsapp", 3],
  ["email", MAX_SESSIONS],
  ["cli", MAX_SESSIONS + 1],
  ["telegram", 6],
];
const WORDS = ["the", "the", "the", "docker", "kernel", "alpha", "beta", "deploy", "zeta"];
const QUERIES = [
  "the",
  "docker",
  "kernel OR alpha",
  '"the docker"',
  "deplo*",
  "zeta",
  "the AND beta",
];

function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

/**
 * Sessions of every source; their messages partly in blocks (a session's
 * ids together), partly interleaved (ranges that overlap), with few words so
 * that ranks tie.
 */
async function corpus(seed: number): Promise<{ path: string; sessions: SessionSeed[] }> {
  const rnd = mulberry32(seed);
  const sessions: SessionSeed[] = SOURCES.flatMap(([source, count]) =>
    Array.from({ length: count }, (_, i) => ({ id: `${source}-${i}`, source }))
  );
  const messages: MessageSeed[] = [];
  let t = 1000;
  for (let block = 0; block < 60; block++) {
    const interleaved = rnd() < 0.4;
    const one = pick(rnd, sessions).id;
    for (let i = 0; i < 1 + Math.floor(rnd() * 25); i++) {
      const words = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick(rnd, WORDS));
      messages.push({
        session_id: interleaved ? pick(rnd, sessions).id : one,
        role: pick(rnd, ["user", "assistant", "tool"]),
        content: words.join(" "),
        timestamp: t++,
      });
    }
  }
  const s = await seeded(sessions, messages);
  s.db.close();
  return { path: s.path, sessions };
}

function randomOptions(rnd: Random, sessions: readonly SessionSeed[]): SearchOptions {
  const sources = Array.from(
    { length: 1 + Math.floor(rnd() * 2) },
    () => pick(rnd, SOURCES)[0],
  );
  const options: Record<string, unknown> = {
    sourceFilter: rnd() < 0.05 ? [] : sources,
    limit: 1 + Math.floor(rnd() * 30),
    offset: rnd() < 0.5 ? 0 : Math.floor(rnd() * 60),
  };
  if (rnd() < 0.2) options.roleFilter = [pick(rnd, ["user", "assistant", "tool", "system"])];
  if (rnd() < 0.15) options.sessionId = pick(rnd, sessions).id;
  if (rnd() < 0.15) options.since = 1000 + Math.floor(rnd() * 800);
  if (rnd() < 0.15) options.until = 1000 + Math.floor(rnd() * 800);
  return options as SearchOptions;
}

describe("a source of few sessions is ranked over their ids", () => {
  for (const seed of [1, 2, 3]) {
    test(`gives the one statement's pages, hit for hit (seed ${seed})`, async () => {
      const { path, sessions } = await corpus(seed);
      using store = await openStore(path);
      const rnd = mulberry32(seed * 7919);
      let ranged = 0, unranged = 0, hits = 0;
      for (let i = 0; i < 300; i++) {
        const query = pick(rnd, QUERIES);
        const options = randomOptions(rnd, sessions);
        const { value, sqls } = withStatements(store, () => searchMessages(store, query, options));
        const whole = searchMessages(store, query, options, { sourceRanges: "none" });
        assert.deepEqual(value, whole, `${query} ${JSON.stringify(options)}`);
        if (sqls.some((sql) => sql.includes("hit_rank"))) ranged++;
        else unranged++;
        hits += value.length;
      }
      // Both sides of the choice were taken, with hits to compare.
      assert.ok(ranged > 50 && unranged > 50 && hits > 500, `${ranged} ${unranged} ${hits}`);
    });
  }

  test("the choice: a source of at most MAX_SESSIONS sessions, a page not too deep", async () => {
    const { path } = await corpus(4);
    using store = await openStore(path);
    const query = (sources: string[] | null, more: Partial<RankedQuery> = {}): RankedQuery => ({
      table: "messages_fts",
      match: "the",
      check: null,
      filters: { sql: "", params: [] },
      limit: 20,
      offset: 0,
      sources,
      ...more,
    });
    assert.equal(sourceRangesOf(store, query(null)), undefined);
    assert.equal(sourceRangesOf(store, query(["cli"])), undefined, "9 sessions");
    assert.equal(sourceRangesOf(store, query(["email", "signal"])), undefined, "9 sessions");
    assert.equal(sourceRangesOf(store, query(["signal"], { offset: 10_000 })), undefined);
    assert.deepEqual(sourceRangesOf(store, query([])), []);
    assert.deepEqual(sourceRangesOf(store, query(["nobody"])), []);
    const email = sourceRangesOf(store, query(["email"]))!;
    assert.ok(email.length >= 1 && email.length <= MAX_SESSIONS);
    // Disjoint, lowest first, and every message of the source inside one of them.
    for (let i = 1; i < email.length; i++) assert.ok(email[i].lo! > email[i - 1].hi! + 1);
    const ids = store.db.prepare(
      "SELECT m.id AS id FROM messages m JOIN sessions s ON s.id = m.session_id " +
        "WHERE s.source = 'email'",
    ).all().map((row) => Number(row.id));
    for (const id of ids) assert.ok(email.some((r) => r.lo! <= id && id <= r.hi!), `${id}`);
    // Cut by the session and time filters' range.
    const [first] = email;
    const cut = sourceRangesOf(store, query(["email"], { ids: { lo: first.lo! + 1, hi: null } }))!;
    assert.equal(cut[0].lo, first.lo! + 1);
  });

  test("a narrow source ranks over its ranges only; a wide one in one statement", async () => {
    const { path } = await corpus(5);
    using store = await openStore(path);
    const narrow = withStatements(
      store,
      () => searchMessages(store, "the", { sourceFilter: ["matrix"] }),
    );
    const ranking = narrow.sqls.filter((sql) => /ORDER BY rank/.test(sql));
    assert.ok(ranking.length > 0);
    for (const sql of ranking) assert.match(sql, /rowid >= CAST\(\? AS INTEGER\)/);
    const wide = withStatements(
      store,
      () => searchMessages(store, "the", { sourceFilter: ["cli"] }),
    );
    assert.ok(!wide.sqls.some((sql) => sql.includes("hit_rank")));
  });
});
