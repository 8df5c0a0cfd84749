/**
 * The failure of a write that names a session that does not exist (a
 * message's session, a new session's parent), told the same way by both
 * engines: SQLite's own text first, as Python's code shows it, then what
 * could not be done and which session is missing.
 *
 * @module
 */
import { StorageError } from "./storage_error.ts";
import { clippedText } from "./shown_value.ts";

/** SQLite's text for the failure, which Python's code shows as it is. */
const FOREIGN_KEY_FAILED = "FOREIGN KEY constraint failed";

/**
 * Whether `error` is that failure as the engine raised it (a
 * {@linkcode StorageError} of kind `constraint` with SQLite's bare text), not
 * yet told with {@linkcode missingSessionMessage}.
 *
 * @param error What was thrown.
 * @returns True for the failure.
 */
export function isForeignKeyFailure(error: unknown): error is StorageError {
  return error instanceof StorageError && error.kind === "constraint" &&
    error.message === FOREIGN_KEY_FAILED;
}

/**
 * The message of that failure.
 *
 * @example A message whose session does not exist
 * ```ts
 * import { missingSessionMessage } from "./missing_session.ts";
 * console.assert(
 *   missingSessionMessage("append message", "s1") ===
 *     'FOREIGN KEY constraint failed: cannot append message: no session "s1"',
 * );
 * ```
 *
 * @param doing What could not be done, e.g. `append message`.
 * @param id The id of the session that does not exist (long ones clipped).
 * @param role What the missing session would have been (`parent session`).
 * @returns The message.
 */
export function missingSessionMessage(doing: string, id: string, role = "session"): string {
  return `${FOREIGN_KEY_FAILED}: cannot ${doing}: no ${role} ${clippedText(id, JSON.stringify)}`;
}

/**
 * The message of that failure for a new session whose parent does not exist.
 *
 * @param id The new session.
 * @param parentId The parent named, which does not exist.
 * @returns The message, e.g. `FOREIGN KEY constraint failed: cannot create
 *   session "s2": no parent session "nope"`.
 */
export function missingParentMessage(id: string, parentId: string): string {
  const doing = `create session ${clippedText(id, JSON.stringify)}`;
  return missingSessionMessage(doing, parentId, "parent session");
}
