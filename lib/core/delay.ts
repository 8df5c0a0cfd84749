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

/**
 * {@linkcode delay}, ended early by `signal`: a wait between lock attempts
 * that Ctrl-C ends at once rather than at the next attempt.
 *
 * @param ms The pause.
 * @param signal Ends the pause early; none: as {@linkcode delay}.
 * @returns A promise that resolves after the pause.
 * @throws The signal's reason (the promise rejects) when it aborts before or during the pause.
 *
 * @example
 * ```ts
 * import { abortableDelay } from "./delay.ts";
 * const stop = new AbortController();
 * setTimeout(() => stop.abort(new Error("stopped")), 10);
 * const start = Date.now();
 * await abortableDelay(60_000, stop.signal).catch((error) => console.assert(error.message === "stopped"));
 * console.assert(Date.now() - start < 1000);
 * ```
 */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal === undefined) return delay(ms);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, Math.max(0, ms));
    signal.addEventListener("abort", stop, { once: true });
  });
}
