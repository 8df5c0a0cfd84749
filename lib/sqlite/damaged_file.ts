/**
 * Damaged files are evidence: an open that fails must leave the file and
 * its `-wal` and `-shm` as they were. A writable SQLite connection that
 * closes after "file is not a database" checkpoints the WAL into the
 * damaged file and deletes the `-wal` (the only copy of the latest
 * commits); SQLite also deletes the `-wal` of a 0-byte file on open. So,
 * before the writable open: a 0-byte file with a non-empty `-wal` is
 * refused on `stat` alone, and any other existing file beside a non-empty
 * `-wal` is first read by a read-only connection, whose close never
 * checkpoints nor deletes. Without a `-wal` (or with an empty one, the state
 * after every clean close) a failing writable open has no commits to fold
 * into the file or delete, so that second connection is not opened.
 *
 * The `-shm` holds no data (SQLite rebuilds it from the `-wal`): the first
 * connection to open a file, read-only included, re-initialises it; while
 * another connection holds the file, it is left untouched too.
 *
 * A `-wal` that belongs to another database (a restore that copied the
 * wrong one) is refused at every open, read-only included: SQLite has no
 * way to tell and would read that database's pages as this file's (see
 * {@linkcode foreignWalReason}).
 *
 * @module
 */
import { existsSync, statSync } from "node:fs";
import type { SqliteDriver } from "./driver/types.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import { OpenError } from "../core/errors.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { foreignWalReason } from "./foreign_wal.ts";
import { recoverCommand } from "../core/salvage_hint.ts";

/** SQLITE_CORRUPT and SQLITE_NOTADB: the file is damaged, or not SQLite at all. */
const DAMAGED_CODES = new Set([11, 26]);

/**
 * What the user is told on a damaged file.
 *
 * @param path The database file.
 * @param hadWal Whether a `-wal` was beside the file before this process
 *   opened it (by default, whether one is there now: ask before opening,
 *   since a connection still open has made one of its own).
 * @returns The hint, naming the `recover` command.
 */
export function recoverHint(path: string, hadWal = hasWal(path)): string {
  const kept = hadWal ? "the file and its -wal are as they were" : "the file is as it was";
  return `nothing was changed (${kept}); ` +
    `run ${recoverCommand(path)} to salvage what it holds into a new file`;
}

/**
 * Whether a `-wal` is beside the file now. Read it before opening: SQLite
 * makes one for every connection to a WAL file, a read-only one included,
 * and deletes it at the last close.
 *
 * @param path The database file.
 * @returns True when the `-wal` exists.
 */
export function hasWal(path: string): boolean {
  return existsSync(`${path}-wal`);
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/**
 * What the user is told beside a `-wal` of another database: `recover`
 * reads the file alone.
 *
 * @param path The database file.
 * @returns The hint, naming the `recover` command.
 */
export function foreignWalHint(path: string): string {
  return `nothing was changed (the file and its -wal are as they were); ` +
    `run ${recoverCommand(path)} to salvage the file without that -wal, ` +
    `or move the -wal away if it is not this file's`;
}

/**
 * Refuses a file that a writable open would alter while failing, or that
 * any open would misread (a `-wal` of another database beside it). Reads only
 * through `stat` and a read-only SQLite connection (never a descriptor of
 * its own, which would drop this process's locks when closed).
 *
 * @param path The existing database file.
 * @param openDriver The driver opener.
 * @param options `probe: false` skips the read-only connection (for a
 *   read-only open, which is that probe itself); it is skipped too when
 *   the `-wal` is missing or empty. The `-wal` is compared with the file
 *   either way.
 * @throws {OpenError} When the file is damaged or not SQLite, is empty
 *   while its `-wal` holds commits, or has another database's `-wal`
 *   beside it.
 */
export function assertNotDamaged(
  path: string,
  openDriver: SqliteDriver,
  options: { readonly probe: boolean },
): void {
  const size = sizeOf(path);
  if (size === undefined) return;
  const walSize = sizeOf(`${sqliteFilePath(path)}-wal`) ?? 0;
  if (size === 0) {
    if (walSize === 0) return; // an empty file: a new store
    throw new OpenError(
      path,
      `the file is empty but its -wal holds ${walSize} bytes of commits; ${recoverHint(path)}`,
      { kind: "corrupt" },
    );
  }
  if (walSize === 0) return;
  const foreign = foreignWalReason(path, openDriver);
  if (foreign !== undefined) {
    throw new OpenError(path, `${foreign}; ${foreignWalHint(path)}`, { kind: "corrupt" });
  }
  if (!options.probe) return;
  let probe;
  try {
    probe = openDriver(path, { readonly: true });
  } catch {
    return; // the writable open reports why it cannot open the file
  }
  try {
    probe.prepare("SELECT count(*) AS n FROM sqlite_master").get();
  } catch (error) {
    if (error instanceof SqliteError && DAMAGED_CODES.has(error.code)) {
      throw new OpenError(path, `${error.message}; ${recoverHint(path)}`, {
        cause: error,
        kind: "corrupt",
      });
    }
    // Anything else (a read-only folder without -shm, a lock): the writable open says.
  } finally {
    probe.close();
  }
}

/** SQLITE_READONLY: what a read-only connection reports when a hot journal needs playing back. */
const SQLITE_READONLY = 8;

/**
 * Why a read-only open failed, when it met a writer's leftover rollback
 * journal (which only a writable open plays back); `undefined` otherwise.
 *
 * @param path The database file, as the user gave it.
 * @param error What the read-only open threw.
 * @returns The reason, naming the journal and the way to finish it.
 */
export function leftoverJournalReason(path: string, error: unknown): string | undefined {
  if (path === ":memory:" || !(error instanceof SqliteError)) return undefined;
  if (error.code !== SQLITE_READONLY || !hasLeftoverJournal(path)) return undefined;
  return leftoverJournalAdvice(path);
}

/**
 * What a user is told of a writer's rollback journal beside `path`: what it
 * is, and the command that plays it back.
 *
 * @param path The database file.
 * @returns The reason and the advice, naming the journal and the command.
 */
export function leftoverJournalAdvice(path: string): string {
  return `a writer stopped in the middle of a transaction and left its rollback journal ` +
    `(${sqliteFilePath(path)}-journal), which only a writable open plays back to finish it; ` +
    `nothing was changed. ` +
    `Run "hermes-state --db ${path} doctor --fix" as a user who may write the file`;
}

/**
 * Whether a writer's rollback journal waits beside the file (a hot journal,
 * which the next writable open plays back).
 *
 * @param path The database file.
 * @returns True when a non-empty `-journal` is there.
 */
export function hasLeftoverJournal(path: string): boolean {
  return (sizeOf(`${sqliteFilePath(path)}-journal`) ?? 0) > 0;
}
