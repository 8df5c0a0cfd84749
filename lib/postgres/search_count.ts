/**
 * `countSearchHits` on PostgreSQL: how many hits `searchMessagesPg` finds
 * with these filters, up to a bound, counted over the same matched rows
 * (`search.ts`'s `Matches`: the same plan, retry and filters) without
 * ranking them, building a snippet or reading a context. What a search past
 * its last hit says ("past the first N hits"): reading every hit to count
 * them took 22 s for a frequent word at a million messages on SQLite.
 *
 * @module
 */
import { checkCount, checkSeconds } from "../core/paging.ts";
import { planSearch, wordsFallback } from "../core/search/plan.ts";
import type { PgQuery } from "./_client_types.ts";
import {
  CUSTOM_PLAN,
  type Matches,
  type PgSearchOptions,
  substringMatches,
  trigramMatches,
  wordsMatches,
  wordsPlanQuery,
} from "./search.ts";

/** How many of `matches` there are, up to `upTo`. */
async function countMatches(query: PgQuery, matches: Matches, upTo: number): Promise<number> {
  const n = matches.params.length + 1;
  const [row] = await query(
    `SELECT count(*) AS n FROM (
       SELECT 1 FROM ${matches.from} WHERE ${matches.where} LIMIT $${n}
     ) hits`,
    [...matches.params, upTo],
    CUSTOM_PLAN,
  );
  return Number(row?.n ?? 0);
}

/** The matched rows of `text`'s plan; `null` or `undefined` when the search answers `[]`. */
async function planMatches(
  query: PgQuery,
  text: string,
  options: PgSearchOptions,
): Promise<Matches | null | undefined> {
  const plan = planSearch(text);
  if (plan.kind === "nothing") return null;
  if (plan.kind === "substring") return substringMatches(plan.condition, options);
  if (plan.index === "trigram") return trigramMatches(plan.expression, plan.check, options);
  // A words query FTS5 would refuse is searched again as its retry, as the search does.
  const tsquery = wordsPlanQuery(plan);
  return tsquery == null ? tsquery : await wordsMatches(query, tsquery, options);
}

/**
 * Counts the hits of `text` as `SessionDB.countSearchHits` does: the
 * length of `searchMessagesPg(query, text, { ...options, limit: upTo,
 * offset: 0 })`, without reading them.
 *
 * @param query The store's query function.
 * @param text The user's query, any text.
 * @param options The filters; `limit`, `offset` and `sort` are ignored.
 * @param upTo The most hits to count.
 * @returns The count, at most `upTo`.
 * @throws {RangeError} When `upTo` is not a non-negative integer, or `since`
 *   or `until` is given but not a finite number of seconds.
 */
export async function countSearchHitsPg(
  query: PgQuery,
  text: string,
  options: PgSearchOptions,
  upTo: number,
): Promise<number> {
  const cap = checkCount("count search hits", "upTo", upTo);
  checkSeconds("search messages", "since", options.since);
  checkSeconds("search messages", "until", options.until);
  if (cap === 0) return 0;
  const matches = await planMatches(query, text, options);
  const counted = matches == null ? 0 : await countMatches(query, matches, cap);
  if (counted > 0 || matches === undefined) return counted;
  // Nothing by the word index: the words by substring, as the search reads them.
  const fallback = wordsFallback(text);
  if (fallback === undefined) return 0;
  return await countMatches(query, substringMatches(fallback.condition, options), cap);
}
