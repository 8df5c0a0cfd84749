/**
 * A stored value as the text commands show it.
 *
 * @module
 */
import { blobAsText } from "../core/blob_text.ts";

/**
 * `value` as text: a string as it is; a BLOB (`Uint8Array`: Python's sqlite3
 * stores `bytes` so, also in a column meant for text) as its bytes read as
 * UTF-8, each byte that is not valid UTF-8 as U+FFFD (`core/blob_text.ts`,
 * as the JSON outputs read it too); anything else as `String(value)`. The
 * same on every runtime, where `String.prototype` methods called on the
 * bytes failed with each engine's own TypeError.
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
  return typeof value === "string" ? value : String(blobAsText(value));
}
