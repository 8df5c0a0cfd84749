/**
 * `StorageError`: the engine-neutral failure every store reports, with a
 * `kind` that callers (the CLI, users) match on instead of an engine's
 * result codes. Each engine's own error is a subclass (`SqliteError`).
 *
 * @module
 */

/**
 * What went wrong, whatever the engine:
 * - `busy`: another connection held the lock (or the transaction had to be retried) too long;
 * - `constraint`: a foreign key, unique, not-null or check constraint refused the write;
 * - `corrupt`: the store is damaged, or the file is not a database;
 * - `readonly`: the store may not be written (opened read-only, or no permission);
 * - `not_found`: the store itself does not exist;
 * - `full`: no space left;
 * - `io`: the operating system failed a read or a write, or the store cannot be reached (on
 *   PostgreSQL a write of the store's methods, `copy` or `doctor --fix` that fails so was not
 *   made, unless its message says that whether it was written cannot be told: its connection was
 *   lost once it was sent, and the server could not be asked; a `sync` pass that fails so may
 *   have shipped part of its work, which the next pass finds there);
 * - `other`: anything else the engine reported.
 */
export type StorageErrorKind =
  | "busy"
  | "constraint"
  | "corrupt"
  | "readonly"
  | "not_found"
  | "full"
  | "io"
  | "other";

/** Options of {@linkcode StorageError}. */
export interface StorageErrorOptions {
  /** The error this one reports. */
  readonly cause?: unknown;
}

/**
 * A store failed. Match on `kind`; `cause` holds the engine's error.
 *
 * @example Telling a lock apart from damage
 * ```ts
 * import { StorageError } from "./storage_error.ts";
 * const error: unknown = new StorageError("database is locked", "busy");
 * if (error instanceof StorageError && error.kind === "busy") {
 *   // try again later
 * }
 * ```
 */
export class StorageError extends Error {
  /** What went wrong, engine-neutral. */
  readonly kind: StorageErrorKind;

  /**
   * Creates the error.
   *
   * @param message What failed.
   * @param kind What kind of failure it is.
   * @param options The underlying error.
   */
  constructor(message: string, kind: StorageErrorKind, options: StorageErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = "StorageError";
    this.kind = kind;
  }
}
