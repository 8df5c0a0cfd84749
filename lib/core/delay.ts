/**
 * Waiting without blocking: the one promise-returning timer of the library,
 * for retry pauses, paced writes and polling.
 *
 * @module
 */

/**
 * A promise that resolves after `ms` milliseconds (0 or less: on the next
 * turn of the event loop). It never rejects and keeps no handle once resolved.
 *
 * @example
 * ```ts
 * import { delay } from "./delay.ts";
 * const start = Date.now();
 * await delay(20);
 * console.assert(Date.now() - start >= 15);
 * ```
 */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
