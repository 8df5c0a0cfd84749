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
import { type LongTextColumns, snippetColumnsSql } from "./long_snippet.ts";
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import { conditionSql, type FilterSql } from "./filters.ts";
import type { Condition } from "../../core/search/condition.ts";
import { isMatchError, isPatternError } from "./query_error.ts";
import type { IdRange } from "./id_range.ts";
import { ROWID_PARAM } from "./fts_rowid.ts";

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
   * The session of a `sessionId` filter (also among the filters), or `null`:
   * its matches are few, so a page in time order sorts them all (`sorted.ts`).
   */
  readonly session?: string | null;
  /**
   * The ids the filters leave (`id_range.ts`): the index is read over them
   * only ({@linkcode matchWhereSql}); the filters still decide.
   */
  readonly ids?: IdRange;
  /**
   * The time filter's bounds (also among the filters), which tell the
   * time-sorted walk which messages it need not wait for.
   */
  readonly since?: number | null;
  /** See `since`. */
  readonly until?: number | null;
  /** Page size. */
  readonly limit: number;
  /** Hits to skip. */
  readonly offset: number;
  /**
   * The sources of a `sourceFilter` (also among the filters), or `null`: a
   * source of few sessions is read over their ids only (`source_ranges.ts`).
   */
  readonly sources?: readonly string[] | null;
  /**
   * When given, long texts' snippets are cut in TypeScript (`long_snippet.ts`):
   * the rows carry the text and these other columns of the table, and the
   * caller cuts it.
   */
  readonly cutLong?: LongTextColumns;
  /**
   * Past how many bytes a text is long, with `cutLong` (`long_snippet.ts`).
   * @default {LONG_TEXT_BYTES}
   */
  readonly longBytes?: number;
}

/** The id range's terms, as SQL: what of `lo`, `hi` is bound. */
export interface RangeSql {
  /** `rowid >= ?` is in the statement. */
  readonly lo: boolean;
  /** `rowid <= ?` is in the statement. */
  readonly hi: boolean;
}

/**
 * The range terms a query's statements carry.
 *
 * @param ids The query's id range, if any.
 * @returns Which of its ends are bound.
 */
export function rangeSql(ids: IdRange | undefined): RangeSql {
  return { lo: ids?.lo != null, hi: ids?.hi != null };
}

/**
 * The WHERE of a ranked query's statements: the MATCH, the id range, the
 * filters, the substring check; parameters in that order. FTS5 reads a
 * rowid range from the index itself, where a filter tests every match: a
 * frequent word in one session at 1,000,000 messages took 265 ms, 7–10
 * with the session's range.
 */
function matchWhere(table: string, filters: string, check: string, range: RangeSql): string {
  return `WHERE ${table} MATCH ?${range.lo ? ` AND ${table}.rowid >= ${ROWID_PARAM}` : ""}${
    range.hi ? ` AND ${table}.rowid <= ${ROWID_PARAM}` : ""
  }${filters}${check === "" ? "" : ` AND ${check}`}`;
}

/**
 * The WHERE of `query`'s statements over `table`, for {@linkcode matchParams}.
 *
 * @param table The FTS5 table (or its alias).
 * @param query The query.
 * @returns `WHERE table MATCH ? …`.
 */
export function matchWhereSql(table: string, query: RankedQuery): string {
  return matchWhere(table, query.filters.sql, checkSql(query.check).sql, rangeSql(query.ids));
}

/**
 * The parameters of {@linkcode matchWhereSql}: the MATCH expression, the
 * range's ends that are bound, the filters', the check's.
 *
 * @param query The query.
 * @returns The parameters, in order.
 */
export function matchParams(query: RankedQuery): SqlValue[] {
  const { lo, hi } = query.ids ?? { lo: null, hi: null };
  return [
    query.match,
    ...(lo == null ? [] : [lo]),
    ...(hi == null ? [] : [hi]),
    ...query.filters.params,
    ...checkSql(query.check).params,
  ];
}

/**
 * The page statement (the benchmark's floor prepares the same text).
 *
 * @param table The FTS5 table.
 * @param filters The filter terms (`FilterSql.sql`).
 * @param check The substring check's SQL (`""` for none).
 * @param range Which ends of an id range are bound.
 * @param cutLong When given, a long text (and these other columns) comes instead of its
 *   snippet (`long_snippet.ts`).
 * @param longBytes Past how many bytes a text is long (`long_snippet.ts`).
 * @returns The SQL: parameters MATCH, [lo], [hi], filters, [check], limit, offset.
 */
export function pageSql(
  table: string,
  filters: string,
  check = "",
  range: RangeSql = { lo: false, hi: false },
  cutLong?: LongTextColumns,
  longBytes?: number,
): string {
  return `SELECT ${hitColumnsSql(table, cutLong, longBytes)}
FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
${matchWhere(table, filters, check, range)}
ORDER BY rank
LIMIT ? OFFSET ?`;
}

/**
 * The columns of a hit row ({@linkcode pageSql}), over `table`, messages `m`
 * and sessions `s`.
 *
 * @param table The FTS5 table.
 * @param cutLong See {@linkcode pageSql}.
 * @param longBytes See {@linkcode pageSql}.
 * @returns The column list.
 */
export function hitColumnsSql(
  table: string,
  cutLong?: LongTextColumns,
  longBytes?: number,
): string {
  return `m.id AS id, m.session_id AS session_id, m.role AS role,
  ${snippetColumnsSql(table, cutLong, longBytes)},
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started`;
}

/**
 * How many messages `query` finds (its MATCH, id range, filters and check),
 * up to `cap`, without ranking them: the matches are read in rowid order,
 * so each one's message and session are read in file order, and the count
 * stops at `cap`.
 *
 * @param store The open store.
 * @param query The query (its page is not used).
 * @param cap The most to count.
 * @returns The count, at most `cap`, or `undefined` when FTS5 rejects the
 *   MATCH expression.
 * @throws {SqliteError} On a storage failure.
 */
export function countMatches(store: Store, query: RankedQuery, cap: number): number | undefined {
  const { table, match } = query;
  try {
    const row = store.statement(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${table}
       JOIN messages m ON m.id = ${table}.rowid
       JOIN sessions s ON s.id = m.session_id
       ${matchWhereSql(table, query)} LIMIT ?)`,
    ).get(...matchParams(query), cap);
    return Number(row?.n ?? 0);
  } catch (error) {
    if (isMatchError(error, match) || isPatternError(error)) return undefined;
    throw error;
  }
}

/**
 * Whether the page of `query` is known empty before it is ranked: no more
 * than `offset` messages pass its filters and check. Ranking reads every
 * match's message in rank order (one random seek each) before a filter can
 * refuse it; counting them in rowid order costs a fraction of that, and
 * stops at `offset + 1`. At 1,000,000 messages, `the` with a role no
 * message has: ranked 2.7–3.7 s, counted 0.43 s; `docker` past its last hit
 * (`--offset 1000000`): ranked 0.93 s, counted 0.24 s. A page that is not
 * empty pays the count before its ranking (`docker --source tui --offset
 * 10000`: 0.86 s, now 1.09). A first page without filters or check needs no
 * count: it is empty only when nothing matches.
 *
 * @returns `true` for an empty page, `undefined` when FTS5 rejects the MATCH.
 */
function knownEmpty(store: Store, query: RankedQuery): boolean | undefined {
  const { offset, filters, check } = query;
  if (offset === 0 && filters.sql === "" && check === null) return false;
  const counted = countMatches(store, query, offset + 1);
  return counted === undefined ? undefined : counted <= offset;
}

/**
 * One page of ranked hits, in rank order, without context. Call it inside
 * the search's read transaction (`snapshot.ts`): a page known empty by a
 * count ({@linkcode knownEmpty}) is not ranked.
 *
 * @param store The open store.
 * @param query The table, MATCH expression, filters and page.
 * @returns The hit rows (`id, session_id, role, snippet, timestamp,
 *   tool_name, source, model, session_started`), or `undefined` when FTS5
 *   rejects the MATCH expression.
 * @throws {SqliteError} On a storage failure.
 */
export function rankedPage(store: Store, query: RankedQuery): HitRow[] | undefined {
  const { table, match, check, filters, limit, offset } = query;
  const empty = knownEmpty(store, query);
  if (empty !== false) return empty === undefined ? undefined : [];
  try {
    const sql = pageSql(
      table,
      filters.sql,
      checkSql(check).sql,
      rangeSql(query.ids),
      query.cutLong,
      query.longBytes,
    );
    return store.statement(sql).all(...matchParams(query), limit, offset);
  } catch (error) {
    if (isMatchError(error, match) || isPatternError(error)) return undefined;
    throw error;
  }
}
