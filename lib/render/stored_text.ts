/**
 * A stored value as the text commands show it.
 *
 * @module
 */

const decoder = new TextDecoder();

/**
 * `value` as text: a string as it is; a BLOB (`Uint8Array`: Python's sqlite3
 * stores `bytes` so, also in a column meant for text) as its bytes read as
 * UTF-8, each byte that is not valid UTF-8 as U+FFFD; anything else as
 * `String(value)`. The same on every runtime, where `String.prototype`
 * methods called on the bytes failed with each engine's own TypeError.
 *
 * @param value A value read from the file.
 * @returns Its text.
 *
 * @example
 * ```ts
 * import { storedText } from "./stored_text.ts";
 * console.assert(storedText(new Uint8Array([0x61, 0x00, 0x62])) === "a\u0000b");
 * console.assert(storedText("x") === "x");
 * ```
 */
export function storedText(value: string | Uint8Array): string {
  if (typeof value === "string") return value;
  return value instanceof Uint8Array ? decoder.decode(value) : String(value);
}
