/**
 * What the API takes as a session id, and what it says of one it cannot find.
 *
 * @module
 */

/**
 * The longest session id the API takes, in characters: Hermes sets no limit, and a session
 * the listing shows must open (its URL stays under the runtimes' 16 KiB request line when
 * the id is ASCII).
 */
export const MAX_SESSION_ID = 10_000;

/**
 * The message of a 404 for session `id`. An id holding U+FFFD may be one whose stored bytes
 * are not UTF-8 text: read, each bad byte became U+FFFD, so the listing shows it, but no
 * lookup by the id as read finds it again.
 *
 * @param id The id asked for.
 * @returns The message.
 *
 * @example
 * ```ts
 * import { sessionNotFound } from "./session_id_param.ts";
 * console.assert(sessionNotFound("abc") === "Session 'abc' not found");
 * ```
 */
export function sessionNotFound(id: string): string {
  if (!id.includes("\uFFFD")) return `Session '${id}' not found`;
  return `Session '${id}' not found: a session id shown with U+FFFD may hold bytes that are ` +
    "not UTF-8 text (each bad byte shown as U+FFFD), and such an id cannot be opened or " +
    "exported here";
}
