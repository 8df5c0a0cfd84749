/**
 * The filters every search path shares (source, excluded sources, role) as
 * SQL. Lists are bound as one JSON array each, so the SQL text depends only
 * on which filters are present and stays a small, fixed set of prepared
 * statements.
 *
 * @module
 */
import type { SqlValue } from "../driver/types.ts";
import type { Store } from "../store.ts";
import { type Condition, isConjunction, isDisjunction } from "../../core/search/condition.ts";
import { containsPattern } from "../../core/like_pattern.ts";

/** The filters of one search, normalized. */
export interface SearchFilters {
  /** Only these sources; `null` for any (an empty list matches nothing). */
  readonly sources: readonly string[] | null;
  /** Never these sources; `null` for none. */
  readonly excludeSources: readonly string[] | null;
  /** Only these roles; `null` for any (an empty list means any, as in Python). */
  readonly roles: readonly string[] | null;
  /**
   * Leave out rewound messages of a file from a newer Hermes (schema ≥ 12):
   * `"active"` keeps rows whose `active` is not 0, `"active-or-compacted"`
   * also those folded into a summary (`compacted = 1`), as that Hermes
   * searches; `null` (an older file, or `includeInactive`) keeps every row.
   */
  readonly live?: "active" | "active-or-compacted" | null;
  /**
   * Leave out the rows a newer Hermes marks `display_kind = 'hidden'`
   * (scaffolding for the model, never shown to the person), as it searches.
   */
  readonly hideHidden?: boolean;
  /** Only messages of this session; `null` for any. */
  readonly sessionId?: string | null;
  /** Only messages at or after this time (Unix seconds); `null` for no bound. */
  readonly since?: number | null;
  /** Only messages before this time (Unix seconds); `null` for no bound. */
  readonly until?: number | null;
}

/** The WHERE terms of some filters, and their parameters in order. */
export interface FilterSql {
  /** `""`, or terms each starting with ` AND `, over aliases `m` (messages) and `s` (sessions). */
  readonly sql: string;
  /** One JSON array per term. */
  readonly params: readonly SqlValue[];
}

/** Which rows of a newer Hermes's file it searches and previews: {@linkcode SearchFilters}. */
export type Visibility = Pick<SearchFilters, "live" | "hideHidden">;

/**
 * The rows of `store` that a newer Hermes searches (and previews a session
 * by): not rewound (compacted ones stay), not hidden; every row with
 * `includeInactive`, and in a file without those columns.
 *
 * @param store The open store.
 * @param includeInactive Keep every row.
 * @returns The visibility filters.
 */
export function visibilityOf(store: Store, includeInactive = false): Visibility {
  const columns = store.columns("messages");
  if (includeInactive) return { live: null, hideHidden: false };
  const live = !columns.has("active")
    ? null
    : columns.has("compacted")
    ? "active-or-compacted"
    : "active";
  return { live, hideHidden: columns.has("display_kind") };
}

/**
 * The terms of a {@linkcode Visibility} over messages `m`: `""`, or terms
 * each starting with ` AND `.
 *
 * @param visibility The filters.
 * @returns The SQL (no parameters).
 */
export function visibilitySql(visibility: Visibility): string {
  let sql = "";
  if (visibility.live === "active") sql += " AND COALESCE(m.active, 1) != 0";
  if (visibility.live === "active-or-compacted") {
    sql += " AND (COALESCE(m.active, 1) != 0 OR COALESCE(m.compacted, 0) != 0)";
  }
  if (visibility.hideHidden) sql += " AND COALESCE(m.display_kind, '') != 'hidden'";
  return sql;
}

/**
 * The SQL of `filters`, in Python's order: source, excluded sources, role;
 * then the session and the time range, which Python does not have.
 *
 * @param filters The normalized filters.
 * @returns The terms and their parameters.
 */
export function filterSql(filters: SearchFilters): FilterSql {
  let sql = "";
  const params: SqlValue[] = [];
  if (filters.sources !== null) {
    sql += " AND s.source IN (SELECT value FROM json_each(?))";
    params.push(JSON.stringify(filters.sources));
  }
  if (filters.excludeSources !== null) {
    sql += " AND s.source NOT IN (SELECT value FROM json_each(?))";
    params.push(JSON.stringify(filters.excludeSources));
  }
  if (filters.roles !== null) {
    sql += " AND m.role IN (SELECT value FROM json_each(?))";
    params.push(JSON.stringify(filters.roles));
  }
  sql += visibilitySql(filters);
  if (filters.sessionId != null) {
    sql += " AND m.session_id = ?";
    params.push(filters.sessionId);
  }
  if (filters.since != null) {
    sql += " AND m.timestamp >= ?";
    params.push(filters.since);
  }
  if (filters.until != null) {
    sql += " AND m.timestamp < ?";
    params.push(filters.until);
  }
  return { sql, params };
}

/** Up to this many terms are written inline (as Python does); more are bound as one JSON array. */
const INLINE_TERMS = 4;

/** One term, inline: the message (alias `m`) contains the pattern, bound three times. */
const CONTAINS_ONE_SQL = "(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' " +
  "OR m.tool_calls LIKE ? ESCAPE '\\')";

/**
 * The SQL term "the message (alias `m`) contains one of the patterns bound
 * as a JSON array": in its content, tool name or tool calls, ASCII
 * case-insensitive, as Python's LIKE fallback matches.
 */
const CONTAINS_ANY_SQL = "EXISTS (SELECT 1 FROM json_each(?) p WHERE " +
  "m.content LIKE p.value ESCAPE '\\' OR m.tool_name LIKE p.value ESCAPE '\\' " +
  "OR m.tool_calls LIKE p.value ESCAPE '\\')";

/** The SQL term "the message (alias `m`) contains every pattern bound as a JSON array". */
const CONTAINS_ALL_SQL = "NOT EXISTS (SELECT 1 FROM json_each(?) p WHERE NOT coalesce(" +
  "m.content LIKE p.value ESCAPE '\\' OR m.tool_name LIKE p.value ESCAPE '\\' " +
  "OR m.tool_calls LIKE p.value ESCAPE '\\', 0))";

/**
 * The SQL term "the message (alias `m`) contains any (or every) term", and
 * its parameters. A few terms are written out as Python writes them (a
 * correlated `json_each` per row makes a full scan about twice as slow);
 * many terms share one statement through a JSON array, so that no user text
 * can fill the statement cache.
 *
 * @param terms The terms, unescaped.
 * @param all When true, every term must be present.
 * @returns The SQL and its parameters.
 */
export function containsSql(terms: readonly string[], all: boolean): FilterSql {
  const patterns = terms.map(containsPattern);
  if (terms.length > INLINE_TERMS) {
    return { sql: all ? CONTAINS_ALL_SQL : CONTAINS_ANY_SQL, params: [JSON.stringify(patterns)] };
  }
  const sql = `(${patterns.map(() => CONTAINS_ONE_SQL).join(all ? " AND " : " OR ")})`;
  return { sql, params: patterns.flatMap((p) => [p, p, p]) };
}

/** A message (alias `m`) contains the pattern `p.value`. */
const CONTAINS_VALUE_SQL = "coalesce(m.content LIKE p.value ESCAPE '\\' " +
  "OR m.tool_name LIKE p.value ESCAPE '\\' OR m.tool_calls LIKE p.value ESCAPE '\\', 0)";

/**
 * The SQL term "the message (alias `m`) satisfies one of the clauses bound
 * as a JSON array `[{all: [pattern…], none: [[pattern…]…]}…]`": one
 * statement for every condition, whatever the user typed.
 */
const CONDITION_SQL = `EXISTS (SELECT 1 FROM json_each(?) c WHERE
  NOT EXISTS (SELECT 1 FROM json_each(c.value, '$.all') p WHERE NOT ${CONTAINS_VALUE_SQL})
  AND NOT EXISTS (SELECT 1 FROM json_each(c.value, '$.none') g WHERE NOT EXISTS (
    SELECT 1 FROM json_each(g.value) p WHERE NOT ${CONTAINS_VALUE_SQL})))`;

/**
 * The SQL term "the message (alias `m`) satisfies `condition`" by
 * substring, and its parameters. A plain AND or OR of words takes the form
 * of {@linkcode containsSql}; anything with `NOT`, or an OR of several
 * words, is bound as one JSON value to one fixed statement.
 *
 * @param condition The condition, words unescaped.
 * @returns The SQL and its parameters.
 */
export function conditionSql(condition: Condition): FilterSql {
  if (isConjunction(condition)) return containsSql(condition[0].all, true);
  if (isDisjunction(condition)) return containsSql(condition.map((c) => c.all[0]), false);
  const clauses = condition.map((clause) => ({
    all: clause.all.map(containsPattern),
    none: clause.none.map((group) => group.map(containsPattern)),
  }));
  return { sql: CONDITION_SQL, params: [JSON.stringify(clauses)] };
}
