/**
 * Session lifecycle: create, ensure, end, reopen, system prompt, read.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { JsonValue, SessionRow } from "./types.ts";
import { todo } from "./_todo.ts";

/** Options of `createSession`. */
export interface CreateSessionOptions {
  /** The model name. */
  model?: string | null;
  /** Model settings, stored as JSON (empty → NULL). */
  modelConfig?: JsonValue | null;
  /** The assembled system prompt. */
  systemPrompt?: string | null;
  /** The platform user. */
  userId?: string | null;
  /** The session this one continues; must exist. */
  parentSessionId?: string | null;
}

/** Options of `ensureSession`. */
export interface EnsureSessionOptions {
  /** The model name. */
  model?: string | null;
}

export function createSession(
  _store: Store,
  _id: string,
  _source: string,
  _options: CreateSessionOptions,
): string {
  return todo("createSession");
}

export function ensureSession(
  _store: Store,
  _id: string,
  _source: string,
  _options: EnsureSessionOptions,
): string {
  return todo("ensureSession");
}

export function endSession(_store: Store, _id: string, _endReason: string): void {
  todo("endSession");
}

export function reopenSession(_store: Store, _id: string): void {
  todo("reopenSession");
}

export function updateSystemPrompt(_store: Store, _id: string, _prompt: string): void {
  todo("updateSystemPrompt");
}

/**
 * Reads one session with every column, including columns a newer Hermes added.
 *
 * @param store The open store.
 * @param id The session id.
 * @returns The row, or `undefined` when there is none.
 */
export function getSession(store: Store, id: string): SessionRow | undefined {
  return store.statement("SELECT * FROM sessions WHERE id = ?").get(id) as SessionRow | undefined;
}
