/**
 * The engine-neutral error classes of hermes-state. Misuse gets the built-in
 * `TypeError` or `RangeError`; these are the conditions callers catch. The
 * SQLite engine's own (`SqliteError`, `WriteBusyError`) are in `lib/sqlite/`.
 *
 * @module
 */
import { StorageError, type StorageErrorKind } from "./storage_error.ts";
import { clippedText, clippedWithin } from "./shown_value.ts";

export { StorageError, type StorageErrorKind };

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
    // A long path is named by its start, here and where the reason repeats it (ENAMETOOLONG).
    super(
      `Cannot open database ${clippedText(path, (shown) => `"${shown}"`)}: ${
        clippedWithin(reason, path)
      }`,
      options?.kind ?? openFailureKind(options?.cause),
      { cause: options?.cause },
    );
    this.name = "OpenError";
    this.path = path;
  }
}

/**
 * The file is SQLite but not a Hermes store: it has no `sessions` or no
 * `messages` table. A read-only open refuses it, and the CLI refuses it for
 * every command except `import` into an empty file, so that another
 * application's database is never given the Hermes tables.
 *
 * @example
 * ```ts
 * import { NotStateDbError } from "./errors.ts";
 * const err = new NotStateDbError("/tmp/notes.db", { missing: "sessions", empty: false });
 * console.assert(err.message === 'Cannot open database "/tmp/notes.db": not a Hermes state.db (no sessions table)');
 * ```
 */
export class NotStateDbError extends OpenError {
  /** The first Hermes table the file lacks. */
  readonly missing: "sessions" | "messages";
  /** True when the file holds no table at all (a new or 0-byte file). */
  readonly empty: boolean;

  /**
   * Creates the error.
   *
   * @param path The database path.
   * @param details The missing table, and whether the file has no table at all.
   */
  constructor(path: string, details: { missing: "sessions" | "messages"; empty: boolean }) {
    super(path, `not a Hermes state.db (no ${details.missing} table)`, { kind: "corrupt" });
    this.name = "NotStateDbError";
    this.missing = details.missing;
    this.empty = details.empty;
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

/** A backup that cannot be made (its destination is the database, or exists) or does not verify. */
export class BackupError extends Error {
  /**
   * Creates the error.
   *
   * @param message What went wrong, naming the file.
   * @param options The cause.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "BackupError";
  }
}

/** A recovery that cannot start: its destination is the damaged file, or exists. */
export class RecoverError extends Error {
  /**
   * Creates the error.
   *
   * @param message What went wrong, naming the file.
   * @param options The cause.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RecoverError";
  }
}

/**
 * An export that cannot be made: a session's id is not valid UTF-8 text
 * (a writer stored other bytes), so that, read, it holds U+FFFD where its
 * bytes were and no export can carry it as the id it is. Nothing has been
 * written when it is thrown.
 */
export class UnexportableIdError extends Error {
  /** The session's id as read (U+FFFD for each byte that is not UTF-8). */
  readonly id: string;

  /**
   * Creates the error.
   *
   * @param id The id as read.
   */
  constructor(id: string) {
    super(
      `Cannot export session ${JSON.stringify(id)}: its id is not valid UTF-8 text ` +
        "(shown here with U+FFFD for each bad byte), which an export cannot carry as an id",
    );
    this.name = "UnexportableIdError";
    this.id = id;
  }
}
