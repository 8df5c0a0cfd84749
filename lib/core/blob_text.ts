/**
 * A BLOB where the file should hold text, read as text. Python's `sqlite3`
 * stores `bytes` as a BLOB, in a column meant for text too (a title, a
 * model, a message's content); the drivers return it as a `Uint8Array`,
 * which `JSON.stringify` writes as `{"0": 104, "1": 105}` and `String()` as
 * `104,105`. Every reader that shapes rows for a person or for JSON (a
 * listing, a search hit, a report, a decoded message) reads such a value
 * through this file: its bytes as UTF-8, each byte that is not valid UTF-8
 * as U+FFFD, a leading byte order mark kept. An export keeps the exact
 * bytes instead (`stored_bytes.ts`), which a transcript of it reads as text
 * through {@linkcode recordWithBlobText}.
 *
 * @module
 */
import { storedBytesOf } from "./stored_bytes.ts";

/** UTF-8, bad bytes as U+FFFD, a leading U+FEFF kept (it is part of the stored value). */
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * `value` as text when it is a BLOB (its bytes read as UTF-8, each byte that
 * is not valid UTF-8 as U+FFFD); any other value as it is.
 *
 * @param value A value read from the store.
 * @returns The BLOB's text, or `value`.
 *
 * @example
 * ```ts
 * import { blobAsText } from "./blob_text.ts";
 * console.assert(blobAsText(new Uint8Array([0x61, 0x00, 0xff])) === "a\u0000\ufffd");
 * console.assert(blobAsText(null) === null && blobAsText(3) === 3);
 * ```
 */
export function blobAsText<T>(value: T): Exclude<T, Uint8Array> | string {
  return value instanceof Uint8Array ? decoder.decode(value) : value as Exclude<T, Uint8Array>;
}

/**
 * The text of a value read from a column meant for text: a string as it
 * is, a BLOB as {@linkcode blobAsText} reads it, `null` and `undefined` as
 * `null`, anything else (a number) as `String(value)`.
 *
 * @param value A value read from the store.
 * @returns Its text, or `null`.
 *
 * @example
 * ```ts
 * import { textOrNull } from "./blob_text.ts";
 * console.assert(textOrNull(new Uint8Array([0x63, 0x6c, 0x69])) === "cli");
 * console.assert(textOrNull(undefined) === null && textOrNull(7) === "7");
 * ```
 */
export function textOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  return value instanceof Uint8Array ? decoder.decode(value) : String(value);
}

/**
 * Reads, in place, every BLOB value of `row` as {@linkcode blobAsText}
 * does; the other values stay. One `instanceof` test per column: a row
 * without a BLOB costs nothing else.
 *
 * @param row A row read from the store (a session's).
 * @returns The same object.
 *
 * @example
 * ```ts
 * import { withBlobsAsText } from "./blob_text.ts";
 * const row: Record<string, unknown> = { id: "a", model: new Uint8Array([0x6d]), n: 2 };
 * withBlobsAsText(row);
 * console.assert(row.model === "m" && row.n === 2);
 * ```
 */
export function withBlobsAsText<T extends object>(row: T): T {
  return rowsWithBlobsAsText([row])[0];
}

/**
 * {@linkcode withBlobsAsText} for the rows of one statement, which share
 * their columns: the column names are read once, from the first row (a
 * loop over a list of names costs a quarter of a `for…in` over each row).
 *
 * @param rows Rows of one statement (a listing page).
 * @returns The same array, each row read in place.
 *
 * @example
 * ```ts
 * import { rowsWithBlobsAsText } from "./blob_text.ts";
 * const rows: Record<string, unknown>[] = [{ t: new Uint8Array([0x61]) }, { t: "b" }];
 * rowsWithBlobsAsText(rows);
 * console.assert(rows[0].t === "a" && rows[1].t === "b");
 * ```
 */
export function rowsWithBlobsAsText<T extends object>(rows: T[]): T[] {
  if (rows.length === 0) return rows;
  const columns = Object.keys(rows[0]);
  for (const row of rows) {
    const values = row as Record<string, unknown>;
    for (const column of columns) {
      const value = values[column];
      if (value instanceof Uint8Array) values[column] = decoder.decode(value);
    }
  }
  return rows;
}

/**
 * An export record (a session's or a message's) as a transcript shows it:
 * each column the record carries as a BLOB under `hermes_state_bytes` (the
 * column itself `null`) holding the BLOB's text instead, as
 * {@linkcode blobAsText} reads it. The record itself does not change.
 *
 * @param record A record of `exportSession`, or one of its messages.
 * @returns `record` when it carries no BLOB, else a shallow copy.
 *
 * @example
 * ```ts
 * import { recordWithBlobText } from "./blob_text.ts";
 * const record = { title: null, hermes_state_bytes: { title: { blob: "aGk=" } } };
 * console.assert(recordWithBlobText(record).title === "hi" && record.title === null);
 * ```
 */
export function recordWithBlobText<T extends object>(record: T): T {
  let stored: ReturnType<typeof storedBytesOf>;
  try {
    stored = storedBytesOf(record as Record<string, unknown>);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return record; // not what an export writes: shown as it is
  }
  let copy: Record<string, unknown> | undefined;
  for (const [column, { kind, bytes }] of stored ?? []) {
    if (kind !== "blob") continue;
    copy ??= { ...record } as Record<string, unknown>;
    copy[column] = decoder.decode(bytes);
  }
  return (copy ?? record) as T;
}
