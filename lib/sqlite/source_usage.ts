/**
 * Sessions, messages, tokens and cost per source (`hermes-state stats`).
 *
 * @module
 */
import type { Store } from "./store.ts";
import { type SourceUsage, TOKEN_TOTALS, toSourceUsage } from "../core/usage.ts";

/**
 * Totals per source, most sessions first. Token totals are `TOTAL()`s: SQLite's
 * `SUM()` of integers fails past 2^63 ("integer overflow"), where a PostgreSQL
 * store's answers; below 2^53 the two are the same number.
 */
const USAGE_BY_SOURCE_SQL = `
SELECT s.source AS source,
       COUNT(*) AS session_count,
       COALESCE(SUM(m.n), 0) AS message_count,
       ${TOKEN_TOTALS.map((t) => `TOTAL(s.${t.column}) AS ${t.total}`).join(",\n       ")},
       SUM(s.estimated_cost_usd) AS estimated_cost,
       SUM(s.actual_cost_usd) AS actual_cost
FROM sessions s
LEFT JOIN (SELECT session_id, COUNT(*) AS n FROM messages GROUP BY session_id) m
       ON m.session_id = s.id
GROUP BY s.source
ORDER BY session_count DESC, s.source`;

/** Implements `SessionDB.usageBySource`: totals per source, numbers normalized. */
export function usageBySource(store: Store): SourceUsage[] {
  return store.statement(USAGE_BY_SOURCE_SQL).all().map(toSourceUsage);
}
