/**
 * The error classes of hermes-state. Misuse gets the built-in `TypeError` or
 * `RangeError`; these are the conditions callers catch.
 *
 * @module
 */
import { SqliteError } from "./driver/sqlite_error.ts";
import { StorageError, type StorageErrorKind } from "./storage_error.ts";

export { SqliteError, StorageError, type StorageErrorKind };

/** The kind of an open failure, from the error that caused it. */
function openFailureKind(cause: unknown): StorageErrorKind {
  if (cause instanceof StorageError) return cause.kind;
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (code === "ENOENT") return "not_found";
  if (code === "EACCES" || code === "EPERM" || code === "EROFS") return "readonly";
  if (code === "ENOSPC") return "full";
  return "io";
}

/**
 * A database file could not be opened: a folder, not SQLite, damaged, or not
 * writable. The message names the path; `cause` holds the underlying error.
 *
 * @example Catching a bad path
 * ```ts
 * import { OpenError } from "./errors.ts";
 * const err = new OpenError("/tmp", "it is a folder");
 * console.assert(err.message === 'Cannot open database "/tmp": it is a folder');
 * ```
 */
export class OpenError extends StorageError {
  /** The path that could not be opened. */
  readonly path: string;

  /**
   * Creates the error.
   *
   * @param path The database path.
   * @param reason Why it failed, lower case, no trailing period.
   * @param options The underlying error.
   */
  constructor(
    path: string,
    reason: string,
    options?: { cause?: unknown; kind?: StorageErrorKind },
  ) {
    super(
      `Cannot open database "${path}": ${reason}`,
      options?.kind ?? openFailureKind(options?.cause),
      { cause: options?.cause },
    );
    this.name = "OpenError";
    this.path = path;
  }
}

/**
 * A write gave up after every retry because another connection kept the
 * write lock. Nothing of it was written.
 */
export class WriteBusyError extends SqliteError {
  /** How many times the write was tried. */
  readonly attempts: number;

  /**
   * Creates the error.
   *
   * @param attempts The attempts made.
   * @param cause The last busy error.
   */
  constructor(attempts: number, cause: SqliteError) {
    super(
      `Cannot write: the database stayed locked by another connection through ${attempts} attempts`,
      cause.code,
      { extendedCode: cause.extendedCode, cause },
    );
    this.name = "WriteBusyError";
    this.attempts = attempts;
  }
}

/** A title was rejected: too long, or already used by another session. */
export class TitleError extends Error {
  /**
   * Creates the error.
   *
   * @param message The exact message (Python's wording).
   */
  constructor(message: string) {
    super(message);
    this.name = "TitleError";
  }
}

/** A write was attempted on a database opened with `readonly: true`. */
export class ReadonlyError extends StorageError {
  /**
   * Creates the error.
   *
   * @param path The database path.
   */
  constructor(path: string) {
    super(`Cannot write to "${path}": the database was opened read-only`, "readonly");
    this.name = "ReadonlyError";
  }
}
