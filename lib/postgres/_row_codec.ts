/**
 * A value as the pool binds it and a row as it gives it back: text made
 * safe for PostgreSQL (which refuses U+0000) and read back, and a newer
 * Hermes's columns spread.
 *
 * @module
 */
import { decodeText, encodeText } from "./_text_codec.ts";
import { spreadExtraColumns } from "./_extra.ts";
import type { PgRow, PgValue } from "./_client_types.ts";

export function encodeParam(value: PgValue | undefined): PgValue {
  if (value === undefined) return null;
  if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    // Its exact digits: the client sends `String(value)`, the shortest text that reads back as
    // the same double (2^62 as 4611686018427388000), which numeric keeps as a different
    // integer, where SQLite stores the double's own value (4611686018427387904). Both texts are
    // sent untyped, so the statement is typed as before.
    return BigInt(value).toString();
  }
  return typeof value === "string" ? encodeText(value) : value;
}

export function decodeRow(row: PgRow): PgRow {
  const out: PgRow = {};
  for (const key of Object.keys(row)) {
    const value = row[key];
    out[key] = typeof value === "string" ? decodeText(value) : value;
  }
  spreadExtraColumns(out);
  return out;
}
