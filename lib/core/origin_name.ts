/**
 * The names of `sync`'s origins (the prefix of a synced session's id on
 * the server): checked as given, never rewritten, so that two names never
 * become one origin.
 *
 * @module
 */

const ORIGIN_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** The form of an origin name, as errors state it. */
export const ORIGIN_NAME_FORM = '1 to 64 letters, digits, ".", "_" or "-"';

/**
 * Whether `name` is an origin name as given (`sync --origin NAME`).
 *
 * @param name The name.
 * @returns `true` for 1 to 64 ASCII letters, digits, `.`, `_` or `-`.
 *
 * @example Usage
 * ```ts ignore
 * isOriginName("web-1"); // true
 * isOriginName("web 1"); // false: refused, not made "web-1"
 * ```
 */
export function isOriginName(name: string): boolean {
  return ORIGIN_NAME.test(name);
}
