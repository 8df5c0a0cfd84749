/**
 * The pause between two passes of a command that follows something
 * (`sync --follow`, `show --follow`), cut short when the run is stopped.
 *
 * @module
 */

import { delay } from "../core/delay.ts";

/** How often a pause looks whether the run was stopped, in milliseconds. */
const SLICE_MS = 100;

/**
 * Waits `seconds`, or less: it ends within a tenth of a second of
 * `stopped()` turning true (Ctrl-C), so that stopping is prompt.
 *
 * @param seconds How long to wait.
 * @param stopped Whether the run was stopped.
 *
 * @example
 * ```ts
 * import { pauseUnless } from "./pause.ts";
 * const start = Date.now();
 * await pauseUnless(60, () => true);
 * console.assert(Date.now() - start < 1000);
 * ```
 */
export async function pauseUnless(seconds: number, stopped: () => boolean): Promise<void> {
  for (let waited = 0; waited < seconds * 1000 && !stopped(); waited += SLICE_MS) {
    await delay(Math.min(SLICE_MS, seconds * 1000));
  }
}
