/**
 * `LIKE` patterns of literal text, as Python escapes them: SQL's
 * standard `LIKE … ESCAPE '\'` form, which both SQL engines read the same way.
 *
 * @module
 */

/**
 * `text` escaped for `LIKE … ESCAPE '\'`: `\`, `%` and `_` match only themselves.
 *
 * @param text The literal text.
 * @returns The escaped text, for a pattern to end with `%` (a prefix) or to wrap.
 *
 * @example
 * ```ts
 * import { escapeLike } from "./like_pattern.ts";
 * console.assert(escapeLike("50%_off") === "50\\%\\_off");
 * ```
 */
export function escapeLike(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("%", "\\%").replaceAll("_", "\\_");
}

/**
 * A `LIKE … ESCAPE '\'` pattern matching `text` anywhere, literally: `\`,
 * `%` and `_` are escaped, as Python escapes them.
 *
 * @param text The text to find.
 * @returns The pattern `%…%`.
 */
export function containsPattern(text: string): string {
  return `%${escapeLike(text)}%`;
}
