/**
 * The usage report over a newer Hermes's per-model usage rows
 * (`session_model_usage`, kept by every token update since its schema 20,
 * and by a PostgreSQL store): a session's row names one model, while its
 * calls may have used several (a `/model` switch), and that Hermes's side
 * work (titles, compression, vision: a `task` of the key) is counted in
 * those rows only.
 *
 * So a session counts, under each grouping, as the larger of its own
 * totals and the sum of its rows, counter by counter; and by model, its
 * rows count under the models they name, the rest of its totals (what they
 * hold beyond its rows: usage recorded before the table was, or given as
 * cumulative totals) under the session's own model, as that Hermes's
 * insights count them. A session with no rows counts as before. A row's
 * cost of `0` is "none known" (the table has no NULL costs).
 *
 * Both engines build their statements here ({@linkcode UsageDialect}: a
 * maximum and a sum).
 *
 * @module
 */
import { COST_COLUMNS, TOKEN_TOTALS } from "./usage.ts";

/** The per-model usage table of a newer Hermes, and of a PostgreSQL store. */
export const MODEL_USAGE_TABLE = "session_model_usage";

/** The columns of it a report reads: without one of them, a file's table is not read. */
export const MODEL_USAGE_READ_COLUMNS: readonly string[] = [
  "session_id",
  "model",
  ...TOKEN_TOTALS.map((t) => t.column),
  ...COST_COLUMNS,
];

/** What the SQL of the two engines differs in here. */
export interface UsageDialect {
  /** The two-argument maximum: SQLite's `MAX(a, b)`, PostgreSQL's `GREATEST(a, b)`. */
  readonly greatest: (a: string, b: string) => string;
  /**
   * The sum of an integer column: SQLite's `TOTAL()` (its `SUM()` fails past 2^63, "integer
   * overflow"), PostgreSQL's `SUM()` (a `numeric`).
   */
  readonly sum: (column: string) => string;
}

/** A residual cost below this (dollars) is the rounding of two sums, not spend. */
const COST_EPSILON = "1e-9";

const TOKENS = TOKEN_TOTALS.map((t) => t.column);

/** Each session's rows summed, a zero cost as NULL. */
function rowSums(dialect: UsageDialect): string {
  const sums = [
    ...TOKENS.map((c) => `${dialect.sum(c)} AS ${c}`),
    ...COST_COLUMNS.map((c) => `NULLIF(SUM(${c}), 0) AS ${c}`),
  ].join(", ");
  return `(SELECT session_id, ${sums} FROM ${MODEL_USAGE_TABLE} GROUP BY session_id)`;
}

/** The larger of a session's cost and its rows' (`u`), either NULL: the other. */
function largerCost(column: string, { greatest }: UsageDialect): string {
  return `CASE WHEN u.${column} IS NULL THEN s.${column} WHEN s.${column} IS NULL THEN u.${column}
    ELSE ${greatest(`s.${column}`, `u.${column}`)} END`;
}

/**
 * Each session of `sessions` once, its counters the larger of its own and
 * its rows' sum (a session without rows: its own, as they are): the rows of
 * a report grouped by anything but the model.
 *
 * @param sessions The sessions reported, a relation's name.
 * @param dialect The engine's SQL.
 * @returns A relation with the columns of `sessions` a report reads.
 */
export function sessionsWithModelUsageSql(sessions: string, dialect: UsageDialect): string {
  const { greatest } = dialect;
  const counters = [
    ...TOKENS.map((c) =>
      `CASE WHEN u.session_id IS NULL THEN s.${c}
        ELSE ${greatest(`COALESCE(s.${c}, 0)`, `u.${c}`)} END AS ${c}`
    ),
    ...COST_COLUMNS.map((c) => `${largerCost(c, dialect)} AS ${c}`),
  ].join(",\n    ");
  return `(SELECT s.id, s.started_at, s.source, s.model,
    ${counters}
  FROM ${sessions} AS s LEFT JOIN ${rowSums(dialect)} AS u ON u.session_id = s.id)`;
}

/**
 * The parts of a report by model: each session's rows by the model they
 * name, and the rest of its totals under its own model (a session without
 * rows: its totals, as they are). A session may so appear under several
 * models; the report counts it once in each (`COUNT(DISTINCT id)`).
 *
 * @param sessions The sessions reported, a relation's name.
 * @param dialect The engine's SQL.
 * @returns A relation of the columns of `sessions` a report reads.
 */
export function modelUsagePartsSql(sessions: string, dialect: UsageDialect): string {
  const { greatest } = dialect;
  // The rows as they are (the report sums them by model), a zero cost as NULL.
  const rowCounters = [
    ...TOKENS.map((c) => `u.${c}`),
    ...COST_COLUMNS.map((c) => `NULLIF(u.${c}, 0) AS ${c}`),
  ]
    .join(", ");
  const rest = TOKENS.map((c) => greatest(`COALESCE(s.${c}, 0) - t.${c}`, "0"));
  const restCosts = COST_COLUMNS.map((c) =>
    `CASE WHEN s.${c} IS NULL THEN NULL ELSE ${greatest(`s.${c} - COALESCE(t.${c}, 0)`, "0")} END`
  );
  const anyRest = [
    ...rest.map((sql) => `${sql} > 0`),
    ...restCosts.map((sql) => `${sql} > ${COST_EPSILON}`),
  ].join(" OR ");
  const restColumns = [...TOKENS, ...COST_COLUMNS].map((c, i) =>
    `CASE WHEN t.session_id IS NULL THEN s.${c} ELSE ${[...rest, ...restCosts][i]} END AS ${c}`
  );
  return `(SELECT s.id, s.started_at, s.source, u.model, ${rowCounters}
    FROM ${sessions} AS s JOIN ${MODEL_USAGE_TABLE} AS u ON u.session_id = s.id
  UNION ALL
  SELECT s.id, s.started_at, s.source, s.model,
    ${restColumns.join(",\n    ")}
    FROM ${sessions} AS s LEFT JOIN ${rowSums(dialect)} AS t ON t.session_id = s.id
    WHERE t.session_id IS NULL OR ${anyRest})`;
}
