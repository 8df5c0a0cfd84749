/**
 * The write path: every write runs in `BEGIN IMMEDIATE … COMMIT`, is rolled
 * back on any error, and is retried with random jitter while another
 * connection holds the lock.
 *
 * @module
 */
import type { SqliteConnection } from "./driver/types.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import { WriteBusyError } from "./write_busy_error.ts";

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
  readonly #db: SqliteConnection;
  readonly #maxAttempts: number;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #sleep: (ms: number) => void;
  readonly #random: () => number;
  readonly #busyTimeoutMs: number;
  #depth = 0;
  #writes = 0;
  /** A failed ROLLBACK left the last transaction open. */
  #leftOpen = false;

  /**
   * @param db The connection.
   * @param options Retry settings.
   */
  constructor(db: SqliteConnection, options: RetryOptions = {}) {
    this.#db = db;
    this.#maxAttempts = options.maxAttempts ?? 15;
    this.#minDelayMs = options.minDelayMs ?? 20;
    this.#maxDelayMs = options.maxDelayMs ?? 150;
    this.#sleep = options.sleep ?? sleepSync;
    this.#random = options.random ?? Math.random;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 1000;
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
    return this.#whileBusy(() => {
      const result = this.#once(fn);
      this.#afterWrite();
      return result;
    }, "write");
  }

  /**
   * Runs `fn`, which opens no transaction of its own, with the same attempts
   * and pauses as a write: an open's pragmas, which must read the file while
   * another process may hold all of it (as WAL recovery does).
   *
   * @param fn One try; it must leave nothing half done when it fails as busy.
   * @returns What `fn` returned.
   * @throws {WriteBusyError} When the file stayed locked through every attempt
   *   (its message says "Cannot read").
   * @throws {SqliteError} Any other failure, at once.
   */
  retry<T>(fn: () => T): T {
    return this.#whileBusy(fn, "read");
  }

  #whileBusy<T>(attempt: () => T, action: "write" | "read"): T {
    let lastBusy: SqliteError | undefined;
    for (let attempts = 1; attempts <= this.#maxAttempts; attempts++) {
      try {
        return attempt();
      } catch (error) {
        if (!(error instanceof SqliteError) || !error.isBusy) throw error;
        lastBusy = error;
        if (attempts < this.#maxAttempts) {
          const span = this.#maxDelayMs - this.#minDelayMs;
          this.#sleep(this.#minDelayMs + this.#random() * span);
        }
      }
    }
    throw new WriteBusyError(this.#maxAttempts, lastBusy!, { action });
  }

  /** True while a write transaction of this writer is running. */
  get active(): boolean {
    return this.#depth > 0;
  }

  /**
   * Best-effort checkpoint; a failure here is never fatal. `"truncate"`
   * first tries a TRUNCATE checkpoint that does not wait (SQLite's busy
   * handler off): it completes, and empties the `-wal`, whenever no other
   * connection is reading or writing at that moment; otherwise it returns
   * at once and a passive checkpoint runs instead.
   *
   * @param mode `"passive"` (the default) or `"truncate"`.
   */
  checkpoint(mode: "passive" | "truncate" = "passive"): void {
    try {
      if (mode === "truncate" && this.#truncateWal()) return;
      this.#db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // Documented best effort: a checkpoint blocked by readers is retried later.
    }
  }

  /** A TRUNCATE checkpoint that never waits; true when it completed. */
  #truncateWal(): boolean {
    if (this.#depth > 0) return false;
    this.#db.exec("PRAGMA busy_timeout = 0");
    try {
      const row = this.#db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get();
      return Number(row?.busy ?? 1) === 0;
    } finally {
      this.#db.exec(`PRAGMA busy_timeout = ${this.#busyTimeoutMs}`);
    }
  }

  #once<T>(fn: () => T): T {
    if (this.#leftOpen) {
      // Throws, before anything else is written, when it still cannot be ended.
      this.#db.exec("ROLLBACK");
      this.#leftOpen = false;
    }
    this.#db.exec("BEGIN IMMEDIATE");
    this.#depth++;
    try {
      const result = fn();
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      this.#rollbackAfterFailure();
      throw error;
    } finally {
      this.#depth--;
    }
  }

  /**
   * Rolls back the failed transaction without hiding the error that failed
   * it. SQLite rolls back by itself on some errors (`SQLITE_FULL`,
   * `SQLITE_IOERR`, `SQLITE_NOMEM`…), and then ROLLBACK fails because no
   * transaction is active: nothing is left to do. When ROLLBACK fails with
   * the transaction (and its write lock) still open, it is tried once more
   * at once and, failing that, before the next write.
   */
  #rollbackAfterFailure(): void {
    if (this.#tryRollback() || !this.#inTransaction()) return;
    this.#leftOpen = !this.#tryRollback();
  }

  /** Runs ROLLBACK; false when it fails (the caller decides what that means). */
  #tryRollback(): boolean {
    try {
      this.#db.exec("ROLLBACK");
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Whether the connection is inside a transaction. SQLite has no pragma
   * for it, but a deferred BEGIN (which takes no lock) fails only then.
   */
  #inTransaction(): boolean {
    try {
      this.#db.exec("BEGIN");
    } catch {
      return true;
    }
    this.#db.exec("ROLLBACK");
    return false;
  }

  #afterWrite(): void {
    this.#writes++;
    if (this.#writes % CHECKPOINT_EVERY === 0) this.checkpoint();
  }
}
