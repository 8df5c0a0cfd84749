/**
 * Argument checks for paging (`limit`, `offset`) shared by the listing,
 * statistics and search functions.
 *
 * @module
 */

/**
 * Throws unless `value` is a non-negative integer.
 *
 * @param action What was being done, e.g. `"list sessions"`.
 * @param name The argument name, e.g. `"limit"`.
 * @param value The value given.
 * @returns The value.
 * @throws {RangeError} When it is negative, fractional, not a number or not finite.
 *
 * @example
 * ```ts
 * import { checkCount } from "./paging.ts";
 * console.assert(checkCount("list sessions", "limit", 20) === 20);
 * // checkCount("list sessions", "limit", -1) throws RangeError:
 * // "Cannot list sessions: limit must be a non-negative integer: current value is -1"
 * ```
 */
export function checkCount(action: string, name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
    throw new RangeError(
      `Cannot ${action}: ${name} must be a non-negative integer: current value is ${shown}`,
    );
  }
  return value;
}
