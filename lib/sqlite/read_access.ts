/**
 * How a read-only open reaches a file so that it changes nothing: not the
 * file's bytes, not its journal mode, not its sidecars. SQLite's own
 * read-only mode creates a `-wal` and `-shm` beside a WAL file that has
 * none and, being unable to delete them, leaves them behind; a read-write
 * connection that never writes removes them again on its last close but,
 * being able to checkpoint, would fold a live `-wal` into the file. So the
 * choice depends on what is there.
 *
 * @module
 */
import { statSync } from "node:fs";
import { dirname } from "node:path";
import type {
  SqliteConnection,
  SqliteDriver,
  SqliteDriverOptions,
  SqliteStatement,
} from "./driver/types.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { present } from "./file_state.ts";
import { mayWrite } from "../files/may_write.ts";
import { holdSharedRead, readsShared } from "./shared_reads.ts";
import { SqliteError } from "./driver/sqlite_error.ts";

/**
 * How a read-only open reaches the file:
 * - `"shared"`: a read-write connection the store never writes through,
 *   for a file without a `-wal` that this user may write: the sidecars a
 *   WAL read needs are removed again when it closes, as after any Hermes
 *   process, but a `-wal` a writer left meanwhile is not checkpointed
 *   (`SharedReadConnection`). A file found in rollback-journal
 *   mode is opened `"readonly"` instead (`openConnection` and
 *   {@linkcode openForReading} ask), which can never play a dead writer's
 *   journal back. A second read of a file this
 *   thread already reads `"shared"` is `"shared"` too while the `-wal` that
 *   read made holds no frames, so the last of them to close removes it
 *   (`shared_reads.ts`).
 * - `"readonly"`: SQLite's read-only mode, for a file with a `-wal` (another
 *   connection may be live, and it must never be checkpointed or deleted
 *   by a reader) or a `-journal` (a writer's rollback journal, which a
 *   read-write connection would play back into the file), that this user
 *   may write or in a folder this user may not write. The sidecars are the
 *   writer's; this connection only reads them (see {@linkcode readsUnlocked}
 *   for a `-shm` it may not write).
 * - `"immutable"`: read-only without locks or sidecars, for a file this user
 *   may not write in a folder this user may write, whatever is beside it
 *   (SQLite's read-only mode would make a `-wal` and `-shm` of this user's
 *   whenever the owner's last connection deleted its own just before the
 *   read, which the owner's Hermes could then not write: it reads what the
 *   owner has checkpointed instead), and for a file without a `-wal` or
 *   `-journal` in a folder this user may not write (SQLite's read-only mode
 *   could not open it). Such a connection never looks at the file again:
 *   once the owner's Hermes writes, it answers from stale pages, or from a
 *   mix it reports as a malformed file. A connection that lives on compares
 *   `fileState` (`file_state.ts`) before each read and opens the file again
 *   when it moved, as `SessionDB` does.
 */
export type ReadAccess = "shared" | "readonly" | "immutable";

/**
 * Chooses how to open `path` read-only. Asks only `stat` and `access`,
 * never a descriptor (closing one would drop this process's locks).
 *
 * @param given The database file (it exists), or a link to it: the
 *   sidecars are looked for beside the file the link leads to, as SQLite
 *   keeps them there.
 * @returns The access to use.
 */
export function chooseReadAccess(given: string): ReadAccess {
  if (given === ":memory:") return "shared";
  const path = sqliteFilePath(given);
  const folder = mayWrite(dirname(path));
  // SQLite's read-only mode could make a -wal and -shm of this user's beside another's file.
  if (folder && !mayWrite(path)) return "immutable";
  if (present(`${path}-journal`)) return "readonly";
  if (present(`${path}-wal`)) {
    // An empty -wal beside a file this thread reads "shared" is the one that read made:
    // read-only, closed last, this connection could never remove it (see shared_reads.ts).
    return folder && readsShared(path) && !walHoldsFrames(path) ? "shared" : "readonly";
  }
  return folder ? "shared" : "immutable";
}

/** SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN: what making a sidecar where none may be fails with. */
const SIDECAR_REFUSED = new Set([8, 10, 14]);

/**
 * Whether a `"shared"` read of `given` failed because its folder refuses
 * the `-wal` and `-shm` such a read makes, though `access(2)` said it may
 * be written: root in a folder marked immutable (`chattr +i`), or a
 * read-only mount, which Deno's check (from the mode bits) and root's
 * capabilities do not see. Such a file, with no `-wal` or `-journal`
 * beside it, is read `"immutable"`, as one in a folder this user may not
 * write.
 *
 * @param error What the open, or its first read, threw (an `OpenError`'s cause is looked at).
 * @param given The database file, or a link to it.
 * @returns True when the file may be read `"immutable"` instead.
 */
export function sidecarsRefused(error: unknown, given: string): boolean {
  const cause = error instanceof SqliteError ? error : (error as Error | undefined)?.cause;
  if (!(cause instanceof SqliteError) || !SIDECAR_REFUSED.has(cause.code)) return false;
  if (given === ":memory:") return false;
  const path = sqliteFilePath(given);
  return !present(`${path}-wal`) && !present(`${path}-journal`);
}

/**
 * {@linkcode chooseReadAccess} for a copy that must hold every commit
 * (`backup`, `recover`): another user's file beside its `-wal`, in a folder
 * this user may write, is read through that `-wal` (SQLite's read-only
 * mode), not immutable, which would leave out every commit the `-wal` still
 * holds. The race the read commands avoid so is run then: were the owner's
 * last connection to delete its `-wal` just before the copy's first read,
 * SQLite would make a `-wal` and `-shm` of this user's, which the owner's
 * Hermes could not write.
 *
 * @param given The database file, or a link to it.
 * @returns The access to use.
 */
export function chooseWholeReadAccess(given: string): ReadAccess {
  const access = chooseReadAccess(given);
  if (access !== "immutable" || given === ":memory:") return access;
  return present(`${sqliteFilePath(given)}-wal`) ? "readonly" : access;
}

/**
 * Whether a connection opened with `access` reads without the locks that
 * keep a read whole while another process writes: `"immutable"` takes none,
 * and SQLite's read-only mode beside a `-shm` this user may not write keeps
 * its index of the `-wal` in its own memory, where the owner's checkpoints
 * do not wait for it (measured: a check then reported damage). Such a read
 * is compared with the file's state (`file_state.ts`) before and after. A
 * file without a `-shm` (a rollback-journal file) is read under SQLite's
 * locks.
 *
 * @param access How the file was opened.
 * @param given The database path, or a link to it.
 * @returns True when reads may come back torn.
 */
export function readsUnlocked(access: ReadAccess | "write", given: string): boolean {
  if (access === "immutable") return true;
  // No -shm: a rollback-journal file, read under SQLite's file locks.
  const shm = `${sqliteFilePath(given)}-shm`;
  return access === "readonly" && present(shm) && !mayWrite(shm);
}

/**
 * The driver options that open a file with `access` (`"write"`: as the agent
 * does).
 *
 * @param access A read access, or `"write"`.
 * @returns The options for the driver.
 */
export function driverOptionsFor(access: ReadAccess | "write"): SqliteDriverOptions {
  return {
    readonly: access === "readonly" || access === "immutable",
    immutable: access === "immutable",
  };
}

/** Whether the `-wal` beside the file holds frames (a writer's commits, perhaps not checkpointed). */
function walHoldsFrames(given: string): boolean {
  try {
    return statSync(`${sqliteFilePath(given)}-wal`).size > 0;
  } catch {
    return false;
  }
}

/**
 * A `"shared"` connection that never checkpoints on close. SQLite's last
 * connection to a WAL file checkpoints the `-wal` into the file and deletes
 * it when it closes; a `"shared"` connection was chosen for a file without a
 * `-wal` (or with the empty one another read of this thread made), but one
 * that lives on (`serve`, `show --follow`) may be the last
 * when a writer that started meanwhile dies. So when the `-wal` holds frames
 * at close, a read-only connection holds the file (SQLite checkpoints only
 * when no other connection does) until this one is closed: the `-wal` and
 * `-shm` are left as the writer left them.
 */
class SharedReadConnection implements SqliteConnection {
  readonly #db: SqliteConnection;
  readonly #path: string;
  readonly #openDriver: SqliteDriver;
  readonly #release: () => void;

  constructor(db: SqliteConnection, path: string, openDriver: SqliteDriver) {
    this.#db = db;
    this.#path = path;
    this.#openDriver = openDriver;
    this.#release = holdSharedRead(path);
  }

  get kind(): SqliteConnection["kind"] {
    return this.#db.kind;
  }

  exec(sql: string): void {
    this.#db.exec(sql);
  }

  prepare(sql: string): SqliteStatement {
    return this.#db.prepare(sql);
  }

  close(): void {
    try {
      this.#closeLeavingWritersWal();
    } finally {
      this.#release();
    }
  }

  #closeLeavingWritersWal(): void {
    if (!walHoldsFrames(this.#path)) return this.#db.close();
    let holder: SqliteConnection | undefined;
    try {
      holder = this.#openDriver(this.#path, driverOptionsFor("readonly"));
      holder.prepare("SELECT 1 FROM sqlite_master LIMIT 1").get();
    } catch {
      // Unreadable now: closing as SQLite does is all that is left.
    }
    try {
      this.#db.close();
    } finally {
      holder?.close();
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Opens `path` with `access` as every read must: a `"shared"` connection
 * comes wrapped in a `SharedReadConnection`, whose close never
 * checkpoints the `-wal` of a writer that started meanwhile. A plain
 * driver connection would fold that `-wal` into the file as the last to
 * close (`doctor`, `backup` and `recover` opened so).
 *
 * @param openDriver The driver.
 * @param path The database file.
 * @param access How to reach it, or `"write"` for a writer's connection.
 * @returns The connection; the driver's error when it cannot open.
 */
export function openWithAccess(
  openDriver: SqliteDriver,
  path: string,
  access: ReadAccess | "write",
): SqliteConnection {
  const db = openDriver(path, driverOptionsFor(access));
  return access === "shared" ? new SharedReadConnection(db, path, openDriver) : db;
}

/** How long a read opened by {@linkcode openForReading} waits for a lock, in milliseconds. */
export const READ_TRY_BUSY_MS = 250;

/**
 * {@linkcode openWithAccess} for a read that must leave the file as it was
 * even when a writer dies while it is open (`doctor`, `backup`, `recover`):
 * a `"shared"` connection to a file in rollback-journal mode is closed, and
 * the file opened `"readonly"` instead. A read-write connection would play
 * back into the file the journal of a writer that died in the middle of a
 * transaction after the open (its next read would roll the file back and
 * delete the journal); SQLite's read-only mode refuses that read instead
 * (`SQLITE_READONLY_ROLLBACK`, which the commands report by naming the
 * journal). The mode is asked of the `"shared"` connection itself, as
 * `openConnection` asks: a read-only one would make a `-wal` and `-shm`
 * beside a WAL file that has none, and leave them. A writer that dies in the
 * instant between the choice of access and that question is the one case
 * left. A mode that cannot be read for another reason (a damaged file) is
 * left for the caller's first read to report, on the connection as opened.
 * The connection comes back with a busy timeout of
 * {@linkcode READ_TRY_BUSY_MS} (the drivers' own differ: 5 s on Deno, none
 * on Node and Bun), so that the question waits as briefly on every runtime.
 *
 * @param openDriver The driver.
 * @param path The database file.
 * @param access How to reach it (`chooseReadAccess`), or `"write"`.
 * @returns The connection.
 * @throws {SqliteError} The driver's error when it cannot open, or a busy
 *   one when another process holds the whole file (a writer of a
 *   rollback-journal file writing its pages): nothing is left open, and the
 *   caller may wait and try again.
 */
export function openForReading(
  openDriver: SqliteDriver,
  path: string,
  access: ReadAccess | "write",
): SqliteConnection {
  let db: SqliteConnection;
  try {
    db = openWithAccess(openDriver, path, access);
  } catch (error) {
    // A folder that refuses the sidecars (sidecarsRefused): no writer can work there either.
    if (access !== "shared" || !sidecarsRefused(error, path)) throw error;
    return openAgain(openDriver, path, "immutable");
  }
  let wal: boolean;
  try {
    db.exec(`PRAGMA busy_timeout = ${READ_TRY_BUSY_MS}`);
    if (access !== "shared" || path === ":memory:") return db;
    wal = String(db.prepare("PRAGMA journal_mode").get()?.journal_mode).toLowerCase() === "wal";
  } catch (error) {
    if (error instanceof SqliteError && error.isBusy) {
      db.close();
      throw error;
    }
    if (!sidecarsRefused(error, path)) return db;
    db.close();
    return openAgain(openDriver, path, "immutable");
  }
  if (wal) return db;
  db.close();
  return openAgain(openDriver, path, "readonly");
}

/** `path` opened with `access`, waiting as {@linkcode openForReading}'s connections wait. */
function openAgain(
  openDriver: SqliteDriver,
  path: string,
  access: ReadAccess,
): SqliteConnection {
  const db = openWithAccess(openDriver, path, access);
  db.exec(`PRAGMA busy_timeout = ${READ_TRY_BUSY_MS}`);
  return db;
}
