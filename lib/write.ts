/**
 * The write path: every write runs in `BEGIN IMMEDIATE … COMMIT`, is rolled
 * back on any error, and is retried with random jitter while another
 * connection holds the lock.
 *
 * @module
 */
import type { SqliteDriver } from "./driver/types.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import { WriteBusyError } from "./errors.ts";

/** How busy writes are retried. Tests inject `sleep` and `random`. */
export interface RetryOptions {
  /**
   * Attempts before giving up.
   * @default {15}
   */
  readonly maxAttempts?: number;
  /**
   * Shortest pause between attempts, in milliseconds.
   * @default {20}
   */
  readonly minDelayMs?: number;
  /**
   * Longest pause between attempts, in milliseconds.
   * @default {150}
   */
  readonly maxDelayMs?: number;
  /**
   * How long SQLite itself waits for the lock within one attempt, in
   * milliseconds (the connection's `busy_timeout`). One attempt can thus
   * take this long plus the pause after it.
   * @default {1000}
   */
  readonly busyTimeoutMs?: number;
  /** Blocks for `ms` milliseconds. Defaults to a real synchronous sleep. */
  readonly sleep?: (ms: number) => void;
  /** A number in [0, 1). Defaults to `Math.random`. */
  readonly random?: () => number;
}

/** Writes between two passive WAL checkpoints. */
export const CHECKPOINT_EVERY = 50;

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms` milliseconds (every API here is synchronous). */
export function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

/** Runs write transactions on one connection. */
export class Writer {
  readonly #db: SqliteDriver;
  readonly #maxAttempts: number;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #sleep: (ms: number) => void;
  readonly #random: () => number;
  #depth = 0;
  #writes = 0;

  /**
   * @param db The connection.
   * @param options Retry settings.
   */
  constructor(db: SqliteDriver, options: RetryOptions = {}) {
    this.#db = db;
    this.#maxAttempts = options.maxAttempts ?? 15;
    this.#minDelayMs = options.minDelayMs ?? 20;
    this.#maxDelayMs = options.maxDelayMs ?? 150;
    this.#sleep = options.sleep ?? sleepSync;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Runs `fn` in one immediate transaction and returns its result. A write
   * started inside another joins it.
   *
   * @throws {WriteBusyError} When the lock stayed taken through every attempt.
   * @throws {SqliteError} Any other failure, at once, with nothing written.
   */
  run<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    let lastBusy: SqliteError | undefined;
    for (let attempt = 1; attempt <= this.#maxAttempts; attempt++) {
      try {
        const result = this.#once(fn);
        this.#afterWrite();
        return result;
      } catch (error) {
        if (!(error instanceof SqliteError) || !error.isBusy) throw error;
        lastBusy = error;
        if (attempt < this.#maxAttempts) {
          const span = this.#maxDelayMs - this.#minDelayMs;
          this.#sleep(this.#minDelayMs + this.#random() * span);
        }
      }
    }
    throw new WriteBusyError(this.#maxAttempts, lastBusy!);
  }

  /** Best-effort passive checkpoint; a failure here is never fatal. */
  checkpoint(): void {
    try {
      this.#db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // Documented best effort: a checkpoint blocked by readers is retried later.
    }
  }

  #once<T>(fn: () => T): T {
    this.#db.exec("BEGIN IMMEDIATE");
    this.#depth++;
    try {
      const result = fn();
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      try {
        this.#db.exec("ROLLBACK");
      } catch {
        // SQLite already rolled back (it does on some errors); the original error matters.
      }
      throw error;
    } finally {
      this.#depth--;
    }
  }

  #afterWrite(): void {
    this.#writes++;
    if (this.#writes % CHECKPOINT_EVERY === 0) this.checkpoint();
  }
}
