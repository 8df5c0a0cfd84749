/**
 * Usage statistics: the seed's token and cost queries.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ModelUsage, SessionTokens } from "../core/types.ts";
import { checkCount } from "../core/paging.ts";
import { rowsWithBlobsAsText } from "../core/blob_text.ts";

/**
 * Implements `SessionDB.usageByModel`: the seed's per-model totals (a BLOB
 * model, as Python's sqlite3 stores `bytes`, named by its UTF-8 text). Its
 * token sums are `SUM()`'s answers (NULL without a value) read through
 * `TOTAL()`, which does not fail past 2^63 ("integer overflow") as `SUM()` of
 * integers does; below 2^53 they are the same number.
 */
export function usageByModel(store: Store): ModelUsage[] {
  const rows = store.statement(
    `SELECT model,
       COUNT(*) AS session_count,
       CASE WHEN COUNT(input_tokens) > 0 THEN TOTAL(input_tokens) END AS total_input,
       CASE WHEN COUNT(output_tokens) > 0 THEN TOTAL(output_tokens) END AS total_output,
       SUM(estimated_cost_usd) AS total_cost
     FROM sessions
     WHERE model IS NOT NULL
     GROUP BY model
     ORDER BY total_cost DESC, model`,
  ).all();
  return rowsWithBlobsAsText(rows) as unknown as ModelUsage[];
}

/** Implements `SessionDB.topSessionsByTokens`: the seed's token ranking (BLOBs as text). */
export function topSessionsByTokens(store: Store, limit: number): SessionTokens[] {
  checkCount("rank sessions", "limit", limit);
  const rows = store.statement(
    `SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
     FROM sessions
     ORDER BY total_tokens DESC, id
     LIMIT ?`,
  ).all(limit);
  return rowsWithBlobsAsText(rows) as unknown as SessionTokens[];
}
