/**
 * Session listings with previews, and counts.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { RichSessionRow, SessionRow } from "./types.ts";
import { todo } from "./_todo.ts";

/** Options of `listSessionsRich`. */
export interface ListSessionsOptions {
  source?: string | null;
  excludeSources?: readonly string[] | null;
  /** @default {20} */
  limit?: number;
  /** @default {0} */
  offset?: number;
  /** @default {false} */
  includeChildren?: boolean;
  /** @default {true} */
  projectCompressionTips?: boolean;
  /** @default {false} */
  orderByLastActive?: boolean;
}

/** Options of `searchSessions`. */
export interface SearchSessionsOptions {
  source?: string | null;
  /** @default {20} */
  limit?: number;
  /** @default {0} */
  offset?: number;
}

/** Options of `sessionCount`. */
export interface SessionCountOptions {
  source?: string | null;
}

export function listSessionsRich(_store: Store, _options: ListSessionsOptions): RichSessionRow[] {
  return todo("listSessionsRich");
}

export function searchSessions(_store: Store, _options: SearchSessionsOptions): SessionRow[] {
  return todo("searchSessions");
}

export function sessionCount(_store: Store, _options: SessionCountOptions): number {
  return todo("sessionCount");
}
