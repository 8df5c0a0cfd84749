/**
 * Argument checks shared by the listing, statistics and search functions:
 * paging counts (`limit`, `offset`) and optional times in seconds
 * (`startedAfter`, `since`…).
 *
 * @module
 */
import { quotedValue } from "./shown_value.ts";

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
    throw new RangeError(
      `Cannot ${action}: ${name} must be a non-negative integer: current value is ${
        quotedValue(value)
      }`,
    );
  }
  return value;
}

/**
 * An optional time in seconds since the epoch: `null` when not given,
 * otherwise it must be a finite number.
 *
 * @param action What was being done, e.g. `"list sessions"`.
 * @param name The argument name, e.g. `"startedAfter"`.
 * @param value The value given.
 * @returns The value, or `null` for `undefined` and `null`.
 * @throws {RangeError} When it is given but not a finite number.
 *
 * @example
 * ```ts
 * import { checkSeconds } from "./paging.ts";
 * console.assert(checkSeconds("report usage", "since", undefined) === null);
 * // checkSeconds("report usage", "since", NaN) throws RangeError:
 * // "Cannot report usage: since must be a finite number of seconds: current value is NaN"
 * ```
 */
export function checkSeconds(action: string, name: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new RangeError(
      `Cannot ${action}: ${name} must be a finite number of seconds: current value is ${
        quotedValue(value)
      }`,
    );
  }
  return value;
}
