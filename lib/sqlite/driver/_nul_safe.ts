/**
 * Deno 2.9's `node:sqlite` cuts a returned string at its first U+0000.
 * Binding is fine, so the adapter wraps each query: a text value that
 * contains U+0000 comes back as its UTF-8 bytes and is decoded here. One
 * extra column flags the values that really are BLOBs (a cheap `typeof`
 * test), so the two never mix; the costly U+0000 search runs once per text
 * value. Values without U+0000 take the ordinary path.
 *
 * Rows are read as arrays (`setReturnArrays`) and built into plain objects of
 * one shape per statement, which costs less than copying the runtime's
 * null-prototype row objects.
 */

import type { SqlRow, SqlValue } from "./types.ts";
import { quoteIdentifier } from "../../core/sql_identifier.ts";

/** Name of the extra column that flags which values are real BLOBs (the first, of 52 columns). */
export const NUL_MASK = "__hermes_blob_mask";
/** Columns one mask integer can flag (bit 53 and up would lose precision). */
const MASK_BITS = 52;

/**
 * The mask columns of a query of `count` columns, one per 52: `NUL_MASK`,
 * then `NUL_MASK_1`, `NUL_MASK_2`…
 *
 * @param count The query's own columns.
 * @returns The names of the mask columns, in order.
 */
export function maskColumns(count: number): string[] {
  return Array.from(
    { length: Math.max(1, Math.ceil(count / MASK_BITS)) },
    (_, k) => k === 0 ? NUL_MASK : `${NUL_MASK}_${k}`,
  );
}

/**
 * The NUL-safe form of `sql`, whose result columns are `columns`, or
 * `undefined` when the query cannot be wrapped (duplicate column names, a
 * column named as a mask). Its rows hold the columns, in order, then the
 * {@linkcode maskColumns}.
 */
export function nulSafeQuery(
  sql: string,
  columns: readonly string[],
): string | undefined {
  if (new Set(columns).size !== columns.length) return undefined;
  if (columns.some((name) => name.startsWith(NUL_MASK))) return undefined;
  const select = columns.map((name) => {
    const c = quoteIdentifier(name);
    return `CASE WHEN typeof(${c}) = 'text' AND instr(${c}, char(0)) > 0 ` +
      `THEN CAST(${c} AS BLOB) ELSE ${c} END AS ${c}`;
  });
  const masks = maskColumns(columns.length).map((mask, k) => {
    const flags = columns.slice(k * MASK_BITS, (k + 1) * MASK_BITS)
      .map((name, i) => `(typeof(${quoteIdentifier(name)}) = 'blob') * ${2 ** i}`);
    return `${flags.length === 0 ? "0" : flags.join(" + ")} AS ${mask}`;
  });
  const inner = sql.trim().replace(/;\s*$/, "");
  // The OFFSET keeps SQLite from flattening the query into this one, which would compute each
  // column's expression (a snippet, a subquery) once per reference here: four times a row.
  return `SELECT ${select.join(", ")}, ${masks.join(", ")} ` +
    `FROM (SELECT * FROM (${inner}) LIMIT -1 OFFSET 0)`;
}

/** UTF-8, a leading U+FEFF kept: it is part of the text, as the other runtimes return it. */
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * A row of {@linkcode nulSafeQuery}, read as an array, as a plain object:
 * bytes that stood for text are decoded; real BLOBs stay bytes.
 */
export function nulSafeRow(values: readonly SqlValue[], columns: readonly string[]): SqlRow {
  const row: SqlRow = {};
  const n = columns.length;
  for (let i = 0; i < n; i++) {
    const value = values[i];
    const mask = Number(values[n + Math.floor(i / MASK_BITS)]);
    const text = value instanceof Uint8Array && Math.floor(mask / 2 ** (i % MASK_BITS)) % 2 === 0;
    row[columns[i]] = text ? decoder.decode(value) : value;
  }
  return row;
}

/** A row read as an array, as a plain object. */
export function plainRow(values: readonly SqlValue[], columns: readonly string[]): SqlRow {
  const row: SqlRow = {};
  for (let i = 0; i < columns.length; i++) row[columns[i]] = values[i];
  return row;
}
