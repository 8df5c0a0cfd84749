/**
 * Writes side by side, a bounded number at once: what `sync` does with its
 * batches and `copy` with its sessions on a PostgreSQL target, where each
 * write is a transaction of its own on a connection of its own.
 *
 * @module
 */
import { setImmediate } from "node:timers";

/**
 * Up to `lanes` writes in flight: `submit` waits for a free lane, then
 * starts the write without waiting for it, so the caller prepares the next
 * one meanwhile. Writes may end in any order. The first failure is kept and
 * thrown by the next `submit`, `yieldToIo` or `drain`, and no write starts
 * after it is known; the writes already in flight run to their end.
 *
 * @example
 * ```ts
 * import { WriteLanes } from "./write_lanes.ts";
 * const done: number[] = [];
 * const lanes = new WriteLanes(2);
 * for (const n of [1, 2, 3]) await lanes.submit(async () => void done.push(n));
 * await lanes.drain();
 * console.assert(done.length === 3);
 * ```
 */
export class WriteLanes {
  readonly #lanes: number;
  readonly #inFlight = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  /**
   * @param lanes How many writes may be in flight at once (1: one after another).
   */
  constructor(lanes: number) {
    this.#lanes = lanes;
  }

  /**
   * Waits for a free lane, then starts `write`.
   *
   * @param write The write.
   * @throws The first failure of an earlier write.
   */
  async submit(write: () => Promise<void>): Promise<void> {
    while (this.#inFlight.size >= this.#lanes) await Promise.race(this.#inFlight);
    this.#throwFailure();
    const running: Promise<void> = write()
      .catch((error) => void (this.#failure ??= { error }))
      .finally(() => this.#inFlight.delete(running));
    this.#inFlight.add(running);
  }

  /**
   * Lets the writes in flight make progress (their round trips need the
   * event loop) when the caller has long synchronous work to do.
   *
   * @throws The first failure of a write.
   */
  async yieldToIo(): Promise<void> {
    if (this.#inFlight.size === 0) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#throwFailure();
  }

  /**
   * Waits for every write in flight.
   *
   * @throws The first failure of a write.
   */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.race(this.#inFlight);
    this.#throwFailure();
  }

  #throwFailure(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}
