/**
 * Digits grouped by thousands with commas (`2,000,000`), the same on every
 * runtime and locale: for counts in messages and tables.
 *
 * @module
 */

/**
 * `digits` with a comma before each group of three from the right.
 *
 * @param digits A whole number's digits, without a sign.
 * @returns The digits grouped.
 *
 * @example
 * ```ts
 * import { groupedDigits } from "./grouped_digits.ts";
 * console.assert(groupedDigits("1234567") === "1,234,567");
 * console.assert(groupedDigits("999") === "999");
 * ```
 */
export function groupedDigits(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * A whole number with its digits grouped (`-1,234`): a bigint keeps every digit.
 *
 * @param n The number (a fraction is cut off).
 * @returns Its digits grouped, with its sign.
 *
 * @example
 * ```ts
 * import { groupedInteger } from "./grouped_digits.ts";
 * console.assert(groupedInteger(2000000) === "2,000,000");
 * console.assert(groupedInteger(-1234n) === "-1,234");
 * ```
 */
export function groupedInteger(n: number | bigint): string {
  const whole = typeof n === "bigint" ? n : Math.trunc(n);
  const negative = whole < 0;
  return (negative ? "-" : "") + groupedDigits(String(negative ? -whole : whole));
}

/**
 * A count and what it counts, singular for one: `1 session has`,
 * `1,204 sessions have`.
 *
 * @param n The count.
 * @param one The words after a count of one.
 * @param many The words after any other count.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { groupedCount } from "./grouped_digits.ts";
 * console.assert(groupedCount(1, "row has", "rows have") === "1 row has");
 * console.assert(groupedCount(1204, "row has", "rows have") === "1,204 rows have");
 * ```
 */
export function groupedCount(n: number, one: string, many: string): string {
  return `${groupedInteger(n)} ${n === 1 ? one : many}`;
}
