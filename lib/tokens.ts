/**
 * Token and cost accounting of a session.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { todo } from "./_todo.ts";

/** Options of `updateTokenCounts` (SPEC §4, §5 "Token counts"). */
export interface TokenCountsUpdate {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  model?: string | null;
  estimatedCostUsd?: number | null;
  actualCostUsd?: number | null;
  costStatus?: string | null;
  costSource?: string | null;
  pricingVersion?: string | null;
  billingProvider?: string | null;
  billingBaseUrl?: string | null;
  billingMode?: string | null;
  apiCallCount?: number | null;
  /** Set the values instead of adding them. */
  absolute?: boolean;
}

export function updateTokenCounts(_store: Store, _id: string, _update: TokenCountsUpdate): void {
  todo("updateTokenCounts");
}
