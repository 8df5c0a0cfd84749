/**
 * Reading values exactly as SQLite holds them: a JS number rounds integers
 * beyond 2^53 (two ids then become one) and a decoded string puts U+FFFD in
 * place of bytes that are not valid UTF-8. `recover` and `export` read such
 * values again, as digits and as bytes, so that they are written back as
 * they were.
 *
 * @module
 */
import type { SqliteConnection, SqlValue } from "./driver/types.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";

/** A rowid: a number, or a `bigint` beyond 2^53 (where a number would round it). */
export type Rowid = number | bigint;

/** Integers a JS number carries exactly: within ±(2^53 - 1). */
const SAFE = "9007199254740991";

/**
 * One text term listing the values of `columns` a JS number would round
 * (integers beyond 2^53), as `index:digits,` items.
 *
 * @param columns The columns, in the order of the values the term's items index.
 * @returns The SQL term (`''` when there is no column).
 */
export function exactIntegersTerm(columns: readonly string[]): string {
  return columns.map((column, i) => {
    const c = quoteIdentifier(column);
    return `CASE WHEN typeof(${c}) = 'integer' AND (${c} > ${SAFE} OR ${c} < -${SAFE}) ` +
      `THEN '${i}:' || ${c} || ',' ELSE '' END`;
  }).join(" || ") || "''";
}

/**
 * The exact integers {@linkcode exactIntegersTerm} listed, by column index.
 *
 * @param listed The term's value.
 * @returns Each listed index with its integer.
 */
function listedIntegers(listed: SqlValue): Map<number, bigint> {
  const found = new Map<number, bigint>();
  for (const item of String(listed ?? "").split(",")) {
    if (item === "") continue;
    const [index, digits] = item.split(":");
    found.set(Number(index), BigInt(digits));
  }
  return found;
}

/**
 * Puts back into `values` the exact integers {@linkcode exactIntegersTerm} listed.
 *
 * @param values The row's values, by column index; changed in place.
 * @param listed The term's value.
 */
export function putExactIntegers(values: SqlValue[], listed: SqlValue): void {
  for (const [index, value] of listedIntegers(listed)) values[index] = value;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `bytes` as UTF-8 text, or `undefined` when they are not valid UTF-8 (a
 * string read from them would hold U+FFFD where they were).
 *
 * @param bytes The bytes.
 * @returns The text, or `undefined` when a strict UTF-8 decoder refuses them.
 */
export function strictUtf8Text(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Whether `bytes` are not valid UTF-8 (a string read from them holds U+FFFD
 * where they were).
 *
 * @param bytes The bytes.
 * @returns `true` when a strict UTF-8 decoder refuses them.
 */
export function isInvalidUtf8(bytes: Uint8Array): boolean {
  return strictUtf8Text(bytes) === undefined;
}

/**
 * The bytes of each text value of `values` that is not valid UTF-8 (read
 * as a string, it holds U+FFFD where its bytes were), read again as bytes.
 *
 * @param db A connection to the source.
 * @param table The table the row is of.
 * @param columns The table's columns, in the order of `values`.
 * @param rowid The row's rowid.
 * @param values The row's values, as read.
 * @returns The bytes by column index, or `undefined` when every text is valid.
 */
export function invalidTexts(
  db: SqliteConnection,
  table: string,
  columns: readonly string[],
  rowid: Rowid,
  values: readonly SqlValue[],
): Map<number, Uint8Array> | undefined {
  let found: Map<number, Uint8Array> | undefined;
  values.forEach((value, i) => {
    if (typeof value !== "string" || !value.includes("\uFFFD")) return;
    const bytes = db.prepare(
      `SELECT CAST(${quoteIdentifier(columns[i])} AS BLOB) AS b FROM ${table} WHERE rowid = ?`,
    ).get(BigInt(rowid))?.b;
    if (bytes instanceof Uint8Array && isInvalidUtf8(bytes)) {
      (found ??= new Map()).set(i, bytes);
    }
  });
  return found;
}
