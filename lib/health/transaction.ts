/**
 * Short write transactions for the repairs, timed: each runs in
 * `BEGIN IMMEDIATE … COMMIT` through the library's write path (retried while
 * another connection holds the lock), and the longest hold of the write
 * lock is kept, so a repair can prove it never held it long.
 *
 * `runAsync` waits for the lock between short attempts with awaited,
 * abortable pauses: a signal (Ctrl-C) ends the wait within one attempt's
 * slice instead of after the whole wait.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { type RetryOptions, sleepSync, Writer } from "../sqlite/write.ts";
import { WriteBusyError } from "../sqlite/write_busy_error.ts";
import type { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import { abortableDelay } from "../core/delay.ts";

/** {@linkcode RetryOptions}, or a time limit on the waiting instead of a count of attempts. */
export interface WaitOptions extends RetryOptions {
  /**
   * How long one transaction waits for the lock in all, in milliseconds
   * (`HERMES_STATE_LOCK_TIMEOUT`); when given, attempts are made until it
   * runs out, and the error says how long it waited.
   */
  readonly timeoutMs?: number;
  /**
   * Ends a wait of `runAsync` for the lock (and is checked before each of
   * its attempts): it rejects with the signal's reason, nothing written.
   */
  readonly signal?: AbortSignal;
}

/** The pause between two timed attempts, in milliseconds. */
const TIMED_PAUSE_MS = 50;
/** SQLite's own wait within one attempt of `runAsync`: the longest a signal goes unseen. */
const ASYNC_SLICE_MS = 250;
/** How long `runAsync` waits in all without `timeoutMs` (about the attempts of `run`). */
const DEFAULT_WAIT_MS = 16_000;

/** Runs timed write transactions on one connection. */
export class TimedWriter {
  readonly #writer: Writer;
  readonly #db: SqliteConnection;
  readonly #timeoutMs: number | undefined;
  readonly #signal: AbortSignal | undefined;
  /** One attempt each: `runAsync` does the waiting. */
  readonly #single: Writer;
  #longestMs = 0;
  #transactions = 0;

  /**
   * @param db The connection.
   * @param retry How busy attempts are retried, or for how long.
   */
  constructor(db: SqliteConnection, retry: WaitOptions = {}) {
    this.#db = db;
    this.#timeoutMs = retry.timeoutMs;
    this.#signal = retry.signal;
    this.#single = new Writer(db, { maxAttempts: 1 });
    this.#writer = new Writer(db, retry.timeoutMs === undefined ? retry : { maxAttempts: 1 });
  }

  /**
   * Runs `fn` in one write transaction and times how long the lock was held
   * (from the moment BEGIN IMMEDIATE got it to the end of COMMIT).
   *
   * @param fn The work.
   * @returns What `fn` returned and the hold in milliseconds.
   * @throws {WriteBusyError} When the lock stayed taken through every attempt (or the time limit).
   */
  run<T>(fn: () => T): { value: T; heldMs: number } {
    return this.#waiting(() => this.#timed(this.#writer, fn));
  }

  /** One transaction of `writer`, timed from the moment BEGIN IMMEDIATE got the lock to COMMIT. */
  #timed<T>(writer: Writer, fn: () => T): { value: T; heldMs: number } {
    let started = 0;
    const value = writer.run(() => {
      started = performance.now();
      return fn();
    });
    const heldMs = performance.now() - started;
    this.#longestMs = Math.max(this.#longestMs, heldMs);
    this.#transactions++;
    return { value, heldMs };
  }

  /**
   * Runs `fn` in one write transaction as {@linkcode TimedWriter.run} does,
   * but waits for the lock asynchronously: attempts whose SQLite wait is a
   * short slice, and awaited pauses between them that the signal ends.
   *
   * @param fn The work.
   * @returns What `fn` returned and the hold in milliseconds.
   * @throws {WriteBusyError} When the lock stayed taken for `timeoutMs` (about 16 s by default).
   * @throws The signal's reason when it aborts before the lock is had (nothing was written).
   */
  async runAsync<T>(fn: () => T): Promise<{ value: T; heldMs: number }> {
    const began = performance.now();
    const deadline = began + (this.#timeoutMs ?? DEFAULT_WAIT_MS);
    for (let attempts = 1;; attempts++) {
      this.#signal?.throwIfAborted();
      const sliceMs = Math.round(Math.min(ASYNC_SLICE_MS, deadline - performance.now()));
      this.#db.exec(`PRAGMA busy_timeout = ${Math.max(0, sliceMs)}`);
      try {
        return this.#timed(this.#single, fn);
      } catch (error) {
        if (!(error instanceof WriteBusyError)) throw error;
        if (performance.now() + TIMED_PAUSE_MS >= deadline) {
          throw new WriteBusyError(attempts, error.cause as SqliteError, {
            waitedMs: performance.now() - began,
          });
        }
      } finally {
        this.#db.exec("PRAGMA busy_timeout = 1000");
      }
      await abortableDelay(TIMED_PAUSE_MS, this.#signal);
    }
  }

  /** Runs `attempt` until it is not busy or the time limit runs out. */
  #waiting<T>(attempt: () => T): T {
    if (this.#timeoutMs === undefined) return attempt();
    const began = performance.now();
    const deadline = began + this.#timeoutMs;
    // SQLite's own wait within one attempt never runs past the limit.
    const busyMs = Math.max(0, Math.min(1000, Math.round(this.#timeoutMs)));
    this.#db.exec(`PRAGMA busy_timeout = ${busyMs}`);
    try {
      for (let attempts = 1;; attempts++) {
        try {
          return attempt();
        } catch (error) {
          if (!(error instanceof WriteBusyError)) throw error;
          if (performance.now() + TIMED_PAUSE_MS >= deadline) {
            throw new WriteBusyError(attempts, error.cause as SqliteError, {
              waitedMs: performance.now() - began,
            });
          }
          sleepSync(TIMED_PAUSE_MS);
        }
      }
    } finally {
      this.#db.exec("PRAGMA busy_timeout = 1000");
    }
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
