/**
 * `backupDatabase(source, dest)`: an online, consistent copy of a state.db
 * while writers run (`VACUUM INTO`, one read transaction), verified before
 * it takes its name: `integrity_check` of every table and index, and row
 * counts, on the copy (with `full`, the whole-file check, which also runs
 * each search index's own check). Mode 0600; never over the source, nor
 * over an existing file unless `force`; optionally gzip through `node:zlib`.
 *
 * Why the table-by-table check by default: the search indexes' own check
 * compares every index entry with its text (35 of the 39 s of a whole-file
 * check at a million messages; 3.3 s table by table), and what it could
 * find in a copy is only what the source's index already held, which
 * `doctor` checks and mends. A copy `VACUUM INTO` has just written has no
 * free pages, the other part only the whole-file check sees.
 *
 * Restoring: stop the writers, copy the file back over `state.db` (and
 * delete `state.db-wal` and `state.db-shm`), then run `hermes-state doctor`.
 *
 * @module
 */
import {
  closeSync,
  createReadStream,
  createWriteStream,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { loadDriver } from "../sqlite/driver/load.ts";
import { chooseWholeReadAccess, openForReading, readsUnlocked } from "../sqlite/read_access.ts";
import { changedEachTimeReason, fileState, untilUnmoved } from "../sqlite/file_state.ts";
import type { SqliteConnection, SqliteDriver } from "../sqlite/driver/types.ts";
import { BackupError, OpenError } from "../core/errors.ts";
import { clippedText } from "../core/shown_value.ts";
import { integrityCheck, isCorruption } from "../sqlite/integrity.ts";
import {
  assertNotDamaged,
  hasWal,
  leftoverJournalAdvice,
  recoverHint,
} from "../sqlite/damaged_file.ts";
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import { isBusyError, retryWhileBusy } from "../sqlite/store_retry.ts";
import {
  removeSidecars,
  removeStaleTemps,
  removeWithSidecars,
  stopIfAborted,
  tempName,
} from "./_temp_files.ts";
import { fileIdentity, isDatabaseFile } from "../files/same_file.ts";
import { outputPathProblem, writeFailureReason } from "../files/output_path.ts";
import { assertMayRead, assertStateDb, openFailureReason } from "../sqlite/open.ts";
import { abortableDelay } from "../core/delay.ts";
import { groupedInteger } from "../core/grouped_digits.ts";
import { deadWritersJournal } from "./_hot_journal.ts";
import { walCommitsPastBreak } from "./wal_break.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { checkOptionNames, type OptionNames } from "../core/option_names.ts";

/** Options of {@linkcode backupDatabase}. */
export interface BackupOptions {
  /**
   * Replace `dest` when it exists.
   * @default {false}
   */
  readonly force?: boolean;
  /**
   * Write the copy gzip-compressed.
   * @default {false}
   */
  readonly compress?: boolean;
  /**
   * Verify the copy with the whole-file `integrity_check`, each search
   * index's own check included (its findings are `ftsWarnings`), instead
   * of table by table.
   * @default {false}
   */
  readonly full?: boolean;
  /** Called as the backup goes: the stage, bytes done, bytes in all (0 when unknown). */
  readonly onProgress?: (
    stage: "copying" | "verifying" | "compressing",
    done: number,
    total: number,
  ) => void;
  /** The driver opener; the running runtime's by default. */
  readonly openDriver?: SqliteDriver;
  /**
   * How long to wait for a file another process holds whole (not even
   * reads can go on), in milliseconds (`HERMES_STATE_LOCK_TIMEOUT`).
   * @default {15000}
   */
  readonly lockTimeoutMs?: number;
  /**
   * Stops the backup between its stages (copy, verification, compression),
   * or a wait for a lock at once, removing its temporary files; the promise
   * rejects with the signal's reason. A stage under way (SQLite's copy or
   * check) finishes first.
   */
  readonly signal?: AbortSignal;
}

/** The options of the call, checked by name. */
const BACKUP_OPTION_NAMES: OptionNames<BackupOptions> = {
  force: "boolean",
  compress: "boolean",
  full: "boolean",
  onProgress: true,
  openDriver: true,
  lockTimeoutMs: true,
  signal: true,
};

/** What {@linkcode backupDatabase} wrote. */
export interface BackupResult {
  /** The database copied. */
  readonly source: string;
  /** The file written. */
  readonly dest: string;
  /** Its size in bytes. */
  readonly bytes: number;
  /** True when gzip-compressed. */
  readonly compressed: boolean;
  /** Sessions in the copy. */
  readonly sessions: number;
  /** Messages in the copy. */
  readonly messages: number;
  /** What the FTS integrity checks said on the copy (empty when sound, or not run). */
  readonly ftsWarnings: string[];
  /** Whether the search indexes' own checks ran (`full`). */
  readonly searchIndexesChecked: boolean;
  /**
   * Commits the source's `-wal` holds past a frame that fails its checksum,
   * which SQLite reads none of, and so neither does the copy (`recover`
   * salvages them): the frame SQLite stops at (1 for the first) and the
   * commit frames after it; `null` when there are none.
   */
  readonly walCommitsLeftOut: { readonly frame: number; readonly commits: number } | null;
}

function exists(path: string): boolean {
  return fileIdentity(path) !== undefined;
}

function count(db: SqliteConnection, table: string): number {
  return Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0);
}

/** `PRAGMA data_version`: it moves when another connection commits to the file. */
function dataVersion(db: SqliteConnection): number {
  return Number(db.prepare("PRAGMA data_version").get()?.data_version ?? 0);
}

/** A new empty file, mode 0600, beside `dest` (SQLite's VACUUM INTO accepts an empty file). */
function newTemp(dest: string, suffix: string): string {
  const temp = tempName(dest, suffix);
  try {
    rmSync(temp, { force: true });
    // A new file of ours: no connection of this process holds it.
    closeSync(openSync(temp, "wx", 0o600));
  } catch (error) {
    throw new BackupError(`Cannot back up to ${clippedText(dest)}: ${writeFailureReason(error)}`, {
      cause: error,
    });
  }
  return temp;
}

/** SQLITE_FULL, SQLITE_IOERR: writing the copy failed. */
const WRITE_FAILED = new Set([13, 10]);

/**
 * Gives `temp` the name `dest`: atomically, and only over an existing file
 * when `force`. The old file's `-wal`, `-shm` and `-journal` go first (a
 * SQLite connection would otherwise read the new file through them).
 */
function publish(temp: string, dest: string, force: boolean): void {
  if (force) {
    removeSidecars(dest);
    renameSync(temp, dest);
    return;
  }
  try {
    linkSync(temp, dest); // fails when dest appeared meanwhile
  } catch (error) {
    if ((error as { code?: unknown }).code === "EEXIST") {
      throw new BackupError(
        `Cannot back up: ${clippedText(dest)} already exists (give --force to replace it)`,
      );
    }
    throw error;
  }
  rmSync(temp);
}

/**
 * Copies the database at `source` to `dest`, consistent and verified.
 *
 * @param source The state.db to copy (it may be in use by writers).
 * @param dest The file to write.
 * @param options `force`, `compress`, progress.
 * @returns Where, how big, and the counts of the copy.
 * @throws {OpenError} When the source does not exist or cannot be read.
 * @throws {BackupError} When `dest` is the source or exists (without `force`), is a folder, its
 *   folder is missing or cannot be written, its disk is full, or the copy does not verify.
 * @throws {OpenError} When the source is a 0-byte file whose `-wal` holds commits (use recover),
 *   or a SQLite file without the Hermes tables (`NotStateDbError`).
 * @throws {BackupError} When the source is a 0-byte file (nothing to back up).
 * @throws The reason of `signal` when it aborts (the temporary files are removed).
 * @throws {TypeError} When `options` is not an object or holds an option this call does not
 *   take, naming it; nothing is done.
 *
 * @example
 * ```ts
 * import { SessionDB } from "../sqlite/session_db.ts";
 * import { backupDatabase } from "./backup.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * const result = await backupDatabase(`${dir}/state.db`, `${dir}/copy.db`);
 * console.assert(result.sessions === 1);
 * ```
 */
export async function backupDatabase(
  source: string,
  dest: string,
  options: BackupOptions = {},
): Promise<BackupResult> {
  checkOptionNames("back up database", options, BACKUP_OPTION_NAMES);
  options ??= {};
  if (!exists(source)) throw new OpenError(source, "no such file");
  if (statSync(source).isDirectory()) throw new OpenError(source, "it is a folder");
  assertMayRead(source);
  const openDriver = options.openDriver ?? await loadDriver();
  // The file is mid-transaction until a dead writer's journal is played back: a copy would
  // hold its half. A live writer's journal is only its transaction under way.
  if (deadWritersJournal(source, openDriver)) {
    throw new OpenError(source, leftoverJournalAdvice(source));
  }
  if (isDatabaseFile(dest, source)) {
    throw new BackupError(
      `Cannot back up: ${clippedText(dest)} is the database itself (or one of its files)`,
    );
  }
  const problem = outputPathProblem(dest);
  if (problem !== undefined) {
    throw new BackupError(`Cannot back up to ${clippedText(dest)}: ${problem}`);
  }
  // A device or a pipe: the copy is renamed into place, which would put a file where it was.
  if (statSync(dest, { throwIfNoEntry: false })?.isFile() === false) {
    throw new BackupError(
      `Cannot back up to ${
        clippedText(dest)
      }: it is not a regular file (a device or a pipe); give a file's path`,
    );
  }
  if (exists(dest) && !options.force) {
    throw new BackupError(
      `Cannot back up: ${clippedText(dest)} already exists (give --force to replace it)`,
    );
  }
  // SQLite deletes the -wal of a 0-byte file, even on a read-only open: refuse on stat.
  assertNotDamaged(source, openDriver, { probe: false });
  // A 0-byte file (no -wal: that case was refused above) holds nothing; SQLite would call it
  // a new, empty database and fail on its missing tables.
  if (statSync(source).size === 0) {
    throw new BackupError(
      `Cannot back up ${source}: the file is empty (0 bytes), not a Hermes database; ` +
        "there is nothing to back up (it was left as it was)",
    );
  }
  // Before any connection of this process holds the file: the -wal is read through a
  // descriptor of its own, whose close would drop such a connection's locks.
  const walCommitsLeftOut = walCommitsPastBreak(`${sqliteFilePath(source)}-wal`) ?? null;
  removeStaleTemps(dest, ["copy", "gz"]);
  let copy = newTemp(dest, "copy");
  try {
    await stopIfAborted(options.signal);
    // A file another process holds whole is waited for as the write commands wait.
    let attempts = 0;
    const counts = await retryWhileBusy(
      async () => {
        await stopIfAborted(options.signal);
        // What an attempt that met the lock may have begun is started again, empty.
        if (attempts++ > 0) copy = newTemp(dest, "copy");
        return await untilUnmoved(
          () => copyOnce(openDriver, source, copy, dest, options),
          async (ms) => {
            await stopIfAborted(options.signal);
            await abortableDelay(ms, options.signal);
            await stopIfAborted(options.signal);
            // The copy that a move spoilt is started again in a new file.
            rmSync(copy, { force: true });
            copy = newTemp(dest, "copy");
          },
        );
      },
      // Ctrl-C ends the wait at once, not at the next try.
      { timeoutMs: options.lockTimeoutMs, sleep: (ms) => abortableDelay(ms, options.signal) },
    );
    if (counts === undefined) {
      throw new BackupError(`Cannot back up ${source}: ${changedEachTimeReason("copies")}`);
    }
    await stopIfAborted(options.signal);
    options.onProgress?.("verifying", 0, 0);
    const verified = verify(openDriver, source, copy, counts, options.full ?? false);
    await stopIfAborted(options.signal);
    let bytes = statSync(copy).size;
    if (options.compress) {
      const gz = newTemp(dest, "gz");
      try {
        let done = 0;
        const input = createReadStream(copy); // the copy: no connection holds it any more
        input.on("data", (chunk) => {
          done += chunk.length;
          options.onProgress?.("compressing", done, bytes);
        });
        try {
          await pipeline(input, createGzip(), createWriteStream(gz, { flags: "w", mode: 0o600 }), {
            signal: options.signal,
          });
        } catch (error) {
          options.signal?.throwIfAborted(); // the signal's reason, not the stream's AbortError
          throw error;
        }
        await stopIfAborted(options.signal);
        publish(gz, dest, options.force ?? false);
      } finally {
        rmSync(gz, { force: true });
      }
      bytes = statSync(dest).size;
    } else {
      publish(copy, dest, options.force ?? false);
    }
    return {
      source,
      dest,
      bytes,
      compressed: options.compress ?? false,
      ...verified,
      walCommitsLeftOut,
    };
  } finally {
    removeWithSidecars(copy);
  }
}

/**
 * Copies `source` into the empty file `copy` (`VACUUM INTO`, one read
 * transaction), read as the read commands read: nothing changes, not even a
 * `-wal` left behind. A file read without locks (this user may not write it,
 * see `readsUnlocked`) may be written by its owner meanwhile,
 * which the read would not see: its state is compared before and after.
 *
 * @returns The session and message counts of the snapshot copied, `null`
 *   when another connection committed while it was read (they may be
 *   anything then: a delete lowers them), or `undefined` when a file read
 *   without locks changed meanwhile.
 */
function copyOnce(
  openDriver: SqliteDriver,
  source: string,
  copy: string,
  dest: string,
  options: BackupOptions,
): [number, number] | null | undefined {
  const access = chooseWholeReadAccess(source);
  const state = readsUnlocked(access, source) ? fileState(source) : undefined;
  // Asked before opening: the connection makes a -wal of its own, deleted at its close.
  const hadWal = hasWal(source);
  // A rollback-journal file is read read-only: a writer dying meanwhile leaves its journal.
  const db = openForReading(openDriver, source, access);
  let copying = false;
  try {
    // A try waits inside SQLite only as long as openForReading sets (short: a signal waits for
    // the try).
    assertStateDb(db, source);
    const version = dataVersion(db);
    const before: [number, number] = [count(db, "sessions"), count(db, "messages")];
    options.onProgress?.("copying", 0, 0);
    copying = true;
    db.prepare("VACUUM INTO ?").run(copy);
    copying = false;
    if (state !== undefined && fileState(source) !== state) return undefined;
    // Another connection's commit meanwhile: the copy's snapshot may lie anywhere among theirs.
    return dataVersion(db) === version ? before : null;
  } catch (error) {
    if (error instanceof BackupError || isBusyError(error)) throw error;
    if (state !== undefined && fileState(source) !== state) return undefined;
    if (error instanceof SqliteError && WRITE_FAILED.has(error.code) && copying) {
      // The source was read; writing the copy beside dest failed.
      const reason = error.code === 13 ? "the disk is full" : error.message;
      throw new BackupError(`Cannot back up to ${clippedText(dest)}: ${reason}`, { cause: error });
    }
    // A damaged file cannot be copied page for page: say what can still be saved, and how.
    // Anything else in words (a read-only folder whose -wal has no -shm beside it).
    const message = isCorruption(error)
      ? `${error.message}; ${recoverHint(source, hadWal)}`
      : openFailureReason(error, source, true);
    throw new OpenError(source, message, { cause: error });
  } finally {
    db.close();
  }
}

/**
 * Checks the copy: b-trees sound, and, when no other connection committed
 * while it was made, the source's row counts (`expected`; `null` when one
 * did: writers deleting and adding leave no bounds to check against).
 */
function verify(
  openDriver: SqliteDriver,
  source: string,
  copy: string,
  expected: [number, number] | null,
  full: boolean,
): { sessions: number; messages: number; ftsWarnings: string[]; searchIndexesChecked: boolean } {
  const db = openDriver(copy, { readonly: true });
  try {
    const integrity = integrityCheck(db, { full: true, searchIndexes: full });
    if (integrity.lines.length !== 1 || integrity.lines[0] !== "ok") {
      // The copy holds what the source gave: the damage is the source's, said in one line.
      const first = integrity.lines.join("\n").split("\n").map((line) => line.trim())
        .find((line) => line !== "" && !/^\*\*\* in database \w+ \*\*\*$/.test(line));
      throw new BackupError(
        `Cannot back up ${clippedText(source)}: its copy fails the integrity check (${
          first ?? "no detail"
        }): the file itself is damaged, and no backup was written; ${recoverHint(source)}`,
      );
    }
    const sessions = count(db, "sessions");
    const messages = count(db, "messages");
    if (expected !== null && (sessions !== expected[0] || messages !== expected[1])) {
      throw new BackupError(
        `Cannot back up: the copy holds ${groupedInteger(sessions)} sessions and ${
          groupedInteger(messages)
        } messages, the source ${groupedInteger(expected[0])} and ${groupedInteger(expected[1])}`,
      );
    }
    return {
      sessions,
      messages,
      ftsWarnings: Object.values(integrity.fts).flat(),
      searchIndexesChecked: full,
    };
  } finally {
    db.close();
  }
}
