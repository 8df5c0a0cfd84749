/**
 * The `LIKE` pattern of a literal substring, as Python escapes it: SQL's
 * standard `LIKE … ESCAPE '\\'` form, which both SQL engines read the same way.
 *
 * @module
 */
/**
 * A `LIKE … ESCAPE '\'` pattern matching `text` anywhere, literally: `\`,
 * `%` and `_` are escaped, as Python escapes them.
 *
 * @param text The text to find.
 * @returns The pattern `%…%`.
 */
export function containsPattern(text: string): string {
  const escaped = text.replaceAll("\\", "\\\\").replaceAll("%", "\\%").replaceAll("_", "\\_");
  return `%${escaped}%`;
}
