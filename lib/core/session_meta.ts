/**
 * The `state_meta` keys that belong to one session rather than to the file:
 * Python Hermes keeps a session's goal (`goal:<session id>`, a JSON text of
 * the goal, its status and turns) there. A session moved to another store
 * takes them along.
 *
 * @module
 */

/**
 * The prefixes of the per-session keys, each followed by the session id.
 *
 * @example
 * ```ts
 * import { SESSION_META_PREFIXES } from "./session_meta.ts";
 * console.assert(SESSION_META_PREFIXES.map((prefix) => prefix + "s1").join() === "goal:s1");
 * ```
 */
export const SESSION_META_PREFIXES: readonly string[] = ["goal:"];
