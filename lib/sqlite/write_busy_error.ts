/**
 * The error of a SQLite write that gave up waiting for the write lock.
 *
 * @module
 */
import { SqliteError } from "./driver/sqlite_error.ts";

/**
 * A write gave up after every retry because another connection kept the
 * write lock. Nothing of it was written.
 */
export class WriteBusyError extends SqliteError {
  /** How many times the write was tried. */
  readonly attempts: number;
  /** How long it waited in all, in milliseconds, when the waiting was timed. */
  readonly waitedMs: number | undefined;

  /**
   * Creates the error.
   *
   * @param attempts The attempts made.
   * @param cause The last busy error.
   * @param options `waitedMs`: how long the attempts took in all.
   */
  constructor(attempts: number, cause: SqliteError, options: { waitedMs?: number } = {}) {
    super(
      `Cannot write: the database stayed locked by another connection through ${attempts} attempts`,
      cause.code,
      { extendedCode: cause.extendedCode, cause },
    );
    this.name = "WriteBusyError";
    this.attempts = attempts;
    this.waitedMs = options.waitedMs;
  }
}
