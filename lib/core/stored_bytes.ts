/**
 * Values JSON cannot carry as they are stored: a BLOB, and text that is not
 * valid UTF-8. An export carries their exact bytes under one key of the
 * session or message record, {@linkcode STORED_BYTES_KEY}, and `import`
 * stores those bytes again, so that the row comes back as it was:
 *
 * ```json
 * {"role": "user", "content": null, "hermes_state_bytes": {"content": {"blob": "AQI="}}}
 * {"role": "user", "content": "a\ufffd", "hermes_state_bytes": {"content": {"text": "YYA="}}}
 * ```
 *
 * `blob` is a BLOB's bytes (the column itself then says `null`); `text` is
 * a TEXT value's bytes (the column says what a UTF-8 reader makes of them,
 * U+FFFD in place of each bad sequence). Both are base64 (RFC 4648, with
 * padding). Python's `hermes sessions export` stops at either value (its
 * `sqlite3` refuses to decode the text; `json.dumps` refuses bytes).
 *
 * @module
 */

/** The record key that carries the exact bytes of a record's columns. */
export const STORED_BYTES_KEY = "hermes_state_bytes";

/** How a column's bytes were stored: as a BLOB or as TEXT. */
export type StoredKind = "blob" | "text";

/** One column's exact value: its storage class and its bytes. */
export interface StoredBytes {
  /** `blob`: a BLOB; `text`: TEXT that is not valid UTF-8. */
  readonly kind: StoredKind;
  /** The stored bytes. */
  readonly bytes: Uint8Array;
}

/** Bytes per `String.fromCharCode` call: far below any runtime's argument limit. */
const CHUNK = 0x8000;

/**
 * `bytes` as base64.
 *
 * @param bytes The bytes.
 * @returns Their base64 text (RFC 4648, padded).
 */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/** Base64 text, padded: what `toBase64` writes. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The bytes of base64 text.
 *
 * @param text Base64 text (RFC 4648, padded).
 * @returns The bytes, or `undefined` when `text` is no such base64.
 */
export function fromBase64(text: string): Uint8Array | undefined {
  if (!BASE64.test(text)) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The value a record carries under {@linkcode STORED_BYTES_KEY} for the
 * given columns.
 *
 * @param columns Each column with its stored bytes.
 * @returns The JSON-ready value.
 */
export function storedBytesValue(
  columns: ReadonlyMap<string, StoredBytes>,
): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [column, { kind, bytes }] of columns) out[column] = { [kind]: toBase64(bytes) };
  return out;
}

/**
 * The exact bytes a record carries for its columns, read back from
 * {@linkcode STORED_BYTES_KEY}.
 *
 * @param record A session or message record.
 * @param field How the record is named in an error (`messages[3]`), empty for the session.
 * @returns The columns with their bytes, or `undefined` when the record carries none.
 * @throws {TypeError} Naming the field when the value is not what an export writes.
 */
export function storedBytesOf(
  record: Record<string, unknown>,
  field = "",
): Map<string, StoredBytes> | undefined {
  const value = record[STORED_BYTES_KEY];
  if (value === undefined) return undefined;
  const name = field === "" ? STORED_BYTES_KEY : `${field}.${STORED_BYTES_KEY}`;
  if (!isPlainObject(value)) throw malformed(name, value);
  const found = new Map<string, StoredBytes>();
  for (const [column, entry] of Object.entries(value)) {
    const keys = isPlainObject(entry) ? Object.keys(entry) : [];
    const kind = keys[0];
    const text = keys.length === 1 ? (entry as Record<string, unknown>)[kind] : undefined;
    const bytes = typeof text === "string" ? fromBase64(text) : undefined;
    if ((kind !== "blob" && kind !== "text") || bytes === undefined) {
      throw malformed(`${name}.${column}`, entry);
    }
    found.set(column, { kind, bytes });
  }
  return found;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function malformed(field: string, value: unknown): TypeError {
  const text = JSON.stringify(value) ?? String(value);
  return new TypeError(
    `Cannot import session: ${field} must be {"blob": BASE64} or {"text": BASE64} per column: ` +
      `current value is ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`,
  );
}
