/**
 * Reading rows exactly as SQLite holds them: a JS number rounds integers
 * beyond 2^53 (two ids then become one) and a decoded string puts U+FFFD in
 * place of bytes that are not valid UTF-8. `recover` reads those values
 * again, as digits and as bytes, and writes them back as they were.
 *
 * @module
 */
import type { SqliteConnection, SqlValue } from "../sqlite/driver/types.ts";

/** A rowid: a number, or a `bigint` beyond 2^53 (where a number would round it). */
export type Rowid = number | bigint;

/** `value` as a rowid: a number when it is one exactly. */
export function rowidOf(value: bigint): Rowid {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/** Orders rowids (numbers and bigints compare exactly with `<`). */
export function byRowid(a: Rowid, b: Rowid): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Integers a JS number carries exactly: within ±(2^53 - 1). */
const SAFE = "9007199254740991";

/**
 * One text term listing the values of `columns` a JS number would round
 * (integers beyond 2^53), as `index:digits,` items.
 */
export function exactIntegersTerm(columns: readonly string[]): string {
  return columns.map((column, i) => {
    const c = `"${column.replaceAll('"', '""')}"`;
    return `CASE WHEN typeof(${c}) = 'integer' AND (${c} > ${SAFE} OR ${c} < -${SAFE}) ` +
      `THEN '${i}:' || ${c} || ',' ELSE '' END`;
  }).join(" || ") || "''";
}

/** Puts back into `values` the exact integers {@linkcode exactIntegersTerm} listed. */
export function putExactIntegers(values: SqlValue[], listed: SqlValue): void {
  for (const item of String(listed ?? "").split(",")) {
    if (item === "") continue;
    const [index, digits] = item.split(":");
    values[Number(index)] = BigInt(digits);
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

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
    const c = `"${columns[i].replaceAll('"', '""')}"`;
    const bytes = db.prepare(`SELECT CAST(${c} AS BLOB) AS b FROM ${table} WHERE rowid = ?`)
      .get(BigInt(rowid))?.b;
    if (!(bytes instanceof Uint8Array)) return;
    try {
      strictUtf8.decode(bytes);
    } catch {
      (found ??= new Map()).set(i, bytes);
    }
  });
  return found;
}

/** The middle of `lo`–`top`, rounded down (`bigint` division rounds toward zero). */
export function middle(lo: bigint, top: bigint): bigint {
  const sum = lo + top;
  return sum >= BigInt(0) ? sum / BigInt(2) : (sum - BigInt(1)) / BigInt(2);
}
