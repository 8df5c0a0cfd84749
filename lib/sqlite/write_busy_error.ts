/**
 * The error of a SQLite write that gave up waiting for the write lock.
 *
 * @module
 */
import { SqliteError } from "./driver/sqlite_error.ts";

/**
 * A write gave up after every retry because another connection kept the
 * write lock; nothing of it was written. Also a read (or an open) that gave
 * up because another connection held the whole file (`locking_mode =
 * EXCLUSIVE`, a WAL being recovered), its message saying "Cannot read".
 */
export class WriteBusyError extends SqliteError {
  /** How many times the write was tried. */
  readonly attempts: number;
  /** How long it waited in all, in milliseconds, when the waiting was timed. */
  readonly waitedMs: number | undefined;
  /** What could not be done: a write (the write lock), or a read or an open (the whole file). */
  readonly action: "write" | "read";

  /**
   * Creates the error.
   *
   * @param attempts The attempts made.
   * @param cause The last busy error.
   * @param options `waitedMs`: how long the attempts took in all; `action`:
   *   what could not be done, for the message (`"write"` by default).
   */
  constructor(
    attempts: number,
    cause: SqliteError,
    options: { waitedMs?: number; action?: "write" | "read" } = {},
  ) {
    super(
      `Cannot ${
        options.action ?? "write"
      }: the database stayed locked by another connection through ${attempts} attempts`,
      cause.code,
      { extendedCode: cause.extendedCode, cause },
    );
    this.name = "WriteBusyError";
    this.attempts = attempts;
    this.waitedMs = options.waitedMs;
    this.action = options.action ?? "write";
  }
}
