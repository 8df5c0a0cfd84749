/**
 * Full-text search sorted by time (`sort: "newest" | "oldest"`), with the
 * newer Python Hermes's meaning: `ORDER BY m.timestamp DESC, rank` (or
 * `ASC`), ties broken by id (newest: higher id first) so that every page is
 * well defined.
 *
 * The full sort ranks every match. Instead, the index is walked in id
 * order from the newest (or oldest) end, a growing chunk at a time, and the
 * walk stops as soon as the page it holds is strictly newer (older) than
 * every message it has not reached, as the connection's
 * {@linkcode MessageTimeline} bounds them. The answer is then the full
 * sort's, exactly. Where timestamps do not follow ids the bounds stay wide,
 * and past {@linkcode WALK_LIMIT} walked matches the full sort runs
 * instead.
 *
 * Two costs of FTS5 shape the statements. Each statement that reads `rank`
 * first reads every match of each phrase (bm25's statistics), so the walk
 * reads none; the rank is read once, at the end, for the candidates that
 * share a timestamp, which is all it orders. And a snippet costs more than
 * finding the match, so the first chunk of a first page (which holds most
 * such pages) carries the hit rows and snippets, and hits found later, or
 * on a later page (whose first chunk holds the skipped matches too), are
 * read back over their id range. Every rowid bound is cast to INTEGER
 * (`fts_rowid.ts`), or FTS5 would read from the start of its index. The
 * full sort makes snippets for its page only.
 *
 * @module
 */
import { snippetColumnsSql } from "./long_snippet.ts";
import type { Store } from "../store.ts";

import { isMatchError, isPatternError } from "./query_error.ts";
import { type HitRow, matchParams, matchWhereSql, type RankedQuery } from "./ranked.ts";
import { timelineOf } from "./timeline.ts";
import { ROWID_PARAM } from "./fts_rowid.ts";
import { inSnapshot } from "./snapshot.ts";

/** The time orders. */
export type TimeOrder = "newest" | "oldest";

/**
 * How a sorted page is found: `"auto"` walks when it can; `"full"` always
 * sorts everything; `"walk"` (for tests) throws where `"auto"` would fall
 * back to the full sort.
 */
export type SortStrategy = "auto" | "full" | "walk";

/** Past this many walked matches, sorting them all is cheaper. */
export const WALK_LIMIT = 20_000;

/** A match the walk has seen; `row` when the chunk that found it carried the hit row. */
interface Candidate {
  readonly id: number;
  readonly timestamp: number;
  readonly row?: HitRow;
}

/** The hit row of a match, its snippet included. */
function hitColumns(table: string, query: RankedQuery): string {
  return `m.id AS id, m.session_id AS session_id, m.role AS role,
  ${snippetColumnsSql(table, query.cutLong, query.longBytes)},
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started`;
}

function fromSql(table: string): string {
  return `FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id`;
}

/** One chunk of the walk: matches beyond an id, in id order; the hit rows too when `rows`. */
function walkSql(table: string, query: RankedQuery, order: TimeOrder, rows: boolean): string {
  const beyond = `${table}.rowid ${order === "newest" ? "<" : ">"} ${ROWID_PARAM}`;
  const columns = rows ? hitColumns(table, query) : "m.id AS id, m.timestamp AS timestamp";
  return `SELECT ${columns}
${fromSql(table)}
${matchWhereSql(table, query)} AND ${beyond}
ORDER BY ${table}.rowid ${order === "newest" ? "DESC" : "ASC"}
LIMIT ?`;
}

/** The rank of chosen matches (bm25 does not depend on the filters). */
function rankSql(table: string): string {
  return `SELECT rowid AS id, rank AS rank FROM ${table}
WHERE ${table} MATCH ? AND rowid IN (SELECT value FROM json_each(?))`;
}

/** The full sort, ids only (a snippet for every match would cost more than the ranking). */
function fullSql(table: string, query: RankedQuery, order: TimeOrder): string {
  const dir = order === "newest" ? "DESC" : "ASC";
  return `SELECT m.id AS id
${fromSql(table)}
${matchWhereSql(table, query)}
ORDER BY m.timestamp ${dir}, rank, m.id ${dir}
LIMIT ? OFFSET ?`;
}

/**
 * The hit rows of chosen ids: the index is read over their id range only
 * (one MATCH, not one per id), and the snippet made for them alone.
 */
function rangeRowsSql(table: string, query: RankedQuery): string {
  return `SELECT ${hitColumns(table, query)}
FROM ${table}
CROSS JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
WHERE ${table} MATCH ? AND ${table}.rowid >= ${ROWID_PARAM} AND ${table}.rowid <= ${ROWID_PARAM}
  AND m.id IN (SELECT value FROM json_each(?))`;
}

/** Orders candidates by time, the newest (oldest) first; ties by id, for now. */
function byTime(order: TimeOrder): (a: Candidate, b: Candidate) => number {
  const sign = order === "newest" ? -1 : 1;
  return (a, b) =>
    a.timestamp !== b.timestamp ? sign * (a.timestamp - b.timestamp) : sign * (a.id - b.id);
}

/**
 * The first `need` of `sorted` (in time order, every candidate that ties
 * with the `need`-th included) as the full sort orders them: the rank is
 * read, in one statement, only for candidates that share a timestamp.
 */
function breakTies(
  store: Store,
  query: RankedQuery,
  order: TimeOrder,
  sorted: readonly Candidate[],
  need: number,
): Candidate[] {
  const tied: number[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const t = sorted[i].timestamp;
    if (sorted[i - 1]?.timestamp === t || sorted[i + 1]?.timestamp === t) tied.push(sorted[i].id);
  }
  if (tied.length === 0) return sorted.slice(0, need);
  const rank = new Map<number, number>();
  for (const row of store.statement(rankSql(query.table)).all(query.match, JSON.stringify(tied))) {
    rank.set(Number(row.id), Number(row.rank));
  }
  const sign = order === "newest" ? -1 : 1;
  const ranked = [...sorted].sort((a, b) =>
    a.timestamp !== b.timestamp
      ? sign * (a.timestamp - b.timestamp)
      : (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0) || sign * (a.id - b.id)
  );
  return ranked.slice(0, need);
}

/** Keeps the first `need` (and every later one that ties with the `need`-th). */
function keepFirst(sorted: Candidate[], need: number): Candidate[] {
  if (sorted.length <= need) return sorted;
  const last = sorted[need - 1].timestamp;
  let end = need;
  while (end < sorted.length && sorted[end].timestamp === last) end++;
  return sorted.slice(0, end);
}

/**
 * The first `need` matches in time order by walking the index, or
 * `undefined` when the walk would cost more than the full sort. With
 * `carryRows`, the first chunk's candidates carry their hit rows.
 */
function walk(
  store: Store,
  query: RankedQuery,
  order: TimeOrder,
  need: number,
  carryRows: boolean,
): Candidate[] | undefined {
  const timeline = timelineOf(store);
  if (!timeline.refresh(store)) return undefined;
  // The walk starts at its end of the id range; the statements bound the other end.
  const newest = order === "newest";
  const ids = query.ids ?? { lo: null, hi: null };
  const chunkQuery = {
    ...query,
    ids: newest ? { lo: ids.lo, hi: null } : { lo: null, hi: ids.hi },
  };
  const params = matchParams(chunkQuery);
  const compare = byTime(order);
  let best: Candidate[] = [];
  let edge = newest
    ? (ids.hi === null ? Number.MAX_SAFE_INTEGER : ids.hi + 1)
    : (ids.lo === null ? Number.MIN_SAFE_INTEGER : ids.lo - 1);
  let chunk = need + 1;
  let walked = 0;
  for (;;) {
    const withRows = carryRows && walked === 0;
    const rows = store.statement(walkSql(query.table, chunkQuery, order, withRows))
      .all(...params, edge, chunk);
    for (const row of rows) {
      best.push({
        id: Number(row.id),
        timestamp: Number(row.timestamp),
        row: withRows ? row : undefined,
      });
    }
    walked += rows.length;
    best = keepFirst(best.sort(compare), need);
    if (rows.length < chunk) break;
    edge = Number(rows[rows.length - 1].id);
    if (best.length >= need) {
      // Every match not walked yet is strictly later (earlier) than the page's last.
      const last = best[need - 1].timestamp;
      if (
        order === "newest"
          ? last > timeline.latestBelow(store, edge, { before: query.until })
          : last < timeline.earliestAbove(store, edge, { after: query.since })
      ) {
        break;
      }
    }
    if (walked >= WALK_LIMIT) return undefined;
    chunk *= 2;
  }
  return breakTies(store, query, order, best, need);
}

/** The hit rows of the walk's page: those its first chunk carried, the others read back. */
function walkedRows(
  store: Store,
  query: RankedQuery,
  page: readonly Candidate[],
): HitRow[] {
  const missing = page.filter((c) => c.row === undefined).map((c) => c.id);
  const found = new Map<number, HitRow>();
  for (const row of rangeRows(store, query, missing)) {
    found.set(Number(row.id), row);
  }
  return page.map((c) => c.row ?? found.get(c.id))
    .filter((row): row is HitRow => row !== undefined);
}

function rangeRows(store: Store, query: RankedQuery, ids: readonly number[]): HitRow[] {
  if (ids.length === 0) return [];
  const { table, match } = query;
  let lo = ids[0], hi = ids[0];
  for (const id of ids) {
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  const byId = new Map<number, HitRow>();
  const sql = rangeRowsSql(table, query);
  for (const row of store.statement(sql).all(match, lo, hi, JSON.stringify(ids))) {
    byId.set(Number(row.id), row);
  }
  return ids.map((id) => byId.get(id)).filter((row): row is HitRow => row !== undefined);
}

/**
 * One page of ranked hits in time order (timestamp, then rank, then id),
 * without context.
 *
 * @param store The open store.
 * @param query The table, MATCH expression, filters and page.
 * @param order `"newest"` or `"oldest"` first.
 * @param strategy `"full"` forces the full sort, `"walk"` forbids it (for tests).
 * @returns The hit rows, or `undefined` when FTS5 rejects the MATCH expression.
 * @throws {SqliteError} On a storage failure.
 * @throws {Error} With `strategy: "walk"`, when the walk gives up.
 */
export function sortedPage(
  store: Store,
  query: RankedQuery,
  order: TimeOrder,
  strategy: SortStrategy = "auto",
): HitRow[] | undefined {
  const { table, match, limit, offset } = query;
  if (limit === 0) return [];
  try {
    return inSnapshot(store, () => {
      // One session's matches are few and read over its id range: sorting them beats walking.
      const full = strategy === "full" || (strategy === "auto" && query.session != null);
      // Past the first page the first chunk carries no hit rows: they would be the skipped
      // ones' too (200,001 snippets for a page at offset 200,000), and the page's are read back.
      const walked = full ? undefined : walk(store, query, order, offset + limit, offset === 0);
      if (walked === undefined && strategy === "walk") {
        throw new Error("Cannot walk the index in time order: the full sort would run");
      }
      if (walked !== undefined) return walkedRows(store, query, walked.slice(offset));
      const ids = store.statement(fullSql(table, query, order)).all(
        ...matchParams(query),
        limit,
        offset,
      ).map((row) => Number(row.id));
      return rangeRows(store, query, ids);
    });
  } catch (error) {
    if (isMatchError(error, match) || isPatternError(error)) return undefined;
    throw error;
  }
}
