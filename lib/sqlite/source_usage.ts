/**
 * Sessions, messages, tokens and cost per source (`hermes-state stats`).
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { SourceUsage } from "../core/usage.ts";

const USAGE_BY_SOURCE_SQL = `
SELECT s.source AS source,
       COUNT(*) AS session_count,
       COALESCE(SUM(m.n), 0) AS message_count,
       COALESCE(SUM(s.input_tokens), 0) AS total_input,
       COALESCE(SUM(s.output_tokens), 0) AS total_output,
       COALESCE(SUM(s.cache_read_tokens), 0) AS total_cache_read,
       COALESCE(SUM(s.cache_write_tokens), 0) AS total_cache_write,
       COALESCE(SUM(s.reasoning_tokens), 0) AS total_reasoning,
       SUM(s.estimated_cost_usd) AS estimated_cost,
       SUM(s.actual_cost_usd) AS actual_cost
FROM sessions s
LEFT JOIN (SELECT session_id, COUNT(*) AS n FROM messages GROUP BY session_id) m
       ON m.session_id = s.id
GROUP BY s.source
ORDER BY session_count DESC, s.source`;

/** Implements `SessionDB.usageBySource`: totals per source, numbers normalized. */
export function usageBySource(store: Store): SourceUsage[] {
  return store.statement(USAGE_BY_SOURCE_SQL).all().map((row) => ({
    source: String(row.source),
    session_count: Number(row.session_count),
    message_count: Number(row.message_count),
    total_input: Number(row.total_input),
    total_output: Number(row.total_output),
    total_cache_read: Number(row.total_cache_read),
    total_cache_write: Number(row.total_cache_write),
    total_reasoning: Number(row.total_reasoning),
    estimated_cost: row.estimated_cost === null ? null : Number(row.estimated_cost),
    actual_cost: row.actual_cost === null ? null : Number(row.actual_cost),
  }));
}
