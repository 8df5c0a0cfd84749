/**
 * Deno 2.9's `node:sqlite` cuts a returned string at its first U+0000. Binding
 * is fine, so the adapter wraps each query: a text value that contains U+0000
 * comes back as its UTF-8 bytes, flagged in one extra column, and is decoded
 * here. Values without U+0000 take the ordinary path.
 */

import type { SqlRow } from "./types.ts";

/** Name of the extra column that flags which values came back as bytes. */
const MASK = "__hermes_nul_mask";
/** Columns one mask integer can flag (bit 53 and up would lose precision). */
const MAX_COLUMNS = 52;

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The NUL-safe form of `sql`, whose result columns are `columns`, or
 * `undefined` when the query cannot be wrapped (duplicate column names, too
 * many columns).
 */
export function nulSafeQuery(
  sql: string,
  columns: readonly string[],
): string | undefined {
  if (columns.length > MAX_COLUMNS) return undefined;
  if (new Set(columns).size !== columns.length) return undefined;
  if (columns.includes(MASK)) return undefined;
  const hasNul = (c: string) => `(typeof(${c}) = 'text' AND instr(${c}, char(0)) > 0)`;
  const select = columns.map((name) => {
    const c = quoteIdentifier(name);
    return `CASE WHEN ${hasNul(c)} THEN CAST(${c} AS BLOB) ELSE ${c} END AS ${c}`;
  });
  const mask = columns
    .map((name, i) => `(${hasNul(quoteIdentifier(name))} * ${2 ** i})`)
    .join(" + ");
  const inner = sql.trim().replace(/;\s*$/, "");
  return `SELECT ${select.join(", ")}, ${mask} AS ${MASK} FROM (${inner})`;
}

const decoder = new TextDecoder();

/** Decodes the flagged values of a row read through {@linkcode nulSafeQuery}. */
export function restoreNulText(row: SqlRow, columns: readonly string[]): SqlRow {
  const mask = Number(row[MASK] ?? 0);
  delete row[MASK];
  if (mask === 0) return row;
  columns.forEach((name, i) => {
    const value = row[name];
    if (Math.floor(mask / 2 ** i) % 2 === 1 && value instanceof Uint8Array) {
      row[name] = decoder.decode(value);
    }
  });
  return row;
}
