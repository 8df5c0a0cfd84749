/**
 * Opening a database file: checks on the path, the connection, its pragmas
 * and the schema step (SPEC §2, "Opening").
 *
 * @module
 */
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  statSync,
} from "node:fs";
import { dirname } from "node:path";
import process from "node:process";
import type { SqliteConnection, SqliteDriver } from "./driver/types.ts";
import { loadDriver } from "./driver/load.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import { NotStateDbError, OpenError } from "../core/errors.ts";
import { quotedValue } from "../core/shown_value.ts";
import {
  chooseReadAccess,
  openWithAccess,
  type ReadAccess,
  sidecarsRefused,
} from "./read_access.ts";
import { assertNotDamaged, leftoverJournalReason, recoverHint } from "./damaged_file.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { diskFullReason, isDiskFull } from "./disk_space.ts";
import { durabilityPragmas, JOURNAL_SIZE_LIMIT } from "./durability.ts";
import { currentSchemaVersion, migrate, type MigrationReport } from "./schema/migrate.ts";
import { finishFtsBackfill } from "./schema/fts_backfill.ts";
import { readSchemaVersion } from "./schema/schema_version.ts";
import { createReadViews, createResolvedSessionsView } from "./schema/read_views.ts";
import { type RetryOptions, Writer } from "./write.ts";

/** How durable each commit is: `"full"` syncs the WAL on every commit. */
export type Synchronous = "full" | "normal";

/** Options of {@linkcode openConnection}. */
export interface ConnectionOptions {
  /** The database file, or `":memory:"`. */
  readonly path: string;
  /** Open without writing anything; the file must exist. */
  readonly readonly?: boolean;
  /** Commit durability. */
  readonly synchronous?: Synchronous;
  /** Busy-retry settings of the write path. */
  readonly retry?: RetryOptions;
  /** The driver opener; the running runtime's by default. */
  readonly openDriver?: SqliteDriver;
}

/** An open, ready connection. */
export interface Connection {
  /** The connection. */
  readonly db: SqliteConnection;
  /** Runs write transactions on it. */
  readonly writer: Writer;
  /** The schema step's report; `undefined` when opened read-only. */
  readonly migration: MigrationReport | undefined;
  /** How a read-only open reached the file; `"write"` for a writable open. */
  readonly access: ReadAccess | "write";
}

/** SQLITE_READONLY: a connection SQLite could open for reading only was asked to write. */
const SQLITE_READONLY = 8;

/** Milliseconds SQLite itself waits on a lock before reporting busy, by default. */
const BUSY_TIMEOUT_MS = 1000;

function errorCode(error: unknown): string | undefined {
  return (error as { code?: unknown })?.code as string | undefined;
}

function describe(error: unknown): string {
  if (error instanceof SqliteError) return error.message;
  const code = errorCode(error);
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "ENOTDIR") return "a parent of it is not a folder";
  if (code === "EROFS") return "the file system is read-only";
  return error instanceof Error ? error.message : String(error);
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return false;
    throw new OpenError(path, describe(error), { cause: error });
  }
}

/**
 * What `path` (which exists, perhaps as a link) is when it is no file: a
 * folder, a pipe (which a read-only open would wait on for ever) or a
 * device; `undefined` for a file. A link to nothing is "no such file".
 *
 * @param path A path that exists.
 * @returns The reason an open refuses it, or `undefined` for a file.
 * @throws {OpenError} When it cannot be looked at, or is a link to nothing.
 */
export function notAFile(path: string): string | undefined {
  try {
    const stat = statSync(path);
    if (stat.isFile()) return undefined;
    if (stat.isDirectory()) return "it is a folder";
    if (stat.isFIFO()) return "it is not a file but a named pipe";
    if (stat.isCharacterDevice() || stat.isBlockDevice()) return "it is not a file but a device";
    return "it is not a file";
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw new OpenError(path, describe(error), { cause: error });
    throw new OpenError(path, "no such file (it is a link to a file that is not there)", {
      cause: error,
      kind: "not_found",
    });
  }
}

/** Checks the path and creates a new file with mode 0600; true when it created one. */
function preparePath(path: string, readonly: boolean): boolean {
  if (path === ":memory:") return false;
  if (path === "") throw new OpenError(path, "the path is empty", { kind: "not_found" });
  if (exists(path)) {
    const notFile = notAFile(path);
    if (notFile !== undefined) throw new OpenError(path, notFile, { kind: "io" });
    assertMayRead(path);
    // Never test by opening a descriptor: closing any descriptor on the file
    // drops every POSIX lock this process holds on it, those of its open
    // connections included (SQLite's "How To Corrupt", §2.2).
    if (!readonly) assertMayWrite(path);
    return false;
  }
  if (readonly) {
    throw new OpenError(path, "no such file (a read-only open never creates one)", {
      kind: "not_found",
    });
  }
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    const reason = errorCode(error) === "EEXIST"
      ? "a parent of it is not a folder"
      : describe(error);
    throw new OpenError(path, reason, { cause: error });
  }
  try {
    // The file does not exist yet, so no connection of this process holds
    // it: opening and closing a descriptor here drops no lock.
    closeSync(openSync(path, "wx", 0o600));
    return true;
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false; // another process just created it
    throw new OpenError(path, describe(error), { cause: error });
  }
}

/**
 * Refuses, before SQLite creates its -wal and -shm beside it, a file the
 * user may not write: SQLite would quietly open it read-only. `access(2)`
 * asks without opening the file. Root is left to the probe inside the
 * schema step ({@linkcode probeWritable}), because Deno answers `access`
 * from the mode bits, which do not bind root.
 */
function assertMayWrite(path: string): void {
  if (process.getuid?.() === 0) return;
  try {
    accessSync(path, constants.W_OK);
  } catch (error) {
    const code = errorCode(error);
    const reason = code === "EACCES" || code === "EPERM"
      ? "permission denied (the file is read-only; open it with readonly: true to read it)"
      : describe(error);
    throw new OpenError(path, reason, { cause: error });
  }
}

/**
 * Refuses a file this user may not read, in words (SQLite says only
 * "unable to open database file"). `access(2)` asks without opening the
 * file; root may read any file, so it is not asked for root.
 *
 * @param path An existing file.
 * @throws {OpenError} When the user may not read it.
 */
export function assertMayRead(path: string): void {
  if (process.getuid?.() === 0) return;
  try {
    accessSync(path, constants.R_OK);
  } catch (error) {
    const code = errorCode(error);
    if (code !== "EACCES" && code !== "EPERM") return; // SQLite's own open says what else it is
    throw new OpenError(
      path,
      "permission denied (this user may not read the file: run as its owner or root)",
      { cause: error, kind: "readonly" },
    );
  }
}

/** True when the folder of `path` may not be written (SQLite keeps -wal and -shm there). */
function folderReadOnly(path: string): boolean {
  try {
    accessSync(dirname(sqliteFilePath(path)), constants.W_OK);
    return false;
  } catch (error) {
    const code = errorCode(error);
    return code === "EACCES" || code === "EPERM" || code === "EROFS";
  }
}

/** SQLITE_CORRUPT and SQLITE_NOTADB. */
const DAMAGED = new Set([11, 26]);

/**
 * Why SQLite failed to open (or first read) `path`, in words that point at
 * the cause a user can fix: a full disk, damage (with the `recover` hint), a
 * writer's leftover journal, a read-only folder or file.
 *
 * @param error What the driver threw.
 * @param path The database path.
 * @param readonly Whether it was opened to read only.
 * @returns The reason, for an {@linkcode OpenError}.
 */
export function openFailureReason(error: unknown, path: string, readonly: boolean): string {
  if (isDiskFull(error, path)) return diskFullReason(path);
  if (error instanceof SqliteError && DAMAGED.has(error.code) && readonly) {
    return `${error.message}; ${recoverHint(path)}`;
  }
  const journal = readonly ? leftoverJournalReason(path, error) : undefined;
  if (journal !== undefined) return journal;
  const sidecarTrouble = error instanceof SqliteError && (error.code === 8 || error.code === 14);
  if (sidecarTrouble && path !== ":memory:" && folderReadOnly(path)) {
    if (readonly && !existsSync(`${sqliteFilePath(path)}-shm`)) {
      return "the folder is read-only and reading a WAL database needs its -shm file there";
    }
    if (!readonly) {
      return "permission denied (the folder is read-only; SQLite keeps the -wal and -shm files there)";
    }
  }
  if (!readonly && error instanceof SqliteError && error.code === SQLITE_READONLY) {
    return "permission denied (the file is read-only; open it with readonly: true to read it)";
  }
  return describe(error);
}

function tightenSidecars(given: string): void {
  const path = sqliteFilePath(given);
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600);
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
    }
  }
}

/**
 * Refuses a file without the Hermes tables (another application's database,
 * a 0-byte file). Reading the schema also fails on a file that is not SQLite.
 *
 * @param db A connection to the file.
 * @param path The file, for the error.
 * @throws {NotStateDbError} When the file lacks the `sessions` or `messages` table.
 */
export function assertStateDb(db: SqliteConnection, path: string): void {
  const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  const names = new Set(rows.map((row) => String(row.name)));
  for (const missing of ["sessions", "messages"] as const) {
    if (!names.has(missing)) throw new NotStateDbError(path, { missing, empty: names.size === 0 });
  }
}

/**
 * The page cache of each connection, in KiB (SQLite's default is 2,000).
 * Ranking a frequent word reads its whole doclist: at a million messages a
 * 2 MB cache thrashes and the same query takes up to 3× longer on some
 * connections (BENCHMARKS.md, "A million messages"); 16 MiB holds it. The
 * cache grows only as pages are read, and belongs to the connection: the
 * file is not touched.
 */
export const CACHE_KIB = 16384;

function applyPragmas(db: SqliteConnection, path: string, options: ConnectionOptions): void {
  db.exec(`PRAGMA busy_timeout = ${options.retry?.busyTimeoutMs ?? BUSY_TIMEOUT_MS}`);
  db.exec(`PRAGMA cache_size = -${CACHE_KIB}`);
  if (options.readonly) {
    // No pragma that writes, and no `query_only` either: a search may need
    // a TEMP table, and every write of the library is refused above SQL
    // for a read-only store (`Store.write`).
    assertStateDb(db, path);
    createReadViews(db);
    return;
  }
  db.exec("PRAGMA foreign_keys = ON");
  const mode = db.prepare("PRAGMA journal_mode = WAL").get();
  const journal = String(mode?.journal_mode ?? "").toLowerCase();
  if (journal !== "wal" && !(path === ":memory:" && journal === "memory")) {
    throw new OpenError(path, `journal_mode stayed "${journal}" instead of "wal"`, { kind: "io" });
  }
  const level = options.synchronous === "normal" ? "NORMAL" : "FULL";
  db.exec(`PRAGMA synchronous = ${level}`);
  for (const pragma of durabilityPragmas()) db.exec(pragma);
  const limit = Number(db.prepare("PRAGMA journal_size_limit").get()?.journal_size_limit);
  if (limit !== JOURNAL_SIZE_LIMIT && path !== ":memory:") {
    throw new OpenError(
      path,
      `journal_size_limit stayed ${limit} instead of ${JOURNAL_SIZE_LIMIT}`,
      { kind: "io" },
    );
  }
}

/** Ends the probe's transaction with a rollback instead of a commit. */
const PROBED = Symbol("writable probe done");

/**
 * Fails with SQLITE_READONLY when SQLite could open the file for reading
 * only (it falls back to that silently for a file the user may not write).
 * Asking SQLite is the only safe test: opening a descriptor of our own on
 * the file would drop this process's locks on it when closed. The probe
 * rewrites the header's `user_version` with its own value in a write
 * transaction that is rolled back, so nothing reaches the file: no WAL
 * frame and no sync (a savepoint rolled back inside a committed
 * transaction would still write the page, and sync, on every open).
 */
function probeWritable(db: SqliteConnection, writer: Writer): void {
  try {
    writer.run(() => {
      const version = Number(db.prepare("PRAGMA user_version").get()?.user_version ?? 0);
      db.exec(`PRAGMA user_version = ${version}`);
      throw PROBED;
    });
  } catch (error) {
    if (error !== PROBED) throw error;
  }
}

/**
 * Opens `path`, applies the pragmas and, unless read-only, runs the schema
 * step. A read-only open takes no write lock, runs no schema step, changes
 * no byte of the file, and refuses a file without the Hermes tables.
 *
 * @param options Path and settings.
 * @returns The ready connection.
 * @throws {NotStateDbError} When a read-only open finds no `sessions` or `messages` table.
 * @throws {OpenError} When the path is a folder, not SQLite, damaged, or not
 *   writable, or the disk is full. A damaged file, and its `-wal`, are left
 *   exactly as they were (see `damaged_file.ts`).
 * @throws {WriteBusyError} When the pragmas or the schema step found the
 *   file locked through every attempt (nothing was changed; the caller may
 *   try again).
 * @throws {RangeError} When `synchronous` is not `"full"` or `"normal"`,
 *   `retry.busyTimeoutMs` is not a non-negative integer, `retry.maxAttempts`
 *   not a positive one, or a retry delay not a non-negative number.
 */
export async function openConnection(options: ConnectionOptions): Promise<Connection> {
  return openConnectionWith(options.openDriver ?? await loadDriver(), options);
}

const isWhole = Number.isSafeInteger;

/**
 * Checks the settings before the file is touched: a `synchronous` that is
 * not a level, or retry counts that are not numbers, would otherwise be
 * taken silently (`"off"` read as `"full"`) or fail later with a message
 * naming neither (`maxAttempts: 0` left no error to throw).
 */
function checkSettings(options: ConnectionOptions): void {
  const { synchronous, retry = {} } = options;
  if (synchronous !== undefined && synchronous !== "full" && synchronous !== "normal") {
    throw new RangeError(
      `Cannot open database: synchronous must be "full" or "normal": current value is ${
        quotedValue(synchronous)
      }`,
    );
  }
  const numbers: [string, unknown, string, (n: number) => boolean][] = [
    ["busyTimeoutMs", retry.busyTimeoutMs, "a non-negative integer", (n) => n >= 0 && isWhole(n)],
    ["maxAttempts", retry.maxAttempts, "a positive integer", (n) => n >= 1 && isWhole(n)],
    ["minDelayMs", retry.minDelayMs, "a non-negative number", (n) => n >= 0 && Number.isFinite(n)],
    ["maxDelayMs", retry.maxDelayMs, "a non-negative number", (n) => n >= 0 && Number.isFinite(n)],
  ];
  for (const [name, value, what, fits] of numbers) {
    if (value === undefined || (typeof value === "number" && fits(value))) continue;
    throw new RangeError(
      `Cannot open database: retry.${name} must be ${what}: current value is ${quotedValue(value)}`,
    );
  }
}

/** Opens the driver's connection with `access`, its failure told in words. */
function openAs(
  openDriver: SqliteDriver,
  path: string,
  access: ReadAccess | "write",
  readonly: boolean,
): SqliteConnection {
  try {
    return openWithAccess(openDriver, path, access);
  } catch (error) {
    throw new OpenError(path, openFailureReason(error, path, readonly), {
      cause: error,
      kind: isDiskFull(error, path) ? "full" : undefined,
    });
  }
}

/** Whether the file is in WAL mode (a read: the mode is the file's, in its header). */
function inWalMode(db: SqliteConnection): boolean {
  return String(db.prepare("PRAGMA journal_mode").get()?.journal_mode).toLowerCase() === "wal";
}

/**
 * The access a `"shared"` connection must give way to, asked by its first
 * read: `"readonly"` for a file in rollback-journal mode (a read-write
 * connection would play a writer's journal back into it, were the writer to
 * die while it is open), `"immutable"` when the folder refused the sidecars
 * the read makes (`sidecarsRefused`), else `undefined`.
 */
function sharedReadRefused(
  db: SqliteConnection,
  writer: Writer,
  path: string,
): "readonly" | "immutable" | undefined {
  try {
    return writer.retry(() => inWalMode(db)) ? undefined : "readonly";
  } catch (error) {
    if (sidecarsRefused(error, path)) return "immutable";
    throw error;
  }
}

/**
 * {@linkcode openConnection} with the driver already loaded, for a store
 * that opens its file again while its methods run (they are synchronous).
 *
 * @param openDriver The driver opener.
 * @param options Path and settings (`options.openDriver` is not used).
 * @returns The ready connection.
 * @throws {NotStateDbError} As {@linkcode openConnection}.
 * @throws {OpenError} As {@linkcode openConnection}.
 * @throws {WriteBusyError} As {@linkcode openConnection}.
 * @throws {RangeError} As {@linkcode openConnection}.
 */
export function openConnectionWith(
  openDriver: SqliteDriver,
  options: ConnectionOptions,
): Connection {
  const { path } = options;
  checkSettings(options);
  const readonly = options.readonly ?? false;
  const created = preparePath(path, readonly);
  if (!created && path !== ":memory:") {
    try {
      assertNotDamaged(path, openDriver, { probe: !readonly });
    } catch (error) {
      if (error instanceof OpenError || !isDiskFull(error, path)) throw error;
      throw new OpenError(path, diskFullReason(path), { cause: error, kind: "full" });
    }
  }
  let access: ReadAccess | "write" = readonly ? chooseReadAccess(path) : "write";
  let db: SqliteConnection;
  try {
    db = openAs(openDriver, path, access, readonly);
  } catch (error) {
    if (access !== "shared" || !sidecarsRefused(error, path)) throw error;
    access = "immutable";
    db = openAs(openDriver, path, access, readonly);
  }
  let writer = new Writer(db, options.retry);
  try {
    // A read-write connection reading a rollback-journal file would play a
    // writer's journal back into it, were the writer to die while it is open.
    if (access === "shared" && path !== ":memory:") {
      const reread = sharedReadRefused(db, writer, path);
      if (reread !== undefined) {
        db.close();
        access = reread;
        db = openAs(openDriver, path, access, readonly);
        writer = new Writer(db, options.retry);
      }
    }
    // Reading the file may meet another process holding all of it (a WAL recovery,
    // an exclusive connection): it is waited out as long as a write would be.
    writer.retry(() => applyPragmas(db, path, options));
    if (!readonly) probeWritable(db, writer);
    // A file the schema step would not change needs no write transaction for it.
    const current = readonly ? undefined : currentSchemaVersion(db);
    let migration = readonly
      ? undefined
      : current !== undefined
      ? { versionBefore: current, versionAfter: current }
      : writer.run(() => migrate(db));
    if (
      current === undefined && migration !== undefined &&
      finishFtsBackfill((fn) => writer.run(fn), db) !== undefined
    ) {
      migration = { ...migration, versionAfter: Number(readSchemaVersion(db)) };
    }
    // Whole session rows of a newer Hermes's file are read with their prompts (read_views.ts).
    if (!readonly) writer.retry(() => createResolvedSessionsView(db));
    if (created) tightenSidecars(path);
    return { db, writer, migration, access };
  } catch (error) {
    db.close();
    // A lock another connection holds is not a fault of the file: the
    // caller may wait and try again (the asynchronous store does).
    if (error instanceof OpenError || (error instanceof SqliteError && error.isBusy)) throw error;
    throw new OpenError(path, openFailureReason(error, path, readonly), {
      cause: error,
      kind: isDiskFull(error, path) ? "full" : undefined,
    });
  }
}
