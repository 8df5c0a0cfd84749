/**
 * Token and cost accounting of a session.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { ensureSession } from "./sessions.ts";
import { recordModelUsage } from "./model_usage.ts";
import { checkKeyText, checkTokenCounts, type TokenCountsUpdate } from "../core/session_options.ts";

/** Delta mode: counters and costs add up; billing fills only while NULL. */
const ADD_TOKENS = `UPDATE sessions SET
  input_tokens = input_tokens + ?,
  output_tokens = output_tokens + ?,
  cache_read_tokens = cache_read_tokens + ?,
  cache_write_tokens = cache_write_tokens + ?,
  reasoning_tokens = reasoning_tokens + ?,
  estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE(?, 0),
  actual_cost_usd = CASE WHEN ? IS NULL THEN actual_cost_usd ELSE COALESCE(actual_cost_usd, 0) + ? END,
  cost_status = COALESCE(?, cost_status),
  cost_source = COALESCE(?, cost_source),
  pricing_version = COALESCE(?, pricing_version),
  billing_provider = COALESCE(billing_provider, ?),
  billing_base_url = COALESCE(billing_base_url, ?),
  billing_mode = COALESCE(billing_mode, ?),
  model = COALESCE(model, ?),
  api_call_count = COALESCE(api_call_count, 0) + ?
  WHERE id = ?`;

/** Absolute mode: the caller holds cumulative totals; an omitted cost or call count resets to 0. */
const SET_TOKENS = `UPDATE sessions SET
  input_tokens = ?,
  output_tokens = ?,
  cache_read_tokens = ?,
  cache_write_tokens = ?,
  reasoning_tokens = ?,
  estimated_cost_usd = COALESCE(?, 0),
  actual_cost_usd = CASE WHEN ? IS NULL THEN actual_cost_usd ELSE ? END,
  cost_status = COALESCE(?, cost_status),
  cost_source = COALESCE(?, cost_source),
  pricing_version = COALESCE(?, pricing_version),
  billing_provider = COALESCE(billing_provider, ?),
  billing_base_url = COALESCE(billing_base_url, ?),
  billing_mode = COALESCE(billing_mode, ?),
  model = COALESCE(model, ?),
  api_call_count = ?
  WHERE id = ?`;

/**
 * Implements `SessionDB.updateTokenCounts`: Python's additive or absolute
 * update, and in a newer Hermes's file its per-model usage row too.
 */
export function updateTokenCounts(store: Store, id: string, update: TokenCountsUpdate = {}): void {
  checkKeyText("update token counts", "id", id);
  checkTokenCounts(update);
  const model = update.model ?? null;
  const actual = update.actualCostUsd ?? null;
  const params = [
    update.inputTokens ?? 0,
    update.outputTokens ?? 0,
    update.cacheReadTokens ?? 0,
    update.cacheWriteTokens ?? 0,
    update.reasoningTokens ?? 0,
    update.estimatedCostUsd ?? null,
    actual,
    actual,
    update.costStatus ?? null,
    update.costSource ?? null,
    update.pricingVersion ?? null,
    update.billingProvider ?? null,
    update.billingBaseUrl ?? null,
    update.billingMode ?? null,
    model,
    update.apiCallCount ?? 0,
    id,
  ];
  store.write(() => {
    ensureSession(store, id, "unknown", { model });
    store.statement(update.absolute ? SET_TOKENS : ADD_TOKENS).run(...params);
    recordModelUsage(store, id, update);
  });
}
