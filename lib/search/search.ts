/**
 * Full-text search over every message.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SearchHit } from "../types.ts";
import { todo } from "../_todo.ts";

/** Options of `searchMessages`. */
export interface SearchOptions {
  /** Only these sources (an empty list matches nothing). */
  sourceFilter?: readonly string[] | null;
  /** Never these sources. */
  excludeSources?: readonly string[] | null;
  /** Only these roles. */
  roleFilter?: readonly string[] | null;
  /** @default {20} */
  limit?: number;
  /** @default {0} */
  offset?: number;
}

export function searchMessages(
  _store: Store,
  _query: string,
  _options: SearchOptions,
): SearchHit[] {
  return todo("searchMessages");
}
