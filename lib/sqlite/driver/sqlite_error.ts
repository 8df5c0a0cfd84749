/**
 * The one error type every driver throws.
 *
 * @module
 */
import { StorageError, type StorageErrorKind } from "../../core/storage_error.ts";

const CODE_NAMES: Readonly<Record<number, string>> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  12: "SQLITE_NOTFOUND",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  23: "SQLITE_AUTH",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
};

/** Options of {@linkcode SqliteError}. */
export interface SqliteErrorOptions {
  /** The extended result code, when the runtime reports one. */
  readonly extendedCode?: number;
  /** The runtime error this one replaces. */
  readonly cause?: unknown;
}

/** The engine-neutral kind of each primary result code; every other code is `"other"`. */
const CODE_KINDS: Readonly<Record<number, StorageErrorKind>> = {
  5: "busy",
  6: "busy",
  8: "readonly",
  10: "io",
  11: "corrupt",
  13: "full",
  14: "io",
  19: "constraint",
  23: "readonly",
  26: "corrupt",
};

/** Result codes by name, for code that tests a code (`code === SQLITE.BUSY`). */
export const SQLITE = {
  ERROR: 1,
  BUSY: 5,
  LOCKED: 6,
  READONLY: 8,
  IOERR: 10,
  CORRUPT: 11,
  FULL: 13,
  CANTOPEN: 14,
  CONSTRAINT: 19,
  NOTADB: 26,
} as const;

/**
 * An error reported by SQLite, normalized across runtimes: a
 * {@linkcode StorageError} whose `kind` follows from the result code.
 *
 * @example Telling a constraint failure apart
 * ```ts
 * import { SqliteError } from "./sqlite_error.ts";
 * const err = new SqliteError("FOREIGN KEY constraint failed", 19, { extendedCode: 787 });
 * console.assert(err.codeName === "SQLITE_CONSTRAINT");
 * console.assert(err.isConstraint);
 * ```
 */
export class SqliteError extends StorageError {
  /** Primary result code (`5` for `SQLITE_BUSY`). */
  readonly code: number;
  /** Extended result code (`787` for a foreign key failure); equals `code` when unknown. */
  readonly extendedCode: number;

  /**
   * Creates the error.
   *
   * @param message SQLite's message.
   * @param code The primary result code.
   * @param options The extended code and the cause.
   */
  constructor(message: string, code: number, options: SqliteErrorOptions = {}) {
    super(message, CODE_KINDS[code & 0xff] ?? "other", { cause: options.cause });
    this.name = "SqliteError";
    this.code = code & 0xff;
    this.extendedCode = options.extendedCode ?? code;
  }

  /** Name of the primary code, such as `"SQLITE_BUSY"`. */
  get codeName(): string {
    return CODE_NAMES[this.code] ?? `SQLITE_${this.code}`;
  }

  /** True for `SQLITE_BUSY` and `SQLITE_LOCKED`: another connection holds the lock. */
  get isBusy(): boolean {
    return this.code === SQLITE.BUSY || this.code === SQLITE.LOCKED;
  }

  /** True for a failed constraint (foreign key, unique, not null, check). */
  get isConstraint(): boolean {
    return this.code === SQLITE.CONSTRAINT;
  }
}
