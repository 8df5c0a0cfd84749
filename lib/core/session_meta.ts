/**
 * The `state_meta` keys that belong to one session rather than to the file:
 * Python Hermes keeps a session's goal (`goal:<session id>`, a JSON text of
 * the goal, its status and turns) there. A session moved to another store
 * takes them along.
 *
 * @module
 */

/** The prefixes of the per-session keys, each followed by the session id. */
export const SESSION_META_PREFIXES: readonly string[] = ["goal:"];

/**
 * The `state_meta` keys a session may have.
 *
 * @param sessionId The session id.
 * @returns One key per prefix of {@linkcode SESSION_META_PREFIXES}.
 *
 * @example
 * ```ts
 * import { sessionMetaKeys } from "./session_meta.ts";
 * console.assert(sessionMetaKeys("s1").join() === "goal:s1");
 * ```
 */
export function sessionMetaKeys(sessionId: string): string[] {
  return SESSION_META_PREFIXES.map((prefix) => prefix + sessionId);
}
