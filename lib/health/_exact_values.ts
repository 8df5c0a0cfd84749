/**
 * Reading rows exactly as SQLite holds them: a JS number rounds integers
 * beyond 2^53 (two ids then become one) and a decoded string puts U+FFFD in
 * place of bytes that are not valid UTF-8. `recover` reads those values
 * again, as digits and as bytes, and writes them back as they were.
 *
 * @module
 */
import type { Rowid } from "../sqlite/exact_values.ts";
import type { SqlValue } from "../sqlite/driver/types.ts";

export {
  exactIntegersTerm,
  invalidTexts,
  putExactIntegers,
  type Rowid,
} from "../sqlite/exact_values.ts";

/** `value` as a rowid: a number when it is one exactly. */
export function rowidOf(value: bigint): Rowid {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/** Orders rowids (numbers and bigints compare exactly with `<`). */
export function byRowid(a: Rowid, b: Rowid): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The middle of `lo`–`top`, rounded down (`bigint` division rounds toward zero). */
export function middle(lo: bigint, top: bigint): bigint {
  const sum = lo + top;
  return sum >= BigInt(0) ? sum / BigInt(2) : (sum - BigInt(1)) / BigInt(2);
}

/**
 * A value as bound: Deno's and Node's drivers bind every JS number as
 * REAL, which a column without integer affinity (an untyped one) would
 * keep; integers go as integers, as they were read.
 */
export function bindable(value: SqlValue): SqlValue {
  return typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : value;
}
