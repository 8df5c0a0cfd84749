/**
 * Tokens and cost over time or by model or source (`hermes-state usage`,
 * the web page's Usage view). A session's tokens and cost count on the day
 * it started, as the session row carries their totals.
 *
 * @module
 */
import type { SqlValue } from "./driver/types.ts";
import type { Store } from "./store.ts";
import type { UsageGrouping, UsageReportOptions, UsageRow } from "../core/usage.ts";
import { checkUsageOptions, toUsageRow } from "../core/usage.ts";

/** The group key of each grouping: a closed set of SQL expressions, never built from input. */
const KEYS: Readonly<Record<UsageGrouping, string>> = {
  day: "strftime('%Y-%m-%d', started_at, 'unixepoch')",
  // 'weekday 1' moves forward to the next Monday (or stays); minus 7 days gives this week's Monday.
  week: "date(started_at, 'unixepoch', '-6 days', 'weekday 1')",
  month: "strftime('%Y-%m', started_at, 'unixepoch')",
  model: "model",
  source: "source",
};

/** Time groups read oldest first; model and source groups by cost, then tokens. */
const ORDER: Readonly<Record<UsageGrouping, string>> = {
  day: "key",
  week: "key",
  month: "key",
  model: "COALESCE(estimated_cost_usd, 0) DESC, input_tokens + output_tokens DESC, key",
  source: "COALESCE(estimated_cost_usd, 0) DESC, input_tokens + output_tokens DESC, key",
};

/** Implements `SessionDB.usageReport`: one grouped query over `sessions`. */
export function usageReport(store: Store, options: UsageReportOptions = {}): UsageRow[] {
  const { by, since, until, source } = checkUsageOptions(options);
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
  return store.statement(
    `SELECT key, sessions, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
            reasoning_tokens, estimated_cost_usd, actual_cost_usd
     FROM (
       SELECT ${KEYS[by]} AS key,
              COUNT(*) AS sessions,
              COALESCE(SUM(input_tokens), 0) AS input_tokens,
              COALESCE(SUM(output_tokens), 0) AS output_tokens,
              COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens,
              COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens,
              COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,
              SUM(estimated_cost_usd) AS estimated_cost_usd,
              SUM(actual_cost_usd) AS actual_cost_usd
       FROM sessions ${where}
       GROUP BY 1
     )
     ORDER BY ${ORDER[by]}`,
  ).all(...params).map(toUsageRow);
}
