/**
 * Usage statistics: the seed's token and cost queries.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ModelUsage, SessionTokens } from "./types.ts";
import { checkCount } from "./paging.ts";

/**
 * Sessions, input and output tokens and estimated cost per model (sessions
 * without a model are left out), highest total cost first; models without
 * any cost come last, then by name.
 *
 * @param store The open store.
 * @returns One row per model: `model, session_count, total_input, total_output, total_cost`.
 *
 * @example
 * ```ts ignore
 * for (const u of db.usageByModel()) console.log(u.model, u.session_count, u.total_cost);
 * ```
 */
export function usageByModel(store: Store): ModelUsage[] {
  return store.statement(
    `SELECT model,
       COUNT(*) AS session_count,
       SUM(input_tokens) AS total_input,
       SUM(output_tokens) AS total_output,
       SUM(estimated_cost_usd) AS total_cost
     FROM sessions
     WHERE model IS NOT NULL
     GROUP BY model
     ORDER BY total_cost DESC, model`,
  ).all() as unknown as ModelUsage[];
}

/**
 * The sessions that used the most tokens (input plus output), most first;
 * ties by id.
 *
 * @param store The open store.
 * @param limit How many sessions.
 * @returns Rows of `id, title, model, total_tokens, estimated_cost_usd`.
 * @throws {RangeError} When `limit` is not a non-negative integer.
 *
 * @example
 * ```ts ignore
 * db.topSessionsByTokens(3).map((s) => `${s.id}: ${s.total_tokens}`);
 * ```
 */
export function topSessionsByTokens(store: Store, limit: number): SessionTokens[] {
  checkCount("rank sessions", "limit", limit);
  return store.statement(
    `SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
     FROM sessions
     ORDER BY total_tokens DESC, id
     LIMIT ?`,
  ).all(limit) as unknown as SessionTokens[];
}
