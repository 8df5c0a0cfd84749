/**
 * Session titles and id resolution.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { SessionRow } from "./types.ts";
import { todo } from "./_todo.ts";

export function sanitizeTitle(_title: string | null | undefined): string | null {
  return todo("sanitizeTitle");
}

export function setSessionTitle(_store: Store, _id: string, _title: string | null): boolean {
  return todo("setSessionTitle");
}

export function getSessionTitle(_store: Store, _id: string): string | null | undefined {
  return todo("getSessionTitle");
}

export function getSessionByTitle(_store: Store, _title: string): SessionRow | undefined {
  return todo("getSessionByTitle");
}

export function resolveSessionByTitle(_store: Store, _title: string): string | undefined {
  return todo("resolveSessionByTitle");
}

export function getNextTitleInLineage(_store: Store, _base: string): string {
  return todo("getNextTitleInLineage");
}

export function resolveSessionId(_store: Store, _idOrPrefix: string): string | undefined {
  return todo("resolveSessionId");
}
