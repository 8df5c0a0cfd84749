/**
 * Python's view of text, where hermes-state must agree with the Python
 * Hermes: what `str.isspace()` (and so `\s`, `str.strip()`) counts as
 * whitespace, and lengths in code points.
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

const LEADING = new RegExp(`^[${PYTHON_WHITESPACE}]+`, "u");
const TRAILING = new RegExp(`[${PYTHON_WHITESPACE}]+$`, "u");

/**
 * Python's `text.strip()` with no argument.
 *
 * @param text The text.
 * @returns The text without leading and trailing Python whitespace.
 *
 * @example
 * ```ts
 * import { pythonStrip } from "./_python_text.ts";
 * console.assert(pythonStrip("\x1c hi\u0085") === "hi");
 * console.assert(pythonStrip("\ufeffhi") === "\ufeffhi");
 * ```
 */
export function pythonStrip(text: string): string {
  return text.replace(LEADING, "").replace(TRAILING, "");
}

/**
 * Python's `len(text)`: the number of code points.
 *
 * @param text The text.
 * @returns Its length in code points.
 *
 * @example
 * ```ts
 * import { codePointLength } from "./_python_text.ts";
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
 * import { codePointSlice } from "./_python_text.ts";
 * console.assert(codePointSlice("🚀🚀🚀", 2) === "🚀🚀");
 * ```
 */
export function codePointSlice(text: string, n: number): string {
  let end = 0;
  let count = 0;
  for (const ch of text) {
    if (count === n) break;
    end += ch.length;
    count++;
  }
  return text.slice(0, end);
}
