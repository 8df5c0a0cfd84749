/**
 * The pieces of Python 3 `re` and `str` semantics the search code must
 * reproduce: Unicode `\s`, `\w`, `\b`, `str.strip()` and `str.split()`.
 * JavaScript's `\s`, `\w` and `\b` differ (ASCII `\w`/`\b`; a `\s` without
 * U+001C–U+001F and U+0085 but with U+FEFF), so these are spelled out.
 *
 * @module
 */

/**
 * The characters of Python's `str.isspace()` (and so of `re`'s `\s` on
 * `str`), as the body of a character class for a `u`-flag regex.
 */
export const PY_SPACE =
  "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/**
 * Python's `\w` on `str` (letters, numbers and `_`), as the body of a
 * character class for a `u`-flag regex.
 */
export const PY_WORD = "\\p{L}\\p{N}_";

/** Python's `\b` on `str`, as a `u`-flag regex fragment. */
export const PY_BOUNDARY =
  `(?:(?<=[${PY_WORD}])(?![${PY_WORD}])|(?<![${PY_WORD}])(?=[${PY_WORD}]))`;

const LEADING_SPACE = new RegExp(`^[${PY_SPACE}]+`, "u");
const TRAILING_SPACE = new RegExp(`[${PY_SPACE}]+$`, "u");
const SPACE_RUN = new RegExp(`[${PY_SPACE}]+`, "u");

/**
 * Python's `text.strip()`.
 *
 * @param text Any text.
 * @returns `text` without leading and trailing Python whitespace.
 */
export function pyStrip(text: string): string {
  return text.replace(LEADING_SPACE, "").replace(TRAILING_SPACE, "");
}

/**
 * Python's `text.split()`: the runs of non-whitespace, in order.
 *
 * @param text Any text.
 * @returns The words; `[]` for blank text.
 */
export function pySplit(text: string): string[] {
  const stripped = pyStrip(text);
  return stripped === "" ? [] : stripped.split(SPACE_RUN);
}

/**
 * Python's `text.strip(chars)` for a single character.
 *
 * @param text Any text.
 * @param char The one (BMP) character to remove from both ends.
 * @returns `text` without leading and trailing `char`.
 */
export function pyStripChar(text: string, char: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === char) start++;
  while (end > start && text[end - 1] === char) end--;
  return text.slice(start, end);
}

/**
 * Python's `text[:n]`: the first `n` code points.
 *
 * @param text Any text.
 * @param n How many code points to keep.
 * @returns The prefix.
 */
export function pyPrefix(text: string, n: number): string {
  if (text.length <= n) return text;
  let end = 0;
  let count = 0;
  for (const ch of text) {
    if (count === n) break;
    end += ch.length;
    count++;
  }
  return text.slice(0, end);
}

/**
 * Python's `len(text)`: the number of code points.
 *
 * @param text Any text.
 * @returns Its length in code points.
 */
export function pyLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
