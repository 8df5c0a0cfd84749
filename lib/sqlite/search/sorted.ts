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
 * instead. Snippets are made for the returned page only, in both ways.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";

import { isMatchError, isPatternError } from "./query_error.ts";
import { checkSql, type HitRow, type RankedQuery } from "./ranked.ts";
import { timelineOf } from "./timeline.ts";
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

interface Candidate {
  readonly id: number;
  readonly timestamp: number;
  readonly rank: number;
}

function fromSql(table: string): string {
  return `FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id`;
}

function whereSql(table: string, query: RankedQuery): string {
  const check = checkSql(query.check).sql;
  return `WHERE ${table} MATCH ?${query.filters.sql}${check === "" ? "" : ` AND ${check}`}`;
}

/** One chunk of the walk: matches beyond an id, in id order. */
function walkSql(table: string, query: RankedQuery, order: TimeOrder): string {
  const beyond = order === "newest" ? `${table}.rowid < ?` : `${table}.rowid > ?`;
  return `SELECT m.id AS id, m.timestamp AS timestamp, rank AS rank
${fromSql(table)}
${whereSql(table, query)} AND ${beyond}
ORDER BY ${table}.rowid ${order === "newest" ? "DESC" : "ASC"}
LIMIT ?`;
}

/** The full sort, ids only (a snippet for every match would cost more than the ranking). */
function fullSql(table: string, query: RankedQuery, order: TimeOrder): string {
  const dir = order === "newest" ? "DESC" : "ASC";
  return `SELECT m.id AS id
${fromSql(table)}
${whereSql(table, query)}
ORDER BY m.timestamp ${dir}, rank, m.id ${dir}
LIMIT ? OFFSET ?`;
}

/**
 * The hit rows of chosen ids: the index is read over their id range only
 * (one MATCH, not one per id), and the snippet made for them alone.
 */
function rowsSql(table: string): string {
  return `SELECT m.id AS id, m.session_id AS session_id, m.role AS role,
  snippet(${table}, 0, '>>>', '<<<', '...', 40) AS snippet,
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started
FROM ${table}
CROSS JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
WHERE ${table} MATCH ? AND ${table}.rowid >= ? AND ${table}.rowid <= ?
  AND m.id IN (SELECT value FROM json_each(?))`;
}

function matchParams(query: RankedQuery): SqlValue[] {
  return [query.match, ...query.filters.params, ...checkSql(query.check).params];
}

/** Orders candidates as the full sort does. */
function comparator(order: TimeOrder): (a: Candidate, b: Candidate) => number {
  const sign = order === "newest" ? -1 : 1;
  return (a, b) =>
    a.timestamp !== b.timestamp
      ? sign * (a.timestamp - b.timestamp)
      : a.rank !== b.rank
      ? a.rank - b.rank
      : sign * (a.id - b.id);
}

/**
 * The first `need` ids in time order by walking the index, or `undefined`
 * when the walk would cost more than the full sort.
 */
function walk(
  store: Store,
  query: RankedQuery,
  order: TimeOrder,
  need: number,
): number[] | undefined {
  const timeline = timelineOf(store);
  if (!timeline.refresh(store)) return undefined;
  const statement = store.statement(walkSql(query.table, query, order));
  const params = matchParams(query);
  const compare = comparator(order);
  let best: Candidate[] = [];
  let edge = order === "newest" ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  let chunk = need + 1;
  let walked = 0;
  for (;;) {
    const rows = statement.all(...params, edge, chunk);
    for (const row of rows) {
      best.push({ id: Number(row.id), timestamp: Number(row.timestamp), rank: Number(row.rank) });
    }
    walked += rows.length;
    best.sort(compare);
    if (best.length > need) best = best.slice(0, need);
    if (rows.length < chunk) break;
    edge = Number(rows[rows.length - 1].id);
    if (best.length === need) {
      const last = best[need - 1].timestamp;
      if (
        order === "newest"
          ? last > timeline.latestBelow(store, edge)
          : last < timeline.earliestAbove(store, edge)
      ) {
        break;
      }
    }
    if (walked >= WALK_LIMIT) return undefined;
    chunk *= 2;
  }
  return best.map((c) => c.id);
}

function hitRows(store: Store, table: string, match: string, ids: readonly number[]): HitRow[] {
  if (ids.length === 0) return [];
  let lo = ids[0], hi = ids[0];
  for (const id of ids) {
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  const byId = new Map<number, HitRow>();
  for (const row of store.statement(rowsSql(table)).all(match, lo, hi, JSON.stringify(ids))) {
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
      let ids = strategy === "full" ? undefined : walk(store, query, order, offset + limit);
      if (ids === undefined && strategy === "walk") {
        throw new Error("Cannot walk the index in time order: the full sort would run");
      }
      if (ids !== undefined) {
        ids = ids.slice(offset);
      } else {
        ids = store.statement(fullSql(table, query, order)).all(
          ...matchParams(query),
          limit,
          offset,
        ).map((row) => Number(row.id));
      }
      return hitRows(store, table, match, ids);
    });
  } catch (error) {
    if (isMatchError(error, match) || isPatternError(error)) return undefined;
    throw error;
  }
}
