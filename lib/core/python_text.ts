/**
 * Python's view of text, where hermes-state must agree with the Python
 * Hermes: what `str.isspace()` (and so `re`'s `\s`, `str.strip()` and
 * `str.split()`) counts as whitespace, and lengths and slices in code
 * points. Shared by titles, listings, `state_meta` floats and search.
 *
 * @module
 */

/**
 * The characters Python 3 `str.isspace()` accepts, as the body of a regular
 * expression character class (use it with the `u` flag). Unlike JavaScript's
 * `\s`, it includes U+001C–U+001F and U+0085, and excludes U+FEFF.
 */
export const PYTHON_WHITESPACE =
  "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/** One whitespace character (all of them are in the BMP: one UTF-16 unit each). */
const SPACE = new RegExp(`[${PYTHON_WHITESPACE}]`, "u");
const RUN = new RegExp(`[${PYTHON_WHITESPACE}]+`, "u");

/**
 * Python's `text.strip()` with no argument.
 *
 * @param text The text.
 * @returns The text without leading and trailing Python whitespace.
 *
 * @example
 * ```ts
 * import { pythonStrip } from "./python_text.ts";
 * console.assert(pythonStrip("\x1c hi\u0085") === "hi");
 * console.assert(pythonStrip("\ufeffhi") === "\ufeffhi");
 * ```
 */
export function pythonStrip(text: string): string {
  // A loop from each end, not `/\s+$/`: that regex retries at every position
  // of a long whitespace run, which is quadratic.
  let start = 0;
  let end = text.length;
  while (start < end && SPACE.test(text[start])) start++;
  while (end > start && SPACE.test(text[end - 1])) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/**
 * Python's `text.split()` with no argument: the runs of non-whitespace, in
 * order.
 *
 * @param text The text.
 * @returns The words; `[]` for blank text.
 *
 * @example
 * ```ts
 * import { pythonSplit } from "./python_text.ts";
 * console.assert(pythonSplit(" a\u3000b\x1fc ").join("|") === "a|b|c");
 * console.assert(pythonSplit(" \u2028 ").length === 0);
 * ```
 */
export function pythonSplit(text: string): string[] {
  const stripped = pythonStrip(text);
  return stripped === "" ? [] : stripped.split(RUN);
}

/**
 * Python's `text.strip(char)` for a single character.
 *
 * @param text The text.
 * @param char The one (BMP) character to remove from both ends.
 * @returns The text without leading and trailing `char`.
 *
 * @example
 * ```ts
 * import { pythonStripChar } from "./python_text.ts";
 * console.assert(pythonStripChar('""a "b""', '"') === 'a "b');
 * ```
 */
export function pythonStripChar(text: string, char: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === char) start++;
  while (end > start && text[end - 1] === char) end--;
  return text.slice(start, end);
}

/**
 * Python's `len(text)`: the number of code points.
 *
 * @param text The text.
 * @returns Its length in code points.
 *
 * @example
 * ```ts
 * import { codePointLength } from "./python_text.ts";
 * console.assert(codePointLength("🚀a") === 2);
 * ```
 */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Python's `text[:n]`: the first `n` code points.
 *
 * @param text The text.
 * @param n How many code points to keep.
 * @returns The prefix.
 *
 * @example
 * ```ts
 * import { codePointSlice } from "./python_text.ts";
 * console.assert(codePointSlice("🚀🚀🚀", 2) === "🚀🚀");
 * ```
 */
export function codePointSlice(text: string, n: number): string {
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
