/**
 * Lineage: compression chains, branches and delegates linked by
 * `parent_session_id`.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { SessionRow } from "./types.ts";
import { todo } from "./_todo.ts";

export function getCompressionTip(_store: Store, _id: string): string {
  return todo("getCompressionTip");
}

export function resolveResumeSessionId(_store: Store, _id: string): string {
  return todo("resolveResumeSessionId");
}

export function getAncestors(_store: Store, _id: string): SessionRow[] {
  return todo("getAncestors");
}

export function getDescendants(_store: Store, _id: string): SessionRow[] {
  return todo("getDescendants");
}
