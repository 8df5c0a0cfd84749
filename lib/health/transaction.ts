/**
 * Short write transactions for the repairs, timed: each runs in
 * `BEGIN IMMEDIATE … COMMIT` through the library's write path (retried while
 * another connection holds the lock), and the longest hold of the write
 * lock is kept, so a repair can prove it never held it long.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { type RetryOptions, Writer } from "../sqlite/write.ts";

/** Runs timed write transactions on one connection. */
export class TimedWriter {
  readonly #writer: Writer;
  #longestMs = 0;
  #transactions = 0;

  /**
   * @param db The connection.
   * @param retry How busy attempts are retried.
   */
  constructor(db: SqliteConnection, retry?: RetryOptions) {
    this.#writer = new Writer(db, retry);
  }

  /**
   * Runs `fn` in one write transaction and times how long the lock was held
   * (from the moment BEGIN IMMEDIATE got it to the end of COMMIT).
   *
   * @param fn The work.
   * @returns What `fn` returned and the hold in milliseconds.
   */
  run<T>(fn: () => T): { value: T; heldMs: number } {
    let started = 0;
    const value = this.#writer.run(() => {
      started = performance.now();
      return fn();
    });
    const heldMs = performance.now() - started;
    this.#longestMs = Math.max(this.#longestMs, heldMs);
    this.#transactions++;
    return { value, heldMs };
  }

  /** The longest hold so far, in milliseconds. */
  get longestMs(): number {
    return this.#longestMs;
  }

  /** Transactions run so far. */
  get transactions(): number {
    return this.#transactions;
  }
}
