/**
 * Finds the session a user means: an exact id, a unique id prefix, or a
 * title (exact first, then the newest `"<title> #N"` of its lineage).
 *
 * @module
 */
import type { SessionDB } from "../session_db.ts";
import { CommandError } from "./usage_error.ts";

/**
 * Resolves what the user typed to a session id.
 *
 * @param db The open database.
 * @param text An id, a unique id prefix, or a title.
 * @returns The session id.
 * @throws {CommandError} When nothing (or more than one session) matches.
 *
 * @example
 * ```ts ignore
 * const id = resolveSession(db, "2026042");
 * ```
 */
export function resolveSession(db: SessionDB, text: string): string {
  const id = db.resolveSessionId(text) ?? db.getSessionByTitle(text)?.id ??
    db.resolveSessionByTitle(text);
  if (id === undefined) {
    throw new CommandError(
      `Session '${text}' not found (give an id, a unique id prefix or a title)`,
    );
  }
  return id;
}
