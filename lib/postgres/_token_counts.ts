/**
 * The statements that add a turn's tokens and cost to a session's
 * counters (`updateTokenCounts`), or set them (`absolute`), and their
 * parameters.
 *
 * @module
 */
import type { TokenCountsUpdate } from "../core/session_options.ts";
import type { PgValue } from "./_client_types.ts";

/** Adds the counts of `$1`… to session `$16`'s, and fills what it lacks. */
export const ADD_TOKENS = `UPDATE sessions SET
  input_tokens = input_tokens + $1::numeric,
  output_tokens = output_tokens + $2::numeric,
  cache_read_tokens = cache_read_tokens + $3::numeric,
  cache_write_tokens = cache_write_tokens + $4::numeric,
  reasoning_tokens = reasoning_tokens + $5::numeric,
  estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE($6::double precision, 0),
  actual_cost_usd = CASE WHEN $7::double precision IS NULL THEN actual_cost_usd
    ELSE COALESCE(actual_cost_usd, 0) + $7::double precision END,
  cost_status = COALESCE($8::text, cost_status),
  cost_source = COALESCE($9::text, cost_source),
  pricing_version = COALESCE($10::text, pricing_version),
  billing_provider = COALESCE(billing_provider, $11::text),
  billing_base_url = COALESCE(billing_base_url, $12::text),
  billing_mode = COALESCE(billing_mode, $13::text),
  model = COALESCE(model, $14::text),
  api_call_count = COALESCE(api_call_count, 0) + $15::numeric
  WHERE id = $16`;

/** Sets session `$16`'s counts to those of `$1`…, and fills what it lacks. */
export const SET_TOKENS = `UPDATE sessions SET
  input_tokens = $1::numeric,
  output_tokens = $2::numeric,
  cache_read_tokens = $3::numeric,
  cache_write_tokens = $4::numeric,
  reasoning_tokens = $5::numeric,
  estimated_cost_usd = COALESCE($6::double precision, 0),
  actual_cost_usd = CASE WHEN $7::double precision IS NULL THEN actual_cost_usd
    ELSE $7::double precision END,
  cost_status = COALESCE($8::text, cost_status),
  cost_source = COALESCE($9::text, cost_source),
  pricing_version = COALESCE($10::text, pricing_version),
  billing_provider = COALESCE(billing_provider, $11::text),
  billing_base_url = COALESCE(billing_base_url, $12::text),
  billing_mode = COALESCE(billing_mode, $13::text),
  model = COALESCE(model, $14::text),
  api_call_count = $15::numeric
  WHERE id = $16`;

/**
 * The parameters of {@linkcode ADD_TOKENS} and {@linkcode SET_TOKENS}: the
 * counts given (0, or `null` for a cost, when absent), the model, the id.
 *
 * @param id The session's id.
 * @param update The counts (checked).
 * @param model The model, `null` when not given.
 * @returns `$1` to `$16`.
 */
export function tokenCountParams(
  id: string,
  update: TokenCountsUpdate,
  model: string | null,
): PgValue[] {
  return [
    update.inputTokens ?? 0,
    update.outputTokens ?? 0,
    update.cacheReadTokens ?? 0,
    update.cacheWriteTokens ?? 0,
    update.reasoningTokens ?? 0,
    update.estimatedCostUsd ?? null,
    update.actualCostUsd ?? null,
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
}
