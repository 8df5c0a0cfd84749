/**
 * Tokens and cost over time or by model or source (`hermes-state usage`,
 * the web page's Usage view). A session's tokens and cost count on the day
 * it started, as the session row carries their totals; on a newer Hermes's
 * file, its per-model usage rows count too (`../core/usage_by_model.ts`).
 *
 * @module
 */
import { readsSessionModelUsage } from "./session_model_usage.ts";
import type { SqlValue } from "./driver/types.ts";
import type { Store } from "./store.ts";
import type { UsageGrouping, UsageReportOptions, UsageRow } from "../core/usage.ts";
import {
  MODEL_USAGE_TABLE,
  modelUsagePartsSql,
  sessionsWithModelUsageSql,
  type UsageDialect,
} from "../core/usage_by_model.ts";
import {
  checkUsageOptions,
  COST_COLUMNS,
  localTimeSql,
  startRangeSql,
  TOKEN_TOTALS,
  toUsageRow,
} from "../core/usage.ts";

/** The groupings a file can answer: it records no origins (only `sync` does, on a server). */
type FileGrouping = Exclude<UsageGrouping, "origin">;

/**
 * The group key of each grouping: a closed set of SQL expressions, never
 * built from input; `time` is `started_at` shifted into the report's time zone.
 */
const KEYS: Readonly<Record<FileGrouping, (time: string) => string>> = {
  day: (time) => `strftime('%Y-%m-%d', ${time}, 'unixepoch')`,
  // 'weekday 1' moves forward to the next Monday (or stays); minus 7 days gives this week's Monday.
  week: (time) => `date(${time}, 'unixepoch', '-6 days', 'weekday 1')`,
  month: (time) => `strftime('%Y-%m', ${time}, 'unixepoch')`,
  model: () => "model",
  source: () => "source",
};

/** Time groups read oldest first; model and source groups by cost, then tokens. */
const ORDER: Readonly<Record<FileGrouping, string>> = {
  day: "key",
  week: "key",
  month: "key",
  model: "COALESCE(estimated_cost_usd, 0) DESC, input_tokens + output_tokens DESC, key",
  source: "COALESCE(estimated_cost_usd, 0) DESC, input_tokens + output_tokens DESC, key",
};

/** The summed columns of a usage row. */
const USAGE_NAMES = [...TOKEN_TOTALS.map((t) => t.column), ...COST_COLUMNS].join(", ");

/**
 * Their aggregates: a token sum is 0 without sessions, a cost sum stays NULL without values. A
 * token sum is a `TOTAL()`: SQLite's `SUM()` of integers fails past 2^63 ("integer overflow"),
 * where a PostgreSQL store's answers; below 2^53 the two are the same number.
 */
const USAGE_SUMS = [
  ...TOKEN_TOTALS.map(({ column }) => `TOTAL(${column}) AS ${column}`),
  ...COST_COLUMNS.map((column) => `SUM(${column}) AS ${column}`),
].join(", ");

/** The SQL of a report over per-model usage rows here. */
const SQLITE_USAGE: UsageDialect = {
  greatest: (a, b) => `MAX(${a}, ${b})`,
  sum: (column) => `TOTAL(${column})`,
};

/** Implements `SessionDB.usageReport`: one grouped query over `sessions`. */
export function usageReport(store: Store, options: UsageReportOptions = {}): UsageRow[] {
  const checked = checkUsageOptions(options);
  const { by, since, until, source, timeZone } = checked;
  if (by === "origin") {
    throw new TypeError(
      'Cannot report usage by origin on a SQLite store: origins are recorded only on a PostgreSQL store, by "hermes-state sync"',
    );
  }
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  if (since !== null) {
    clauses.push("started_at >= ?");
    params.push(since);
  }
  if (until !== null) {
    clauses.push("started_at < ?");
    params.push(until);
  }
  if (source !== null) {
    clauses.push("source = ?");
    params.push(source);
  }
  const where = clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`;
  let time = "started_at";
  // The offsets come first: the key, where they are bound, comes before the WHERE clause.
  const offsets: SqlValue[] = [];
  const rangeSql = startRangeSql(checked, where);
  if (rangeSql !== undefined) {
    // Two statements, not one snapshot: a session started meanwhile after the last one read
    // takes the offset of the last (it differs only across a change of offset in between).
    const range = store.statement(rangeSql).get(...params);
    time = localTimeSql(timeZone, range?.first, range?.last, (seconds) => {
      offsets.push(seconds);
      return "?";
    });
  }
  if (!readsModelUsage(store)) {
    return store.statement(
      `SELECT key, sessions, ${USAGE_NAMES}
       FROM (
         SELECT ${KEYS[by](time)} AS key, COUNT(*) AS sessions, ${USAGE_SUMS}
         FROM sessions ${where}
         GROUP BY 1
       )
       ORDER BY ${ORDER[by]}`,
    ).all(...offsets, ...params).map(toUsageRow);
  }
  // The sessions chosen, once (their parameters first), then their usage with their rows'.
  const parts = by === "model"
    ? modelUsagePartsSql("chosen", SQLITE_USAGE)
    : sessionsWithModelUsageSql("chosen", SQLITE_USAGE);
  return store.statement(
    `WITH chosen AS (SELECT * FROM sessions ${where})
     SELECT key, sessions, ${USAGE_NAMES}
     FROM (
       SELECT ${KEYS[by](time)} AS key, COUNT(DISTINCT id) AS sessions, ${USAGE_SUMS}
       FROM ${parts} AS sessions
       GROUP BY 1
     )
     ORDER BY ${ORDER[by]}`,
  ).all(...params, ...offsets).map(toUsageRow);
}

/**
 * Whether the file has per-model usage rows, in a table with every column a
 * report reads (without any row, the report is its sessions' totals).
 */
function readsModelUsage(store: Store): boolean {
  return readsSessionModelUsage(store) &&
    store.statement(`SELECT 1 AS one FROM ${MODEL_USAGE_TABLE} LIMIT 1`).get() !== undefined;
}
