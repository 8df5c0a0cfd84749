/**
 * How an error or a warning names a value it was given, for every layer: a
 * short value whole, as it always was; a long one (a 2 MB argument) cut to
 * its first {@linkcode SHOWN_HEAD} characters, then `…` and how long the
 * whole was, so that one bad value can never make a message of megabytes.
 *
 * @module
 */
import { groupedDigits } from "./grouped_digits.ts";
import { codePointLength, codePointSlice } from "./python_text.ts";

/** The most characters of a value a message shows whole. */
export const SHOWN_WHOLE = 160;

/** The characters a message keeps of a longer value. */
export const SHOWN_HEAD = 100;

/**
 * Names a text in a message: `show(text)` when it is short; else
 * `show(head + "…")` then how many characters the whole text has.
 *
 * @param text The text as given.
 * @param show How the message writes a text (quoted, made printable); as it is by default.
 * @returns The text as the message names it.
 *
 * @example
 * ```ts
 * import { clippedText } from "./shown_value.ts";
 * console.assert(clippedText("abc", JSON.stringify) === '"abc"');
 * console.assert(clippedText("a".repeat(2000), JSON.stringify).endsWith('…" (2,000 characters)'));
 * ```
 */
export function clippedText(text: string, show: (text: string) => string = (t) => t): string {
  if (text.length <= SHOWN_WHOLE) return show(text);
  const count = codePointLength(text);
  if (count <= SHOWN_WHOLE) return show(text);
  return `${show(`${codePointSlice(text, SHOWN_HEAD)}…`)} (${
    groupedDigits(String(count))
  } characters)`;
}

/** The whole text of a value: JSON for an object, digits for a bigint, `-0` kept. */
function wholeText(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Object.is(value, -0)) return "-0";
  if (typeof value === "object" && value !== null) {
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  return String(value);
}

/**
 * Names a value in an error message: a string in quotes (as JSON writes
 * it), an object or array as JSON, a bigint as its digits, `-0` as `-0`,
 * anything else as `String` writes it; cut as {@linkcode clippedText} cuts
 * when long.
 *
 * @param value The value given.
 * @returns The value as the message names it.
 *
 * @example
 * ```ts
 * import { quotedValue } from "./shown_value.ts";
 * console.assert(quotedValue("off") === '"off"');
 * console.assert(quotedValue({ a: 1 }) === '{"a":1}');
 * console.assert(quotedValue(12n) === "12");
 * ```
 */
export function quotedValue(value: unknown): string {
  if (typeof value === "string") return clippedText(value, JSON.stringify);
  return clippedText(wholeText(value));
}

/**
 * Names a value in an error message as {@linkcode quotedValue} does, but a
 * string as it is, not in quotes (cut the same way when long): for the
 * messages that always wrote `String(value)`.
 *
 * @param value The value given.
 * @returns The value as the message names it.
 *
 * @example
 * ```ts
 * import { describeValue } from "./shown_value.ts";
 * console.assert(describeValue("1d") === "1d");
 * console.assert(describeValue([1, 2]) === "[1,2]");
 * ```
 */
export function describeValue(value: unknown): string {
  return typeof value === "string" ? clippedText(value) : quotedValue(value);
}

/**
 * `text` (a runtime's reason, which repeats what it was given) with each
 * long repeat of `value` cut as {@linkcode clippedText} cuts it; also a
 * long start of it, as a runtime that shortens it writes it (Bun names
 * only the first 4 KB of a path that is too long).
 *
 * @param text The text that may repeat the value.
 * @param value The value as given.
 * @returns `text`, the same when `value` is short.
 *
 * @example
 * ```ts
 * import { clippedWithin } from "./shown_value.ts";
 * const path = "a".repeat(500);
 * console.assert(clippedWithin(`open '${path}'`, path).endsWith("… (500 characters)'"));
 * ```
 */
export function clippedWithin(text: string, value: string): string {
  if (value.length <= SHOWN_WHOLE) return text;
  const start = value.slice(0, SHOWN_WHOLE);
  let out = "";
  let at = 0;
  for (let found = text.indexOf(start, at); found >= 0; found = text.indexOf(start, at)) {
    let end = found + start.length;
    while (end < text.length && end - found < value.length && text[end] === value[end - found]) {
      end++;
    }
    out += text.slice(at, found) + clippedText(text.slice(found, end));
    at = end;
  }
  return out + text.slice(at);
}
