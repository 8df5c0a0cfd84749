/**
 * The cases of `countSearchHits` shared by both engines' tests: queries on
 * every search path, the filters, and the check that the count is the length
 * of what `searchMessages` returns, up to each bound.
 */
import assert from "node:assert/strict";
import type { SearchOptions } from "../lib/core/search/options.ts";
import type { SearchHit, SessionRow } from "../lib/core/types.ts";

/**
 * Words of the v11 fixture on each search path, and queries the search
 * retries or answers `[]` for.
 */
export const COUNT_QUERIES: readonly string[] = [
  "docker",
  "docker*",
  '"docker compose"',
  "docker OR kubernetes",
  "docker NOT compose",
  "chat-send",
  "P2.2",
  "记忆",
  "记",
  "记忆断裂",
  "数据 OR docker",
  "记 OR 忆",
  "こんにちは",
  "🚀",
  "e",
  '"unbalanced (AND',
  "content:docker",
  "-content:docker",
  "docker\u0000compose",
  "zzzqqq",
  "***",
  "",
];

/** More hits than a fixture holds. */
export const ALL = 100_000;

/**
 * Every filter a search takes, around two sessions of the store: sources,
 * roles, one session, a time bound halfway between the two, inactive rows.
 */
export function filterCases(first: SessionRow, second: SessionRow): SearchOptions[] {
  const middle = (first.started_at + second.started_at) / 2;
  return [
    {},
    { sourceFilter: ["cli"] },
    { sourceFilter: [] },
    { excludeSources: ["cli"] },
    { roleFilter: ["assistant"] },
    { sessionId: first.id },
    { sessionId: "no-such-session" },
    { since: middle },
    { until: middle },
    { since: middle, sourceFilter: ["telegram", "cli"], roleFilter: ["user", "tool"] },
    { includeInactive: true },
  ];
}

/** A store or a `SessionDB`: what the count is checked against. */
export interface Counting {
  searchMessages(query: string, options: SearchOptions): SearchHit[] | Promise<SearchHit[]>;
  countSearchHits(query: string, options: SearchOptions, upTo: number): number | Promise<number>;
}

/**
 * Asserts that `countSearchHits` gives the length of what `searchMessages`
 * returns for each query and filter, counting up to all, 1 and 0.
 *
 * @returns How many query and filter pairs had more than one hit (the
 *   comparison is not of empty answers).
 */
export async function checkCounts(
  store: Counting,
  queries: readonly string[],
  filters: readonly SearchOptions[],
): Promise<number> {
  let found = 0;
  for (const query of queries) {
    for (const options of filters) {
      const hits = (await store.searchMessages(query, { ...options, limit: ALL, offset: 0 }))
        .length;
      const label = `${JSON.stringify(query).slice(0, 80)} ${JSON.stringify(options)}`;
      assert.equal(await store.countSearchHits(query, options, ALL), hits, label);
      assert.equal(
        await store.countSearchHits(query, options, 1),
        Math.min(hits, 1),
        `${label}, up to 1`,
      );
      assert.equal(await store.countSearchHits(query, options, 0), 0, `${label}, up to 0`);
      if (hits > 1) found++;
    }
  }
  return found;
}
