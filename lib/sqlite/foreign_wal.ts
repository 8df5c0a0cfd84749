/**
 * Telling a `-wal` that belongs to another database (or to an older copy of
 * this one). SQLite cannot: it honours every frame whose salts and checksums
 * match the `-wal`'s own header, so another database's `-wal` beside a file
 * lays that database's pages over this one's, and a reader sees a mix of
 * both (a few rows, or "database disk image is malformed").
 *
 * A `-wal` of the file's own is the history that follows the file: the file
 * is the state before its first commit, or after one of its commits (a
 * checkpoint copies committed pages into the file). So:
 *
 * - its page size is the file's;
 * - when its first commit did not write page 1 (the header, which every
 *   commit that grows or shrinks the file writes), the file's page count
 *   is one its commits' size fields give;
 * - the schema cookie (bytes 40–43, which every schema change increments)
 *   of the last page 1 it holds is not below the file's;
 * - when that cookie equals the file's, no commit changed the schema, and
 *   `sqlite_master` reads the same through the `-wal` as in the file alone.
 *
 * Each test only ever refuses what breaks one of these; a `-wal` that
 * passes may still be another database's (one whose history happens to fit),
 * which no test of the headers can tell. A check that fails is run once
 * more, so that a checkpoint between the reads of the file and of its
 * `-wal` is not mistaken for a foreign `-wal`. The checks of the whole file
 * (`doctor`, `recover`) tell one more: a `-wal` through which a file that is
 * sound alone reads as damaged ({@linkcode soundWithoutWal}) is not its own,
 * as SQLite honours only the frames of its own commits, whose checksums
 * hold.
 *
 * The file is read through SQLite only (immutable, ignoring the `-wal`, and
 * read-only through it), never a descriptor of its own, which would drop
 * this process's locks on it when closed.
 *
 * @module
 */
import { statSync } from "node:fs";
import type { SqliteConnection, SqliteDriver } from "./driver/types.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import {
  chooseReadAccess,
  chooseWholeReadAccess,
  driverOptionsFor,
  openWithAccess,
} from "./read_access.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { readWalCommits, type WalCommits } from "./wal_commits.ts";
import { integrityCheck, isCorruption } from "./integrity.ts";

/** SQLITE_CORRUPT and SQLITE_NOTADB. */
const DAMAGED_CODES = new Set([11, 26]);

/** The main file as SQLite reads it without its `-wal`. */
interface FileAlone {
  readonly pageSize: number;
  readonly pageCount: number;
  readonly schemaCookie: number;
  readonly schema: string;
}

const HEADER_SQL = `SELECT
  (SELECT page_size FROM pragma_page_size) AS page_size,
  (SELECT page_count FROM pragma_page_count) AS page_count,
  (SELECT schema_version FROM pragma_schema_version) AS cookie`;

const SCHEMA_SQL = `SELECT group_concat(line, char(10)) AS schema FROM (
  SELECT type || ' ' || name || ' ' || tbl_name || ' ' || rootpage || ' ' || coalesce(sql, '')
    AS line FROM sqlite_master ORDER BY rowid)`;

function schemaOf(db: SqliteConnection): string {
  return String(db.prepare(SCHEMA_SQL).get()?.schema ?? "");
}

/** The file alone; `undefined` when SQLite cannot read it so (other checks report that). */
function readFileAlone(path: string, openDriver: SqliteDriver): FileAlone | undefined {
  let db: SqliteConnection;
  try {
    db = openDriver(path, driverOptionsFor("immutable"));
  } catch {
    return undefined;
  }
  try {
    const header = db.prepare(HEADER_SQL).get();
    return {
      pageSize: Number(header?.page_size),
      pageCount: Number(header?.page_count),
      schemaCookie: Number(header?.cookie),
      schema: schemaOf(db),
    };
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

/**
 * `sqlite_master` read through the `-wal`: its text, `"damaged"`, or
 * `undefined` when unreadable for another reason, or not read: beside
 * another user's file in a folder this user may write, SQLite's read-only
 * mode would make a `-wal` and `-shm` of this user's were the owner's `-wal`
 * deleted meanwhile (the reads there are immutable, and skip the `-wal`).
 */
function schemaThroughWal(path: string, openDriver: SqliteDriver): string | undefined {
  if (chooseReadAccess(path) === "immutable") return undefined;
  let db: SqliteConnection;
  try {
    db = openDriver(path, { readonly: true });
  } catch {
    return undefined;
  }
  try {
    return schemaOf(db);
  } catch (error) {
    return error instanceof SqliteError && DAMAGED_CODES.has(error.code) ? "damaged" : undefined;
  } finally {
    db.close();
  }
}

function sizesOf(wal: WalCommits): string {
  const sizes = [...new Set(wal.commits.map((c) => c.pageCount))].sort((a, b) => a - b);
  return sizes.length <= 3 ? sizes.join(", ") : `${sizes[0]} to ${sizes.at(-1)}`;
}

/** Which of the module's tests the pair breaks, in words; `undefined` when none. */
function mismatch(path: string, openDriver: SqliteDriver, walPath: string): string | undefined {
  const file = readFileAlone(path, openDriver);
  const wal = readWalCommits(walPath);
  if (file === undefined || wal === undefined || wal.commits.length === 0) return undefined;
  if (wal.pageSize !== file.pageSize) {
    return `its pages are ${wal.pageSize} bytes long, the file's ${file.pageSize}`;
  }
  const first = wal.commits[0];
  if (
    first.pageOne === undefined && !wal.commits.some((c) => c.pageCount === file.pageCount)
  ) {
    return `its commits are of a database of ${sizesOf(wal)} pages, the file has ${file.pageCount}`;
  }
  const lastPageOne = wal.commits.findLast((c) => c.pageOne !== undefined)?.pageOne;
  const cookie = lastPageOne?.schemaCookie ?? file.schemaCookie;
  if (cookie < file.schemaCookie) {
    return `its schema (version ${cookie}) is older than the file's (version ${file.schemaCookie})`;
  }
  if (cookie === file.schemaCookie) {
    const through = schemaThroughWal(path, openDriver);
    if (through === "damaged") {
      return "SQLite cannot read the file's schema through it, though it reads in the file alone";
    }
    if (through !== undefined && through !== file.schema) {
      return "the tables read through it differ from the file's, though no commit of it changed the schema";
    }
  }
  return undefined;
}

/**
 * Why the `-wal` beside `path` cannot be this file's, or `undefined` when
 * nothing shows it (no `-wal`, one without commits, one whose commits fit
 * the file, or a file SQLite cannot read alone).
 *
 * @param path The database file (it exists and is not empty).
 * @param openDriver The driver opener.
 * @returns The reason, naming the `-wal`, lower case.
 *
 * @example A file without a `-wal`
 * ```ts
 * import { loadDriver } from "./driver/load.ts";
 * import { foreignWalReason } from "./foreign_wal.ts";
 * const dir = await Deno.makeTempDir();
 * const open = await loadDriver();
 * const db = open(`${dir}/state.db`);
 * db.exec("CREATE TABLE t (x)");
 * db.close();
 * console.assert(foreignWalReason(`${dir}/state.db`, open) === undefined);
 * ```
 */
export function foreignWalReason(path: string, openDriver: SqliteDriver): string | undefined {
  const walPath = `${sqliteFilePath(path)}-wal`;
  // Twice: a checkpoint between the two reads of one check can make a file's own -wal look foreign.
  if (mismatch(path, openDriver, walPath) === undefined) return undefined;
  const why = mismatch(path, openDriver, walPath);
  if (why === undefined) return undefined;
  return `the -wal beside it (${walPath}) belongs to another database, or to an older copy ` +
    `of this one (${why}): SQLite would read that database's pages as this file's`;
}

/**
 * Whether SQLite finds the file sound read alone, without its `-wal`
 * (immutable): SQLite's b-tree checks (`quick_check`, or `integrity_check`
 * when `full`), without verifying the search indexes against their text.
 * Asked by the checks of the whole file when the file read through its
 * `-wal` was found damaged: a file sound alone that a `-wal` spoils has
 * another database's `-wal` beside it, or one of an older copy of itself.
 *
 * @param path The database file.
 * @param openDriver The driver opener.
 * @param full Run `integrity_check` instead of `quick_check`.
 * @returns True when the file alone passes; false when it does not, or
 *   cannot be read so.
 */
export function soundWithoutWal(path: string, openDriver: SqliteDriver, full = false): boolean {
  let db: SqliteConnection;
  try {
    db = openDriver(path, driverOptionsFor("immutable"));
  } catch {
    return false;
  }
  try {
    const { lines } = integrityCheck(db, { full, searchIndexes: false });
    return lines.length === 1 && lines[0] === "ok";
  } catch (error) {
    if (isCorruption(error)) return false;
    throw error;
  } finally {
    db.close();
  }
}

/**
 * What the checks of the whole file say of a `-wal` that spoils a file
 * sound alone ({@linkcode soundWithoutWal}).
 *
 * @param walPath The `-wal`.
 * @returns The reason, naming the `-wal`, lower case.
 */
export function spoilingWalReason(walPath: string): string {
  return `the -wal beside it (${walPath}) belongs to another database, or to an older copy ` +
    "of this one: the file alone is sound, and SQLite reads it as damaged through that -wal";
}

/**
 * For the checks of a file found damaged reading it as the read commands
 * do: why the `-wal` it was read through spoils it (the file alone is
 * sound), or `undefined` when it was read without one (none there, an
 * empty one, or immutable) or is damaged alone too.
 *
 * @param path The database file.
 * @param openDriver The driver opener.
 * @param full The checks ran `integrity_check` (then so does the file alone).
 * @returns The reason, naming the `-wal`, lower case.
 */
export function walSpoilingDamage(
  path: string,
  openDriver: SqliteDriver,
  full: boolean,
): string | undefined {
  if (path === ":memory:" || chooseReadAccess(path) === "immutable") return undefined;
  const walPath = `${sqliteFilePath(path)}-wal`;
  if ((statSync(walPath, { throwIfNoEntry: false })?.size ?? 0) === 0) return undefined;
  return soundWithoutWal(path, openDriver, full) ? spoilingWalReason(walPath) : undefined;
}

/**
 * Why the `-wal` beside `path` cannot be this file's, told by what SQLite
 * reads of the whole file: damaged through the `-wal`, sound alone (two
 * b-tree checks at most, the second only when the first fails; for
 * `recover`, which reads the whole file anyway). `undefined` when the file
 * reads sound through its `-wal`, is damaged alone too, has no `-wal`, or
 * is read without it anyway (immutable).
 *
 * @param path The database file.
 * @param openDriver The driver opener.
 * @returns The reason, naming the `-wal`, lower case.
 */
export function spoilingWal(path: string, openDriver: SqliteDriver): string | undefined {
  const walPath = `${sqliteFilePath(path)}-wal`;
  const access = chooseWholeReadAccess(path);
  if (access === "immutable") return undefined;
  let db: SqliteConnection;
  try {
    db = openWithAccess(openDriver, path, access);
  } catch {
    return undefined; // unreadable either way: the rest of recover reads what it can
  }
  let sound: boolean;
  try {
    const { lines } = integrityCheck(db, { searchIndexes: false });
    sound = lines.length === 1 && lines[0] === "ok";
  } catch (error) {
    if (!isCorruption(error)) throw error;
    sound = false;
  } finally {
    db.close();
  }
  return sound || !soundWithoutWal(path, openDriver) ? undefined : spoilingWalReason(walPath);
}
