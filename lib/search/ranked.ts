/**
 * Ranked full-text search over one FTS5 table (`messages_fts` or
 * `messages_fts_trigram`), ordered by bm25 `rank` like the Python Hermes.
 *
 * The page is found first with ids only (no snippet, no content read), and
 * the snippet is computed for the returned page alone: Python's single
 * query computes a snippet for every match before it sorts.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import { CONTAINS_ALL_SQL, containsPattern, type FilterSql } from "./filters.ts";
import { isMatchError, isPatternError } from "./query_error.ts";

/** A hit's row before its context is added. */
export type HitRow = Record<string, SqlValue>;

/** What a ranked search needs. */
export interface RankedQuery {
  /** The FTS5 table. */
  readonly table: "messages_fts" | "messages_fts_trigram";
  /** The MATCH expression. */
  readonly match: string;
  /** Substrings every hit must also contain. */
  readonly required: readonly string[];
  /** The filters. */
  readonly filters: FilterSql;
  /** Page size. */
  readonly limit: number;
  /** Hits to skip. */
  readonly offset: number;
}

function pageSql(table: string, filters: string, required: boolean): string {
  return `SELECT m.id AS id
FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
WHERE ${table} MATCH ?${filters}${required ? ` AND ${CONTAINS_ALL_SQL}` : ""}
ORDER BY rank
LIMIT ? OFFSET ?`;
}

function rowsSql(table: string): string {
  return `SELECT m.id AS id, m.session_id AS session_id, m.role AS role,
  snippet(${table}, 0, '>>>', '<<<', '...', 40) AS snippet,
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started
FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
WHERE ${table} MATCH ? AND ${table}.rowid IN (SELECT value FROM json_each(?))`;
}

/**
 * One page of ranked hits, in rank order, without context.
 *
 * @param store The open store.
 * @param query The table, MATCH expression, filters and page.
 * @returns The hit rows (`id, session_id, role, snippet, timestamp,
 *   tool_name, source, model, session_started`), or `undefined` when FTS5
 *   rejects the MATCH expression.
 * @throws {SqliteError} On a storage failure.
 */
export function rankedPage(store: Store, query: RankedQuery): HitRow[] | undefined {
  const { table, match, required, filters, limit, offset } = query;
  const params: SqlValue[] = [match, ...filters.params];
  if (required.length > 0) params.push(JSON.stringify(required.map(containsPattern)));
  params.push(limit, offset);
  let ids: number[];
  try {
    ids = store.statement(pageSql(table, filters.sql, required.length > 0)).all(...params)
      .map((row) => Number(row.id));
  } catch (error) {
    if (isMatchError(error, match) || isPatternError(error)) return undefined;
    throw error;
  }
  if (ids.length === 0) return [];
  const byId = new Map<number, HitRow>();
  for (const row of store.statement(rowsSql(table)).all(match, JSON.stringify(ids))) {
    byId.set(Number(row.id), row);
  }
  return ids.map((id) => byId.get(id)).filter((row): row is HitRow => row !== undefined);
}
