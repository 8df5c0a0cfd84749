/**
 * Ranked full-text search over one FTS5 table (`messages_fts` or
 * `messages_fts_trigram`), ordered by bm25 `rank` like the Python Hermes.
 *
 * One statement, Python's: FTS5 itself takes the `ORDER BY rank` (the query
 * plan has no sort step), so rows come out already ranked, and SQLite
 * computes the snippet and reads the joined rows for the returned page
 * only, never for skipped or unreturned matches. A separate ids-first query
 * was measured slower: the snippet query has to run the MATCH a second time.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import { conditionSql, type FilterSql } from "./filters.ts";
import type { Condition } from "../../core/search/condition.ts";
import { isMatchError, isPatternError } from "./query_error.ts";

/**
 * The substring check of a ranked query as SQL (`""` for none) and its
 * parameters, which follow the filters' parameters.
 *
 * @param check The plan's check.
 * @returns The SQL term and its parameters.
 */
export function checkSql(check: Condition | null): FilterSql {
  return check === null ? { sql: "", params: [] } : conditionSql(check);
}

/** A hit's row before its context is added. */
export type HitRow = Record<string, SqlValue>;

/** What a ranked search needs. */
export interface RankedQuery {
  /** The FTS5 table. */
  readonly table: "messages_fts" | "messages_fts_trigram";
  /** The MATCH expression. */
  readonly match: string;
  /** What every hit must also satisfy by substring, if anything. */
  readonly check: Condition | null;
  /** The filters. */
  readonly filters: FilterSql;
  /**
   * The session of a `sessionId` filter (also among the filters): the index
   * is then read over that session's id range only ({@linkcode matchWhereSql}).
   */
  readonly session?: string | null;
  /** Page size. */
  readonly limit: number;
  /** Hits to skip. */
  readonly offset: number;
}

/**
 * The index read over one session's id range, between its first and last
 * message (two parameters: the session, twice). FTS5 reads a rowid range
 * from the index itself, where the session filter alone tests every match:
 * a frequent word in one session at 1,000,000 messages took 265 ms, 7–10
 * with the range, the same hits in the same order (bm25's statistics are
 * the whole table's either way). The session filter still decides.
 */
function sessionRangeSql(table: string): string {
  return ` AND ${table}.rowid BETWEEN (SELECT min(id) FROM messages WHERE session_id = ?)
  AND (SELECT max(id) FROM messages WHERE session_id = ?)`;
}

/**
 * The WHERE of a ranked query's statements: the MATCH, the session's id
 * range, the filters, the substring check; parameters in that order.
 */
function matchWhere(table: string, filters: string, check: string, session: boolean): string {
  return `WHERE ${table} MATCH ?${session ? sessionRangeSql(table) : ""}${filters}${
    check === "" ? "" : ` AND ${check}`
  }`;
}

/**
 * The WHERE of `query`'s statements over `table`, for {@linkcode matchParams}.
 *
 * @param table The FTS5 table (or its alias).
 * @param query The query.
 * @returns `WHERE table MATCH ? …`.
 */
export function matchWhereSql(table: string, query: RankedQuery): string {
  return matchWhere(table, query.filters.sql, checkSql(query.check).sql, query.session != null);
}

/**
 * The parameters of {@linkcode matchWhereSql}: the MATCH expression, the
 * session twice (when there is one), the filters', the check's.
 *
 * @param query The query.
 * @returns The parameters, in order.
 */
export function matchParams(query: RankedQuery): SqlValue[] {
  return [
    query.match,
    ...(query.session == null ? [] : [query.session, query.session]),
    ...query.filters.params,
    ...checkSql(query.check).params,
  ];
}

/**
 * The page statement (the benchmark's floor prepares the same text).
 *
 * @param table The FTS5 table.
 * @param filters The filter terms (`FilterSql.sql`).
 * @param required Whether substrings are required (one more JSON parameter).
 * @param session Whether the index is read over one session's ids (two more parameters).
 * @returns The SQL: parameters MATCH, [session ×2], filters, [required], limit, offset.
 */
export function pageSql(table: string, filters: string, check = "", session = false): string {
  return `SELECT m.id AS id, m.session_id AS session_id, m.role AS role,
  snippet(${table}, 0, '>>>', '<<<', '...', 40) AS snippet,
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started
FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
${matchWhere(table, filters, check, session)}
ORDER BY rank
LIMIT ? OFFSET ?`;
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
  const { table, match, check, filters, limit, offset, session } = query;
  try {
    const sql = pageSql(table, filters.sql, checkSql(check).sql, session != null);
    return store.statement(sql).all(...matchParams(query), limit, offset);
  } catch (error) {
    if (isMatchError(error, match) || isPatternError(error)) return undefined;
    throw error;
  }
}
