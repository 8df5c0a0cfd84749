/**
 * Finds the session a user means: an exact id, a unique id prefix, or a
 * title (exact first, then the newest `"<title> #N"` of its lineage).
 *
 * @module
 */
import type { SessionStore } from "../session_store.ts";
import { CommandError } from "./usage_error.ts";

/**
 * Resolves what the user typed to a session id.
 *
 * @param store The open store.
 * @param text An id, a unique id prefix, or a title.
 * @returns The session id.
 * @throws {CommandError} When nothing (or more than one session) matches.
 *
 * @example
 * ```ts ignore
 * const id = await resolveSession(store, "2026042");
 * ```
 */
export async function resolveSession(store: SessionStore, text: string): Promise<string> {
  const id = await store.resolveSessionId(text) ?? (await store.getSessionByTitle(text))?.id ??
    await store.resolveSessionByTitle(text);
  if (id === undefined) {
    throw new CommandError(
      `Session '${text}' not found (give an id, a unique id prefix or a title)`,
    );
  }
  return id;
}
