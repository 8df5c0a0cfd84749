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
