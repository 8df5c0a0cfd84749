/**
 * Usage statistics (the seed's statistics queries).
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ModelUsage, SessionTokens } from "./types.ts";
import { todo } from "./_todo.ts";

export function usageByModel(_store: Store): ModelUsage[] {
  return todo("usageByModel");
}

export function topSessionsByTokens(_store: Store, _limit: number): SessionTokens[] {
  return todo("topSessionsByTokens");
}
