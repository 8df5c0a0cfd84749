/**
 * A ranked page for a source of few sessions, read over those sessions' ids
 * only. A common word with a narrow `sourceFilter` (`search the --source
 * signal`) had FTS5 rank all of the word's matches, hundreds of thousands,
 * before the filter refused nearly all of them; each session's messages lie
 * between its first and last id, so FTS5 can read those ranges from its
 * index alone (as `id_range.ts` does for one session).
 *
 * One statement per range (merged where they touch or overlap), each giving
 * its first `offset + limit` hits in FTS5's order; the ranges' hits are then
 * merged in that same order: bm25 `rank`, then id, since FTS5 sorts the
 * matches it reads in id order by rank alone and its sort keeps equal ranks
 * in the order they came. bm25's statistics are the whole table's whatever
 * range is read, so each hit's rank, and the page, are those of the
 * one-statement page. As over the whole index (`ranked.ts`), a page known
 * empty by counting the ranges' matches in id order is not ranked.
 *
 * Each statement pays FTS5's reading of every phrase's whole document list
 * for bm25 (about a fifteenth of ranking every match of that phrase, measured
 * at 200,000 messages: `the`, 182,922 matches, 787 ms whole, ~40 ms a range),
 * so the ranges are read only for a source of at most {@linkcode MAX_SESSIONS}
 * sessions, counted first from the sessions' source index.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import {
  countMatches,
  hitColumnsSql,
  type HitRow,
  matchParams,
  matchWhereSql,
  type RankedQuery,
} from "./ranked.ts";
import type { IdRange } from "./id_range.ts";
import { isMatchError, isPatternError } from "./query_error.ts";

/** A source of at most this many sessions is read over their ids. */
export const MAX_SESSIONS = 8;

/** A page deeper than this is left to the one statement (each range would give it whole). */
const MAX_DEPTH = 10_000;

/** The sessions of the sources, counted up to a limit (`idx_sessions_source`). */
const COUNT_SQL = "SELECT count(*) AS n FROM (SELECT 1 FROM sessions " +
  "WHERE source IN (SELECT value FROM json_each(?)) LIMIT ?)";

/** Each session's first and last message id (`idx_messages_session`), lowest first. */
const RANGES_SQL = "SELECT min(m.id) AS lo, max(m.id) AS hi FROM messages m " +
  "WHERE m.session_id IN (SELECT id FROM sessions WHERE source IN (SELECT value FROM json_each(?))) " +
  "GROUP BY m.session_id ORDER BY lo";

/** A bound of `range` that cuts `ids`, or `ids`' own bound. */
function within(range: { lo: number; hi: number }, ids: IdRange | undefined): IdRange {
  return {
    lo: ids?.lo != null ? Math.max(range.lo, ids.lo) : range.lo,
    hi: ids?.hi != null ? Math.min(range.hi, ids.hi) : range.hi,
  };
}

/**
 * The id ranges a ranked page of `query` is read over, or `undefined` for
 * the one statement: the query has no source filter, its sources hold more
 * than {@linkcode MAX_SESSIONS} sessions, or the page is deeper than
 * `MAX_DEPTH`. Call it inside the search's read transaction.
 *
 * @param store The open store.
 * @param query The ranked query (its `sources`, `ids`, `limit`, `offset`).
 * @returns Disjoint ranges, lowest first, inside `query.ids`; an empty list
 *   when the sources hold no message in range.
 * @throws {SqliteError} On a storage failure.
 */
export function sourceRangesOf(store: Store, query: RankedQuery): IdRange[] | undefined {
  const { sources, offset, limit } = query;
  if (sources == null || offset + limit > MAX_DEPTH) return undefined;
  const list = JSON.stringify(sources);
  const sessions = Number(store.statement(COUNT_SQL).get(list, MAX_SESSIONS + 1)?.n ?? 0);
  if (sessions > MAX_SESSIONS) return undefined;
  const merged: { lo: number; hi: number }[] = [];
  for (const row of store.statement(RANGES_SQL).all(list)) {
    const lo = Number(row.lo), hi = Number(row.hi);
    const last = merged.at(-1);
    if (last !== undefined && lo <= last.hi + 1) last.hi = Math.max(last.hi, hi);
    else merged.push({ lo, hi });
  }
  return merged.map((range) => within(range, query.ids))
    .filter((range) => range.lo! <= range.hi!);
}

/** A page statement that also gives each hit's rank, for the merge. */
function rangePageSql(query: RankedQuery): string {
  const { table } = query;
  return `SELECT ${table}.rank AS hit_rank, ${hitColumnsSql(table, query.cutLong, query.longBytes)}
FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
${matchWhereSql(table, query)}
ORDER BY rank
LIMIT ?`;
}

/** FTS5's order: rank, then id. */
function byRankThenId(a: HitRow, b: HitRow): number {
  return Number(a.hit_rank) - Number(b.hit_rank) || Number(a.id) - Number(b.id);
}

/**
 * Whether no more than `offset` hits of `query` lie in `ranges`, counted in
 * id order without ranking (as `rankedPage` does over the whole index):
 * `undefined` when FTS5 rejects the MATCH expression.
 */
function knownEmptyOver(
  store: Store,
  query: RankedQuery,
  ranges: readonly IdRange[],
): boolean | undefined {
  let counted = 0;
  for (const ids of ranges) {
    const more = countMatches(store, { ...query, ids }, query.offset + 1 - counted);
    if (more === undefined) return undefined;
    counted += more;
    if (counted > query.offset) return false;
  }
  return true;
}

/**
 * One page of ranked hits of `query` read over `ranges`
 * ({@linkcode sourceRangesOf}): the same rows, in the same order, as
 * `rankedPage`. Call it inside the search's read transaction.
 *
 * @param store The open store.
 * @param query The ranked query; its filters still decide every hit.
 * @param ranges Disjoint id ranges holding every message the filters can pass.
 * @returns The hit rows, or `undefined` when FTS5 rejects the MATCH expression.
 * @throws {SqliteError} On a storage failure.
 */
export function pageOverRanges(
  store: Store,
  query: RankedQuery,
  ranges: readonly IdRange[],
): HitRow[] | undefined {
  const depth = query.offset + query.limit;
  // No range still asks FTS5, over no id, whether it takes the MATCH expression.
  const read = ranges.length > 0 ? ranges : [{ lo: 1, hi: 0 }];
  const empty = knownEmptyOver(store, query, read);
  if (empty !== false) return empty === undefined ? undefined : [];
  const rows: HitRow[] = [];
  try {
    for (const ids of read) {
      const ranged = { ...query, ids };
      const params: SqlValue[] = [...matchParams(ranged), depth];
      rows.push(...store.statement(rangePageSql(ranged)).all(...params));
    }
  } catch (error) {
    if (isMatchError(error, query.match) || isPatternError(error)) return undefined;
    throw error;
  }
  rows.sort(byRankThenId);
  const page = rows.slice(query.offset, depth);
  for (const row of page) delete row.hit_rank;
  return page;
}
