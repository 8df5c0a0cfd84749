/**
 * Usage statistics: the seed's token and cost queries.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ModelUsage, SessionTokens } from "../core/types.ts";
import { checkCount } from "../core/paging.ts";

/** Implements `SessionDB.usageByModel`: the seed's per-model totals. */
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

/** Implements `SessionDB.topSessionsByTokens`: the seed's token ranking. */
export function topSessionsByTokens(store: Store, limit: number): SessionTokens[] {
  checkCount("rank sessions", "limit", limit);
  return store.statement(
    `SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
     FROM sessions
     ORDER BY total_tokens DESC, id
     LIMIT ?`,
  ).all(limit) as unknown as SessionTokens[];
}
