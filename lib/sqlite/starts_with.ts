/**
 * "Starts with", as Python asks it (`col LIKE 'prefix%' ESCAPE '\'`: ASCII
 * case-insensitive, `\`, `%` and `_` literal), for any length of prefix:
 * SQLite refuses a `LIKE` pattern longer than 50,000 bytes ("LIKE or GLOB
 * pattern too complex"), so a longer prefix (a pasted blob given as an id)
 * is compared by `lower(substr(…))`, which folds the same ASCII letters.
 *
 * @module
 */
import { escapeLike } from "../core/like_pattern.ts";

/** SQLite's default `SQLITE_MAX_LIKE_PATTERN_LENGTH`, in bytes. */
const LIKE_PATTERN_MAX_BYTES = 50_000;

const encoder = new TextEncoder();

/** An SQL condition and the values it binds, in order. */
export interface SqlCondition {
  /** The condition, with `?` placeholders. */
  readonly sql: string;
  /** The values of its placeholders. */
  readonly params: readonly string[];
}

/**
 * The condition "`column` starts with `prefix`".
 *
 * @param column The column (an identifier the caller wrote).
 * @param prefix The literal prefix.
 * @returns The condition and its values.
 *
 * @example
 * ```ts
 * import { startsWith } from "./starts_with.ts";
 * console.assert(startsWith("id", "50%").sql === "id LIKE ? ESCAPE '\\'");
 * console.assert(startsWith("id", "50%").params[0] === "50\\%%");
 * ```
 */
export function startsWith(column: string, prefix: string): SqlCondition {
  const pattern = `${escapeLike(prefix)}%`;
  if (encoder.encode(pattern).length <= LIKE_PATTERN_MAX_BYTES) {
    return { sql: `${column} LIKE ? ESCAPE '\\'`, params: [pattern] };
  }
  return { sql: `lower(substr(${column}, 1, length(?))) = lower(?)`, params: [prefix, prefix] };
}
