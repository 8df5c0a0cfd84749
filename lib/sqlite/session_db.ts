/**
 * `SessionDB`: the session store the agent holds. Each method delegates to
 * the module of its concept; no SQL lives here. The full contract of every
 * method is documented here, on the public API.
 *
 * @module
 */
import type { SqliteDriver } from "./driver/types.ts";
import { type ConnectionOptions, openConnectionWith, type Synchronous } from "./open.ts";
import { loadDriver } from "./driver/load.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import { fileState, fileWritten, UNLOCKED_RETRY_PAUSES_MS } from "./file_state.ts";
import { readsUnlocked } from "./read_access.ts";
import { type Opened, StoreSlot } from "./store_slot.ts";
import { defaultDbPath } from "../core/paths.ts";
import { StorageError } from "../core/storage_error.ts";
import { Store } from "./store.ts";
import { type RetryOptions, sleepSync } from "./write.ts";
import type {
  ConversationMessage,
  MessageRow,
  ModelUsage,
  NewMessage,
  RichSessionRow,
  SearchHit,
  SessionExport,
  SessionExportWithActivity,
  SessionRow,
  SessionRowWithActivity,
  SessionTokens,
} from "../core/types.ts";
import * as sessions from "./sessions.ts";
import * as tokens from "./tokens.ts";
import * as messages from "./messages.ts";
import * as conversation from "./conversation.ts";
import * as titles from "./titles.ts";
import * as lineage from "./lineage.ts";
import * as listing from "./listing.ts";
import * as search from "./search/search.ts";
import * as exporting from "./export.ts";
import * as prune from "./prune.ts";
import * as meta from "./meta.ts";
import * as stats from "./stats.ts";
import * as importing from "./import.ts";
import { inOneRead } from "./one_read.ts";
import { blobAsText, rowsWithBlobsAsText, withBlobsAsText } from "../core/blob_text.ts";
import * as inspecting from "./inspect.ts";
import * as sourceUsage from "./source_usage.ts";
import * as pruneCandidates from "./prune_candidates.ts";
import * as usage from "./usage_report.ts";
import { readSessionModelUsage, readsSessionModelUsage } from "./session_model_usage.ts";
import type { SessionModelUsage } from "../core/session_model_usage.ts";
import * as version from "./data_version.ts";
import type { SourceUsage, UsageReportOptions, UsageRow } from "../core/usage.ts";
import {
  checkKeyText,
  checkOptionalText,
  checkSearchFilters,
  CONVERSATION_OPTION_NAMES,
  type ConversationOptions,
  type CreateSessionOptions,
  type EnsureSessionOptions,
  type MessagesOptions,
  type TokenCountsUpdate,
} from "../core/session_options.ts";
import type {
  AutoPruneOptions,
  AutoPruneResult,
  PruneCandidate,
  PruneCandidatesOptions,
  PruneOptions,
  SessionsDirOptions,
} from "../core/prune_options.ts";
import {
  LIST_SESSIONS_OPTION_NAMES,
  type ListSessionsOptions,
  PREFIX_OPTION_NAMES,
  type PrefixMatches,
  SEARCH_SESSIONS_OPTION_NAMES,
  type SearchSessionsOptions,
  SESSION_COUNT_OPTION_NAMES,
  type SessionCountOptions,
} from "../core/listing_options.ts";
import type { SearchOptions } from "../core/search/options.ts";
import {
  EXPORT_OPTION_NAMES,
  type ExportOptions,
  IMPORT_OPTION_NAMES,
  type ImportOptions,
  type ImportResult,
  type ParentLink,
} from "../core/transfer_options.ts";
import { describeValue } from "../core/shown_value.ts";
import { isPostgresTarget, notAStoreReason, sqlitePath } from "../core/store_target.ts";
import { OpenError } from "../core/errors.ts";
import { checkOptionNames, type OptionNames } from "../core/option_names.ts";
import {
  type DatabaseInfo,
  INSPECT_OPTION_NAMES,
  type InspectOptions,
} from "../core/database_info.ts";

/** Options of {@linkcode SessionDB.open}. */
export interface SessionDBOptions {
  /**
   * The database file (`sqlite:PATH` is read as PATH; a URL is refused).
   * @default {"$HERMES_HOME/state.db, else ~/.hermes/state.db (on Windows: hermes/state.db in %LOCALAPPDATA%)"}
   */
  path?: string;
  /**
   * Open without creating or changing anything: no schema step, no write
   * lock, no byte of the file or its sidecars changed (an older file is read
   * as it is; a file without the Hermes tables is refused with
   * `NotStateDbError`). Every write method throws.
   * @default {false}
   */
  readonly?: boolean;
  /**
   * `"full"` syncs every commit; `"normal"` is faster and still safe against
   * a process crash, but a power loss may lose the last commits.
   * @default {"full"}
   */
  synchronous?: Synchronous;
  /** Busy-retry settings (tests inject `sleep` and `random`). */
  retry?: RetryOptions;
  /** Seconds since the epoch, as a float (tests inject a fixed clock). */
  clock?: () => number;
  /** The driver opener; the running runtime's by default. */
  openDriver?: SqliteDriver;
}

/**
 * The options of {@linkcode SessionDB.open}, checked by name: a misspelt one
 * would open another file, or open it for writing.
 */
const OPEN_OPTION_NAMES: OptionNames<SessionDBOptions> = {
  path: true,
  readonly: "boolean",
  synchronous: true,
  retry: true,
  clock: true,
  openDriver: true,
};

/** What only {@linkcode SessionDB.open} hands the constructor. */
const OPENED = Symbol("SessionDB.open");

/** How often a read-only store read with locks looks for a file put in its place or over it. */
const WRITTEN_LOOK_MS = 100;

/** The store behind each open {@linkcode SessionDB} (for the asynchronous store). */
const SLOTS = new WeakMap<SessionDB, StoreSlot>();

/** The slots of the `SessionDB`s closed by their `close()`. */
const CLOSED = new WeakSet<StoreSlot>();

/**
 * `slot`, unless its `SessionDB` was closed: then the same error on every
 * runtime, whether or not the method's statement was cached before (a
 * cached one would say `statement has been finalized`).
 */
function openSlot(slot: StoreSlot): StoreSlot {
  if (CLOSED.has(slot)) throw new SqliteError("database is not open", 21, { extendedCode: 21 });
  return slot;
}

/**
 * `iteration`, each step checked first as a method call is: resumed after
 * `close()`, it throws `database is not open` on every runtime (Bun's
 * driver would say `Statement has finalized`), and lets its pin go.
 */
function* whileOpen<T>(slot: StoreSlot, iteration: Generator<T>): Generator<T> {
  try {
    for (;;) {
      openSlot(slot);
      const step = iteration.next();
      if (step.done) return;
      yield step.value;
    }
  } finally {
    iteration.return(undefined);
  }
}

/** The slot of the store behind `db`, for the helpers below. */
function slotOf(db: SessionDB): StoreSlot {
  const slot = SLOTS.get(db);
  if (slot === undefined) throw new TypeError("Cannot find the store of a SessionDB");
  return slot;
}

/**
 * The internal store behind `db`, current (opened again when the file of an
 * immutable read-only store changed); for the modules of this library only
 * (not exported from `mod.ts`).
 *
 * @param db An open database.
 * @returns Its store.
 */
export function storeOf(db: SessionDB): Store {
  return openSlot(slotOf(db)).current();
}

/**
 * The internal store behind `db`, kept open on its connection until
 * {@linkcode unpinStore} (a file opened again meanwhile does not close it):
 * for a snapshot held across calls; for the modules of this library only.
 * A store read without locks is not pinned (`undefined`): nothing holds its
 * pages still, so each call reads the file as it is then.
 *
 * @param db An open database.
 * @returns The pinned store, or `undefined`.
 */
export function pinStore(db: SessionDB): Store | undefined {
  const slot = openSlot(slotOf(db));
  return slot.readsUnlocked ? undefined : slot.pin();
}

/**
 * Lets go of a store of {@linkcode pinStore}.
 *
 * @param db The database.
 * @param store The pinned store.
 */
export function unpinStore(db: SessionDB, store: Store): void {
  slotOf(db).unpin(store);
}

/**
 * Runs `read` on the internal store behind `db` as its own read methods run
 * theirs: on a file read without locks, again on the file opened anew when
 * it failed while the file moved (see `StoreSlot.read`); for the modules of
 * this library only.
 *
 * @param db An open database.
 * @param read The read, given the store it runs on.
 * @returns Its answer.
 * @throws {OpenError} When the file moved during every try.
 */
export function storeRead<T>(db: SessionDB, read: (store: Store) => T): T {
  return openSlot(slotOf(db)).read(read);
}

/**
 * Runs `read` on the internal store behind `db` as one whole read: on a file
 * read without locks, again when the file moved while it ran (see
 * `StoreSlot.steady`); for the modules of this library only.
 *
 * @param db An open database.
 * @param read The read, given the store it runs on.
 * @returns Its answer.
 * @throws {OpenError} When the file moved during every try.
 */
export function steadyRead<T>(db: SessionDB, read: (store: Store) => T): T {
  return slotOf(db).steady(read);
}

/**
 * The Hermes session store over one `state.db` file, shared safely with
 * other processes (Python Hermes included). {@linkcode SessionDB.open} is
 * the one asynchronous call; every method after it is synchronous, as the
 * Python API is.
 *
 * Records keep the file's snake_case column names, so a JSON export is
 * interchangeable with Python's, and carry every column, including those a
 * newer Hermes added. "Not found" is `undefined`; a NULL column is `null`.
 * Timestamps are Unix seconds (REAL); messages are ordered by
 * `timestamp, id` everywhere.
 *
 * Every write is one `BEGIN IMMEDIATE … COMMIT` transaction, rolled back on
 * any error: it happens completely or not at all. While another connection
 * holds the write lock, the write is tried again after a random 20–150 ms
 * pause, 15 attempts at most, then fails with `WriteBusyError`; any other
 * failure is thrown at once. A method called after `close()` throws a
 * `SqliteError` (`database is not open`); the `path` and `readonly`
 * getters still answer.
 *
 * Options are checked by name, as Python checks keyword arguments: an
 * option a method does not take is a `TypeError` naming it and the one
 * probably meant, before anything is read or written (ignored, a misspelt
 * one would drop a value, widen a filter or prune more than asked). One of
 * `null` or `undefined` counts as not given, whatever its name.
 *
 * @example Recording and searching a conversation
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli", { model: "gpt-5" });
 * db.appendMessage("s1", { role: "user", content: "How do I prune docker images?" });
 * assert.equal(db.getMessages("s1").length, 1);
 * assert.equal(db.searchMessages("docker")[0].session_id, "s1");
 * ```
 */
export class SessionDB {
  readonly #slot: StoreSlot;

  private constructor(slot: StoreSlot, opened?: typeof OPENED) {
    // From JavaScript (or a `deno run` that checks no types) `new SessionDB(path)`, Python's
    // spelling, would otherwise fail at the first call with an error that says nothing of this.
    if (opened !== OPENED) {
      throw new TypeError(
        "SessionDB has no public constructor: open a file with `await SessionDB.open({ path })`",
      );
    }
    this.#slot = slot;
    SLOTS.set(this, slot);
  }

  /** The store to read and write through (see `store_slot.ts`). */
  get #store(): Store {
    return openSlot(this.#slot).current();
  }

  /**
   * Runs one call's read on the current store: where the file is read
   * without locks, again on the file opened anew when it failed while the
   * owner wrote (`StoreSlot.read`).
   */
  #read<T>(read: (store: Store) => T): T {
    return openSlot(this.#slot).read(read);
  }

  /**
   * Opens a database file: creates it (and its missing folders, mode 0700)
   * when missing (`:memory:` opens a private in-memory database), sets
   * WAL mode, foreign keys and the busy timeout, and runs the schema step of
   * SPEC §2 (creates the tables, adds the columns an older file lacks,
   * upgrades a version 1–10 file to 11). A file of a newer schema (a newer
   * Hermes wrote it) is left as it is: no downgrade, no error, its extra
   * columns are returned by the getters. A new file and its `-wal` and
   * `-shm` get mode 0600.
   *
   * A writable open runs the schema step on any SQLite file, so it adds the
   * Hermes tables to another application's database (the CLI refuses such a
   * file first). With `readonly: true` nothing is created or changed: no
   * schema step, no write lock, no byte of the file or its sidecars; an
   * older file is read through views with the columns the upgrade would
   * add, and a missing file is an error. Another user's file (one this
   * user may not write) in a folder this user may write is then read
   * without locks (SQLite's read-only mode could leave a `-wal` and `-shm`
   * of this user's there, which the owner's Hermes could not write), so it
   * shows what the owner has checkpointed; so is a file in a folder this
   * user may not write, when no `-wal` is beside it. Since such a
   * connection cannot see another process write, each call first compares
   * the file's `stat` (and its `-wal`'s) with the one taken at the open,
   * and opens the file again when it moved; any read-only store opens the
   * file again when another is put in its place.
   *
   * @param options The file and settings: `path`, `readonly`,
   *   `synchronous`, `retry`, `clock`, `openDriver` (see
   *   {@linkcode SessionDBOptions}); or the path alone, as in
   *   `SessionDB.open("state.db")`.
   * @returns The open store; close it with `close()` or `using`.
   * @throws {OpenError} When the path is empty or a folder, the file is not SQLite or
   *   is damaged (left exactly as it was), it or its folder may not be
   *   written, the disk is full, or (read-only) the file does not exist;
   *   `kind` tells which (`io`, `corrupt`, `readonly`, `full`, `not_found`).
   *   Also when the path is a URL (`postgres://…`, which `openStore` opens,
   *   `file:…`, `sqlite://…`), before anything is created; `sqlite:PATH` is
   *   read as PATH, as `openStore` reads it.
   * @throws {NotStateDbError} When a read-only open finds no `sessions` or
   *   no `messages` table.
   * @throws {WriteBusyError} When another connection kept the file locked
   *   through every attempt (`retry`) of reading it or of the schema step,
   *   read-only included; a process holding the whole file, as a WAL
   *   recovery does, is waited out as long as a write would be (nothing was
   *   changed; try again later).
   * @throws {RangeError} When `synchronous` is not `"full"` or `"normal"`,
   *   `retry.busyTimeoutMs` is not a non-negative integer, `retry.maxAttempts`
   *   not a positive one, or a retry delay not a non-negative number (the
   *   message names the value); nothing is created.
   * @throws {TypeError} When `path` is given and is not a string, naming the
   *   value; when `options` is neither an object nor a string, or holds an
   *   option that is not one of those above, naming it (a misspelt
   *   `readOnly` would open the file for writing, a misspelt `path` another
   *   file); nothing is created.
   *
   * @example Opening, reopening read-only
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * const path = `${dir}/hermes/state.db`;
   * {
   *   using db = await SessionDB.open({ path, synchronous: "normal" });
   *   db.createSession("s1", "cli");
   * }
   * using reader = await SessionDB.open({ path, readonly: true });
   * assert.equal(reader.readonly, true);
   * assert.equal(reader.getSession("s1")?.source, "cli");
   * ```
   *
   * @example A read-only open never creates a file
   * ```ts
   * import assert from "node:assert/strict";
   * import { OpenError } from "../core/errors.ts";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * await assert.rejects(
   *   SessionDB.open({ path: `${dir}/missing.db`, readonly: true }),
   *   (error) => error instanceof OpenError && error.kind === "not_found",
   * );
   * ```
   */
  static async open(options: SessionDBOptions | string = {}): Promise<SessionDB> {
    options ??= {};
    if (typeof options === "string") options = { path: options };
    checkOptionNames("open database", options, OPEN_OPTION_NAMES);
    const given = options.path ?? defaultDbPath();
    if (typeof given !== "string") {
      throw new TypeError(
        `Cannot open database: path must be a file path (a string): current value is ${
          describeValue(given)
        }`,
      );
    }
    // Opened as a path, a URL would make a folder tree of its name (`postgres:/user@host/db`).
    if (isPostgresTarget(given)) {
      throw new OpenError(
        given,
        "a PostgreSQL store opens with openStore(url); SessionDB opens a state.db file",
      );
    }
    const notFile = notAStoreReason(given);
    if (notFile !== undefined) throw new OpenError(given, notFile);
    const path = sqlitePath(given);
    const readonly = options.readonly ?? false;
    const openDriver = options.openDriver ?? await loadDriver();
    const settings: ConnectionOptions = {
      path,
      readonly,
      synchronous: options.synchronous,
      retry: options.retry,
    };
    const connect = (): Opened => {
      for (let tries = 1;; tries++) {
        // Taken before the open: a change while it runs is seen at the next call.
        const state = readonly ? fileState(path) : undefined;
        const written = readonly ? fileWritten(path) : undefined;
        try {
          const { db, writer, access } = openConnectionWith(openDriver, settings);
          const store = new Store(db, writer, { path, readonly, clock: options.clock });
          if (state === undefined || written === undefined) return { store, watched: undefined };
          // Without locks, every write is looked for. With them, SQLite sees commits, but neither
          // a new file nor pages written over its own behind its locks (a backup copied over):
          // the file is opened again then, and after a checkpoint (a write of its pages too).
          if (readsUnlocked(access, path)) return { store, watched: { by: fileState, was: state } };
          return { store, watched: { by: fileWritten, was: written, everyMs: WRITTEN_LOOK_MS } };
        } catch (error) {
          // A read-only open while another process writes the file may fail for a moment: its
          // reads (the schema) meet the owner's checkpoint when read without locks, and fail as a
          // damaged file would; or it lands between the owner's -wal and -shm (made, or removed,
          // one after the other), a WAL file this user cannot read in a read-only folder. Opened
          // again while the file moves; a lock is waited for where it is met, not here.
          const pause = UNLOCKED_RETRY_PAUSES_MS[tries - 1];
          const busy = error instanceof StorageError && error.kind === "busy";
          if (state === undefined || busy || pause === undefined || fileState(path) === state) {
            throw error;
          }
          sleepSync(pause);
        }
      }
    };
    return new SessionDB(new StoreSlot(connect(), connect), OPENED);
  }

  /**
   * The database file path, as given to {@linkcode SessionDB.open} (without
   * a `sqlite:` prefix), or the default.
   */
  get path(): string {
    return this.#slot.held.path;
  }

  /** True when opened with `readonly: true`: every write method then throws `ReadonlyError`. */
  get readonly(): boolean {
    return this.#slot.held.readonly;
  }

  /**
   * Checkpoints the WAL and closes the connection. The checkpoint is best
   * effort and never waits: a `-wal` of 4 MiB or more is emptied (TRUNCATE)
   * when no other connection is reading or writing at that moment, else a
   * passive checkpoint runs; a failed checkpoint is ignored. A read-only
   * store checkpoints nothing. A second call does nothing.
   *
   * @throws {SqliteError} When the connection cannot be closed.
   *
   * @example Closing twice
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * const db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.close();
   * db.close(); // does nothing
   * assert.throws(() => db.getSession("s1"), /not open/);
   * ```
   */
  close(): void {
    CLOSED.add(this.#slot);
    this.#slot.close();
  }

  /** Same as {@linkcode SessionDB.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  // ── Sessions ────────────────────────────────────────────────────────────

  /**
   * Creates a session, as Python's `create_session` does: `INSERT OR
   * IGNORE`, so an existing row is left untouched (the first write wins,
   * and a second call with other values changes nothing and does not
   * fail). `started_at` is the store's clock; an empty `modelConfig` (`{}`,
   * `[]`) is stored as NULL, any other as JSON text with Python's
   * separators.
   *
   * @param id The session id, e.g. `20260420_090000_994beb`.
   * @param source Where it runs: `cli`, `telegram`, `discord`, `tool`, `cron`…
   * @param options `model`, `modelConfig`, `systemPrompt`, `userId` and
   *   `parentSessionId`, which must name an existing session (see
   *   {@linkcode CreateSessionOptions}).
   * @returns The id.
   * @throws {SqliteError} Of `kind` `constraint` when `parentSessionId`
   *   names a session that does not exist, saying so (`FOREIGN KEY constraint
   *   failed: cannot create session "s2": no parent session "nope"`); nothing
   *   is written. Other storage failures at once, nothing written.
   * @throws {TypeError} When `modelConfig` holds a circular reference.
   * @throws {TypeError} When `id` or `source` is not a string, naming the value.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {TypeError} When `userId`, `model` or `systemPrompt` is neither text, a number nor
   *   null, or `parentSessionId` neither a string nor null, or the session's own id (such a
   *   session would leave every listing), naming the value; nothing is written.
   * @throws {TypeError} When `options` holds an option that is not one of
   *   {@linkcode CreateSessionOptions}'s (Python's `system_prompt` would be
   *   dropped), naming it; nothing is written.
   *
   * @example Creating a child session; the first write wins
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.createSession("s2", "cli", { parentSessionId: "s1", modelConfig: { effort: "high" } });
   * db.createSession("s2", "telegram"); // ignored: the row exists
   * const row = db.getSession("s2")!;
   * assert.equal(row.source, "cli");
   * assert.equal(row.model_config, '{"effort": "high"}');
   * ```
   *
   * @example A missing parent is refused
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteError } from "./driver/sqlite_error.ts";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * assert.throws(
   *   () => db.createSession("s2", "cli", { parentSessionId: "nope" }),
   *   (error) => error instanceof SqliteError && error.kind === "constraint",
   * );
   * assert.equal(db.getSession("s2"), undefined);
   * ```
   */
  createSession(id: string, source: string, options: CreateSessionOptions = {}): string {
    return sessions.createSession(this.#store, id, source, options);
  }

  /**
   * Makes sure a session row exists, as Python's `ensure_session` does (the
   * agent calls it when a `createSession` failed under lock contention, so
   * that messages and token counts still have a session). The same
   * `INSERT OR IGNORE` as {@linkcode SessionDB.createSession}: an existing
   * row is left as it is.
   *
   * @param id The session id.
   * @param source Its source.
   * @param options `model` (see {@linkcode EnsureSessionOptions}).
   * @returns The id.
   * @throws {TypeError} When `id` or `source` is not a string, naming the
   *   value, or `options` holds another option than `model`, naming it.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {SqliteError} On any other storage failure, at once, with nothing written.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.ensureSession("s1");
   * db.ensureSession("s1", "cli", { model: "gpt-5" }); // the row exists: unchanged
   * const row = db.getSession("s1")!;
   * assert.equal(row.source, "unknown");
   * assert.equal(row.model, null);
   * ```
   */
  ensureSession(
    id: string,
    source = "unknown",
    options: EnsureSessionOptions = {},
  ): string {
    return sessions.ensureSession(this.#store, id, source, options);
  }

  /**
   * Ends a session that is not ended yet, setting `ended_at` (the store's
   * clock) and `end_reason`. A session already ended keeps its first end
   * time and reason (call {@linkcode SessionDB.reopenSession} first to end
   * it again). An unknown id changes nothing and does not fail.
   *
   * @param id The session id.
   * @param endReason Why it ended: `compression` and `branched` link the
   *   session to its continuation (see {@linkcode SessionDB.getCompressionTip}
   *   and {@linkcode SessionDB.listSessionsRich}); `cli_close`, `user_exit`…
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {SqliteError} On any other storage failure, at once, with nothing written.
   * @throws {TypeError} When `id` is not a string, or `endReason` neither text, a number nor
   *   null, naming the value; nothing is written.
   *
   * @example The first end reason stays
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.endSession("s1", "compression");
   * db.endSession("s1", "cli_close");
   * assert.equal(db.getSession("s1")!.end_reason, "compression");
   * ```
   */
  endSession(id: string, endReason: string): void {
    sessions.endSession(this.#store, id, endReason);
  }

  /**
   * Clears the end time and reason of a session so it can be resumed (and
   * ended again). An unknown id changes nothing and does not fail.
   *
   * @param id The session id.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {SqliteError} On any other storage failure, at once, with nothing written.
   * @throws {TypeError} When `id` is not a string, naming the value; nothing is written.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.endSession("s1", "cli_close");
   * db.reopenSession("s1");
   * const row = db.getSession("s1")!;
   * assert.equal(row.ended_at, null);
   * assert.equal(row.end_reason, null);
   * ```
   */
  reopenSession(id: string): void {
    sessions.reopenSession(this.#store, id);
  }

  /**
   * Replaces the stored system prompt of a session (the full assembled
   * prompt). An unknown id changes nothing and does not fail.
   *
   * @param id The session id.
   * @param prompt The new prompt.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {SqliteError} On any other storage failure, at once, with nothing written.
   * @throws {TypeError} When `id` is not a string, or `prompt` neither text, a number nor null,
   *   naming the value; nothing is written.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli", { systemPrompt: "draft" });
   * db.updateSystemPrompt("s1", "You are Hermes.");
   * assert.equal(db.getSession("s1")!.system_prompt, "You are Hermes.");
   * ```
   */
  updateSystemPrompt(id: string, prompt: string): void {
    sessions.updateSystemPrompt(this.#store, id, prompt);
  }

  /**
   * Reads one session with every column, including columns a newer Hermes
   * added (`archived`…), as the file stores them (`model_config` stays JSON
   * text).
   *
   * @param id The session id (exact; see {@linkcode SessionDB.resolveSessionId}
   *   for a prefix).
   * @returns The row, or `undefined` when there is no such session.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `id` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli", { model: "gpt-5" });
   * assert.equal(db.getSession("s1")?.model, "gpt-5");
   * assert.equal(db.getSession("nope"), undefined);
   * ```
   */
  getSession(id: string): SessionRow | undefined {
    const row = this.#read((store) => sessions.getSession(store, id));
    return row === undefined ? undefined : withBlobsAsText(row);
  }

  /**
   * Adds (by default) or sets (`absolute: true`) the token counts and cost
   * of a session, as Python's `update_token_counts` does:
   *
   * - the five token counters add up, or are set (an omitted one counts as 0);
   * - `estimated_cost_usd` becomes a number on every call (a missing
   *   estimate adds 0, or in absolute mode resets it to 0);
   * - `actual_cost_usd` stays NULL until one is given, then adds up (or is set);
   * - `costStatus`, `costSource`, `pricingVersion`: the latest non-null wins;
   * - `billingProvider`, `billingBaseUrl`, `billingMode` and `model`: filled
   *   only while NULL (the first non-null wins);
   * - `apiCallCount` adds up, or in absolute mode is set (an omitted one
   *   resets it to 0); nothing else changes `api_call_count`.
   *
   * A missing session row is first created (source `"unknown"`, the given
   * model) in the same transaction, so counts are never lost.
   *
   * In a file of a newer Hermes that keeps per-model usage rows
   * (`session_model_usage`), an update that adds something (not `absolute`,
   * with tokens, calls or an estimated cost) is also added to the row of its
   * model and billing route, in the same transaction, as that Hermes does:
   * the call's `model`, `billingProvider`, `billingBaseUrl` and `billingMode`,
   * each (when missing or empty) the session's, else `"unknown"` for the
   * model and `""` for the others. Cumulative totals are not split by model.
   *
   * @param id The session id.
   * @param update `inputTokens`, `outputTokens`, `cacheReadTokens`,
   *   `cacheWriteTokens`, `reasoningTokens`, `model`, `estimatedCostUsd`,
   *   `actualCostUsd`, `costStatus`, `costSource`, `pricingVersion`,
   *   `billingProvider`, `billingBaseUrl`, `billingMode`, `apiCallCount`
   *   and `absolute` (see {@linkcode TokenCountsUpdate}).
   * @throws {TypeError} When `id` is not a string, a count or a cost not a
   *   finite number or a text field not a string (a `NaN` would empty the
   *   counter for good); the error names the field and its value. Also when
   *   `update` holds a field that is not one of {@linkcode TokenCountsUpdate}'s
   *   (Python's `input_tokens` would be dropped, a misspelt `absolute` would
   *   add totals), naming it. Nothing is written.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {SqliteError} On any other storage failure, at once, with nothing written.
   *
   * @example Incremental and cumulative updates
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.updateTokenCounts("s1", { inputTokens: 1200, outputTokens: 300, apiCallCount: 1 });
   * db.updateTokenCounts("s1", { inputTokens: 800, billingProvider: "openai", apiCallCount: 1 });
   * db.updateTokenCounts("s1", { billingProvider: "other" }); // the first provider stays
   * let row = db.getSession("s1")!;
   * assert.equal(row.input_tokens, 2000);
   * assert.equal(row.api_call_count, 2);
   * assert.equal(row.billing_provider, "openai");
   * assert.equal(row.actual_cost_usd, null);
   * db.updateTokenCounts("s1", { inputTokens: 5000, outputTokens: 900, absolute: true });
   * row = db.getSession("s1")!;
   * assert.equal(row.input_tokens, 5000);
   * assert.equal(row.api_call_count, 0);
   * ```
   *
   * @example Counts for a session that was never created
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.updateTokenCounts("lost", { outputTokens: 42, model: "gpt-5" });
   * const row = db.getSession("lost")!;
   * assert.equal(row.source, "unknown");
   * assert.equal(row.output_tokens, 42);
   * assert.equal(row.model, "gpt-5");
   * ```
   */
  updateTokenCounts(id: string, update: TokenCountsUpdate = {}): void {
    tokens.updateTokenCounts(this.#store, id, update);
  }

  // ── Messages ────────────────────────────────────────────────────────────

  /**
   * Appends one message and updates the session counters, in one
   * transaction. The timestamp is the store's clock. Counters follow
   * Python: `message_count` + 1; `tool_call_count` + the length of a
   * `toolCalls` array (+ 1 for any other non-null value), whatever the role
   * (a tool result carries no `toolCalls`, so it adds nothing). Content that
   * is a string is stored as it is; an array or object (multimodal parts)
   * as `"\u0000json:" + JSON`. `toolCalls`, `reasoningDetails`,
   * `codexReasoningItems` and `codexMessageItems` are stored as JSON text,
   * an empty list or object as NULL. A message never creates its session.
   *
   * @param sessionId The session; it must exist.
   * @param message `role` (required), `content`, `toolName`, `toolCalls`,
   *   `toolCallId`, `tokenCount`, `finishReason`, `reasoning`,
   *   `reasoningContent`, `reasoningDetails`, `codexReasoningItems`,
   *   `codexMessageItems` (see {@linkcode NewMessage}).
   * @returns The new message id.
   * @throws {SqliteError} Of `kind` `constraint` when the session does not
   *   exist, naming it (`FOREIGN KEY constraint failed: cannot append
   *   message: no session "nope"`); nothing is written. Other
   *   storage failures at once, nothing written.
   * @throws {TypeError} When the message is not an object, `role` is not a
   *   string, a text field is not a string, `tokenCount` is not a finite
   *   number, a JSON field holds a circular reference, or a field is given
   *   by its column's snake_case name (`tool_calls`, which would be dropped:
   *   give `toolCalls`); the message names the field and its value, and
   *   nothing is written.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {TypeError} When `sessionId` is not a string, naming the value; nothing is written.
   *
   * @example An assistant turn with two tool calls, then their results
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.appendMessage("s1", {
   *   role: "assistant",
   *   toolCalls: [{ id: "c1", type: "function" }, { id: "c2", type: "function" }],
   * });
   * db.appendMessage("s1", { role: "tool", toolCallId: "c1", toolName: "shell", content: "ok" });
   * const row = db.getSession("s1")!;
   * assert.equal(row.message_count, 2);
   * assert.equal(row.tool_call_count, 2);
   * ```
   *
   * @example A message for an unknown session is refused
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteError } from "./driver/sqlite_error.ts";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * assert.throws(
   *   () => db.appendMessage("nope", { role: "user", content: "hi" }),
   *   (error) => error instanceof SqliteError && error.kind === "constraint",
   * );
   * assert.equal(db.messageCount(), 0);
   * ```
   */
  appendMessage(sessionId: string, message: NewMessage): number {
    return messages.appendMessage(this.#store, sessionId, message);
  }

  /**
   * Appends many messages in one transaction, with the rules of
   * {@linkcode SessionDB.appendMessage}: all are written, or none.
   * Timestamps start at the store's clock and grow by 1 µs per message, so
   * the given order is kept; the counters are updated once. A batch of 64
   * messages or more fills both full-text indexes in one pass for exactly
   * the new rows (the same entries the triggers would write), inside the
   * same transaction, at about twice the rate. An empty list
   * returns `[]` without touching the file (no transaction, no check of the
   * session), except on a read-only store, which refuses it as every write.
   *
   * @param sessionId The session; it must exist.
   * @param list The messages, in order (each a {@linkcode NewMessage}).
   * @returns The new ids, in order.
   * @throws {SqliteError} Of `kind` `constraint` when the session does not
   *   exist; nothing is written. Other storage failures at once, nothing written.
   * @throws {TypeError} When `list` is not an array or a message is not
   *   valid (as for `appendMessage`); nothing is written.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`,
   *   even for an empty list.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {TypeError} When `sessionId` is not a string, naming the value; nothing is written.
   *
   * @example Importing a transcript
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * const ids = db.appendMessages("s1", [
   *   { role: "user", content: "hello" },
   *   { role: "assistant", content: "hi!" },
   * ]);
   * assert.equal(ids.length, 2);
   * assert.deepEqual(db.getMessages("s1").map((m) => m.id), ids);
   * assert.equal(db.getSession("s1")!.message_count, 2);
   * ```
   *
   * @example One bad message, nothing written
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * import type { NewMessage } from "../core/types.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * const bad = { role: 7 } as unknown as NewMessage;
   * const good: NewMessage = { role: "user", content: "hi" };
   * assert.throws(() => db.appendMessages("s1", [good, bad]), TypeError);
   * assert.equal(db.messageCount("s1"), 0);
   * ```
   */
  appendMessages(sessionId: string, list: readonly NewMessage[]): number[] {
    return messages.appendMessages(this.#store, sessionId, list);
  }

  /**
   * Replaces the whole transcript of a session atomically, as the agent's
   * /retry, /undo and /compress do. It takes the conversation shape that
   * {@linkcode SessionDB.getMessagesAsConversation} returns (OpenAI keys:
   * `role, content, tool_calls, tool_call_id, tool_name, finish_reason,
   * reasoning, …`), so a transcript round-trips. A message without `role`
   * gets `unknown`; reasoning fields are kept for assistant messages only;
   * `message_count` and `tool_call_count` are recomputed from the new list;
   * timestamps start at the store's clock and grow by 1 µs per message; a
   * long transcript is indexed in one pass, as in
   * {@linkcode SessionDB.appendMessages}. An empty list clears the
   * transcript (as {@linkcode SessionDB.clearMessages}).
   *
   * @param sessionId The session.
   * @param list The new transcript, in order (each a {@linkcode ConversationMessage}).
   * @throws {SqliteError} Of `kind` `constraint` when the list is not empty
   *   and the session does not exist, naming it as
   *   {@linkcode SessionDB.appendMessage} does (an empty list for an unknown
   *   session changes nothing). Other storage failures at once; nothing is changed.
   * @throws {TypeError} When `list` is not an array, or a message or one of
   *   its fields has the wrong type, or a field is given by its camelCase
   *   name (`toolCalls`, which would be dropped: give `tool_calls`); nothing
   *   is changed.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was changed.
   * @throws {TypeError} When `sessionId` is not a string, naming the value; nothing is written.
   *
   * @example Dropping the last exchange (an /undo)
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.appendMessages("s1", [
   *   { role: "user", content: "one" },
   *   { role: "assistant", content: "1" },
   *   { role: "user", content: "two" },
   *   { role: "assistant", content: "2" },
   * ]);
   * db.replaceMessages("s1", db.getMessagesAsConversation("s1").slice(0, -2));
   * assert.deepEqual(db.getMessages("s1").map((m) => m.content), ["one", "1"]);
   * assert.equal(db.getSession("s1")!.message_count, 2);
   * ```
   */
  replaceMessages(sessionId: string, list: readonly ConversationMessage[]): void {
    messages.replaceMessages(this.#store, sessionId, list);
  }

  /**
   * Deletes every message of a session and resets `message_count` and
   * `tool_call_count` to 0, in one transaction (the session row stays). An
   * unknown session changes nothing and does not fail.
   *
   * @param sessionId The session.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was deleted.
   * @throws {SqliteError} On any other storage failure, at once, with nothing deleted.
   * @throws {TypeError} When `sessionId` is not a string, naming the value; nothing is written.
   *
   * @example A /new in a chat
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "telegram");
   * db.appendMessage("s1", { role: "user", content: "/new" });
   * db.clearMessages("s1");
   * assert.deepEqual(db.getMessages("s1"), []);
   * assert.equal(db.getSession("s1")!.message_count, 0);
   * ```
   */
  clearMessages(sessionId: string): void {
    messages.clearMessages(this.#store, sessionId);
  }

  /**
   * Reads the transcript of a session with every column, ordered by
   * `timestamp, id`. Content is decoded (multimodal parts come back as the
   * original array or object; parts with bad JSON come back as the stored
   * string, prefix included); `tool_calls` is parsed, and bad JSON there degrades to
   * `[]`; `reasoning_details`, `codex_reasoning_items` and
   * `codex_message_items` stay JSON text, as Python returns them. In a file
   * from a newer Hermes (with `messages.active`), rewound and compacted rows
   * (`active = 0`) are left out, as that Hermes does, unless
   * `includeInactive`; with `excludeHidden`, the rows a transcript hides
   * (`display_kind = 'hidden'`) are left out too. With `afterId`, only the
   * messages with a greater id (those written since a reader last looked).
   * A page of a long transcript: `beforeId` keeps the messages before that
   * one in this order, `fromId` that one and those after it, and `limit`
   * the first so many of what is selected, `last` the last so many (still
   * oldest first); such a page reads its own rows along the
   * `(session_id, timestamp)` index, not the whole session. Never throws on
   * bad data in a row.
   *
   * @param sessionId The session.
   * @param options `includeInactive`, `excludeHidden`, `afterId`, `beforeId`,
   *   `fromId`, `limit`, `last` (see {@linkcode MessagesOptions}).
   * @returns The messages; `[]` for an unknown session.
   * @throws {TypeError} When `afterId`, `beforeId` or `fromId` is given (not
   *   `null`) and is not a finite number, when `limit` or `last` is given and
   *   is not a whole number from 0, or when both are given, naming the value.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `sessionId` is not a string, naming the value.
   *
   * @example Multimodal content comes back as parts
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "telegram");
   * db.appendMessage("s1", { role: "user", content: [{ type: "text", text: "a dog?" }] });
   * db.appendMessage("s1", { role: "assistant", toolCalls: [{ id: "c1" }] });
   * const [question, answer] = db.getMessages("s1");
   * assert.deepEqual(question.content, [{ type: "text", text: "a dog?" }]);
   * assert.deepEqual(answer.tool_calls, [{ id: "c1" }]);
   * assert.deepEqual(db.getMessages("nope"), []);
   * assert.deepEqual(db.getMessages("s1", { afterId: question.id }), [answer]);
   * ```
   *
   * @example A page at a time, newest first
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * const ids = db.appendMessages("s1", ["a", "b", "c", "d", "e"].map((content) => ({
   *   role: "user",
   *   content,
   * })));
   * const page = db.getMessages("s1", { last: 2 });
   * assert.deepEqual(page.map((m) => m.content), ["d", "e"]);
   * const earlier = db.getMessages("s1", { beforeId: page[0].id, last: 2 });
   * assert.deepEqual(earlier.map((m) => m.content), ["b", "c"]);
   * assert.deepEqual(db.getMessages("s1", { fromId: ids[1], limit: 2 }).map((m) => m.id), [
   *   ids[1],
   *   ids[2],
   * ]);
   * ```
   */
  getMessages(sessionId: string, options: MessagesOptions = {}): MessageRow[] {
    return this.#read((store) => messages.getMessages(store, sessionId, options));
  }

  /**
   * How many messages {@linkcode SessionDB.getMessages} returns with the
   * same options, counted by SQLite without reading them out: how many a
   * transcript shows (`excludeHidden`), how many lie before a page
   * (`beforeId`) or from a message on (`fromId`). Unlike
   * {@linkcode SessionDB.messageCount}, which counts every row, it leaves
   * out what `getMessages` leaves out (the inactive rows of a newer Hermes,
   * unless `includeInactive`).
   *
   * @param sessionId The session.
   * @param options As {@linkcode SessionDB.getMessages} takes them (see
   *   {@linkcode MessagesOptions}); `limit` and `last` cap the count.
   * @returns The number of messages; 0 for an unknown session.
   * @throws {TypeError} When an option is bad (as `getMessages` throws), or
   *   `sessionId` is not a string, naming the value.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * const [, second] = db.appendMessages("s1", [
   *   { role: "user", content: "a" },
   *   { role: "assistant", content: "b" },
   *   { role: "user", content: "c" },
   * ]);
   * assert.equal(db.countMessages("s1"), 3);
   * assert.equal(db.countMessages("s1", { beforeId: second }), 1);
   * assert.equal(db.countMessages("s1", { fromId: second }), 2);
   * assert.equal(db.countMessages("nope"), 0);
   * ```
   */
  countMessages(sessionId: string, options: MessagesOptions = {}): number {
    return this.#read((store) => messages.countMessages(store, sessionId, options));
  }

  /**
   * Reads a transcript in the OpenAI chat shape, for replay to a model:
   * `{ role, content }` plus `tool_call_id`, `tool_name` and `tool_calls`
   * when set, and for assistant messages only `finish_reason`, `reasoning`,
   * `reasoning_content` (kept even when empty), `reasoning_details`,
   * `codex_reasoning_items` and `codex_message_items` (parsed; bad JSON
   * gives `null`, bad `tool_calls` gives `[]`). Leaked `<memory-context>`
   * blocks and their system note are removed from user and assistant text,
   * which is then trimmed. Rows a newer Hermes marked inactive are always
   * left out.
   *
   * With `includeAncestors`, the messages of every ancestor (any kind of
   * parent link, at most 100 generations, cycle safe) come first, root
   * first, and a user prompt that repeats one already replayed since the
   * last assistant answer is dropped (the prompt a compression continuation
   * recorded again).
   *
   * @param sessionId The session.
   * @param options `includeAncestors` (see {@linkcode ConversationOptions}).
   * @returns The conversation; `[]` for an unknown session.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `sessionId` is not a string, naming the value.
   *
   * @example Resuming a compressed conversation
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("root", "cli");
   * db.appendMessages("root", [
   *   { role: "user", content: "hi" },
   *   { role: "assistant", content: "hello" },
   * ]);
   * db.endSession("root", "compression");
   * db.createSession("tip", "cli", { parentSessionId: "root" });
   * db.appendMessage("tip", { role: "user", content: "<memory-context>x</memory-context> go on" });
   * const history = db.getMessagesAsConversation("tip", { includeAncestors: true });
   * assert.deepEqual(history.map((m) => m.content), ["hi", "hello", "go on"]);
   * assert.equal(db.getMessagesAsConversation("tip").length, 1);
   * ```
   */
  getMessagesAsConversation(
    sessionId: string,
    options: ConversationOptions = {},
  ): ConversationMessage[] {
    checkOptionNames("read conversation", options, CONVERSATION_OPTION_NAMES);
    return this.#read((store) => conversation.getMessagesAsConversation(store, sessionId, options));
  }

  /**
   * Counts the message rows of one session, or of every session when
   * `sessionId` is omitted or empty. Every row counts, inactive ones of a
   * newer Hermes' file included.
   *
   * @param sessionId The session; every message when omitted or `""`.
   * @returns The count; 0 for an unknown session.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `sessionId` is given and is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.createSession("s2", "cli");
   * db.appendMessage("s1", { role: "user", content: "hi" });
   * db.appendMessage("s2", { role: "user", content: "yo" });
   * assert.equal(db.messageCount(), 2);
   * assert.equal(db.messageCount("s1"), 1);
   * assert.equal(db.messageCount("other"), 0);
   * ```
   */
  messageCount(sessionId?: string): number {
    return this.#read((store) => messages.messageCount(store, sessionId));
  }

  // ── Search and listing ──────────────────────────────────────────────────

  /**
   * Searches every message, as Python's `search_messages` does (SPEC §5
   * "Search"). The query is sanitized first (balanced quoted phrases kept;
   * `+{}()"^` dropped; `*` runs collapsed, a leading `*` dropped; a dangling
   * AND/OR/NOT at either end dropped; dotted, hyphenated and underscored
   * compounds such as `chat-send`, `P2.2`, `sp_new` quoted), then routed:
   * text without CJK goes to the `messages_fts` index, ranked by bm25, with
   * a snippet marked `>>>like this<<<`; three or more CJK characters go to
   * the trigram index; shorter CJK text is matched as a substring of
   * content, tool name and tool calls, with an unmarked 120-character
   * snippet. `sort` orders the hits as the newer Python Hermes does:
   * `"rank"` (the default) by relevance; `"newest"` or `"oldest"` by
   * timestamp, then relevance, then id. Substring matches are always by
   * time: newest first for `"rank"` and `"newest"`, oldest first for
   * `"oldest"`. The few deliberate improvements over Python (a
   * short CJK operand, an emoji-only query, `foo:bar`, `e.g.`…) are listed
   * in `docs/search_improvements.md`.
   *
   * Never throws because of the query text: a query that cannot match, or
   * that FTS5 rejects even after repair (or that is not a string), gives `[]`. A damaged full-text
   * index is read around (by substring) instead of failing. Each hit
   * carries `context`: the previous, the matching and the next message of
   * its session, content cut to 200 characters. In a newer Hermes' file,
   * rewound messages are not searched unless `includeInactive`.
   *
   * @param query What the user typed.
   * @param options `sourceFilter` (only these sources; an empty list
   *   matches nothing), `excludeSources`, `roleFilter` (an empty list means
   *   any role), `sessionId` (only that session's messages), `since`
   *   (inclusive) and `until` (exclusive) bounding the message timestamps
   *   in Unix seconds, `limit` (default 20), `offset` (default 0),
   *   `includeInactive` (default false) and `sort` (default `"rank"`); see
   *   {@linkcode SearchOptions}.
   * @returns The hits (`id, session_id, role, snippet, timestamp,
   *   tool_name, source, model, session_started, context`), in `sort` order.
   * @throws {RangeError} When `limit` or `offset` is not a non-negative
   *   integer (`Cannot search messages: limit must be a non-negative
   *   integer: current value is -1`), `since` or `until` is not a finite
   *   number, or `sort` is not `"rank"`, `"newest"` or `"oldest"`.
   * @throws {SqliteError} On a storage failure other than a damaged index.
   * @throws {TypeError} When `sessionId` is not a string, or `sourceFilter`, `excludeSources` or
   *   `roleFilter` not an array of strings, naming the value; when `options` is not an object
   *   or holds an option that is not one of {@linkcode SearchOptions}'s (a misspelt filter would
   *   widen the search), naming it.
   *
   * @example Searching, filtering, hostile input
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.appendMessages("s1", [
   *   { role: "user", content: "How do I prune docker images?" },
   *   { role: "assistant", content: "Run docker image prune -a." },
   * ]);
   * const hits = db.searchMessages("docker prune", { roleFilter: ["user"] });
   * assert.equal(hits.length, 1);
   * assert.match(hits[0].snippet!, />>>docker<<</);
   * assert.equal(hits[0].source, "cli");
   * assert.deepEqual(db.searchMessages("docker", { sourceFilter: [] }), []);
   * assert.ok(Array.isArray(db.searchMessages('"unbalanced (AND')));
   * const newest = db.searchMessages("docker", { sort: "newest" });
   * assert.deepEqual(newest.map((hit) => hit.role), ["assistant", "user"]);
   * assert.throws(() => db.searchMessages("docker", { limit: -1 }), RangeError);
   * ```
   */
  searchMessages(query: string, options: SearchOptions = {}): SearchHit[] {
    const given = options ?? {};
    checkSearchFilters(given);
    return this.#read((store) => search.searchMessages(store, query, given));
  }

  /**
   * How many hits {@linkcode SessionDB.searchMessages} finds for `query`
   * with these filters, counted up to `upTo` without reading snippets or
   * contexts: what a page past the last hit says ("past the first N hits").
   *
   * @param query What the user typed.
   * @param options The filters; `limit`, `offset` and `sort` are ignored.
   * @param upTo The most hits to count.
   * @returns The count, at most `upTo`.
   * @throws {RangeError} When `upTo` is not a non-negative integer, or a filter is bad, as
   *   {@linkcode SessionDB.searchMessages} says.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.appendMessages("s1", [{ role: "user", content: "docker" }, { role: "user", content: "docker" }]);
   * assert.equal(db.countSearchHits("docker", {}, 100), 2);
   * assert.equal(db.countSearchHits("docker", {}, 1), 1);
   * ```
   */
  countSearchHits(query: string, options: SearchOptions, upTo: number): number {
    const given = options ?? {};
    checkSearchFilters(given);
    return this.#read((store) => search.countSearchHits(store, query, given, upTo));
  }

  /**
   * Lists sessions as `hermes sessions list` shows them, with `preview`
   * (the first user message, newlines as spaces, 60 characters plus `...`
   * when longer; `""` when there is none or it is multimodal) and `last_active`
   * (the last message's time, else the start).
   *
   * Order: newest start first (ties in file order); with
   * `orderByLastActive`, most recently active first, where a compression
   * chain counts the activity of all its sessions (ties by start, then id,
   * newest first). Children are hidden unless their parent ended as
   * `branched` before they started (delegates and compression
   * continuations are hidden), or `includeChildren`. A root that ended as
   * `compression` is shown as its chain's live tip (the tip's id, title,
   * counts, preview, model and activity, the root's `started_at`, and
   * `_lineage_root_id`), unless `projectCompressionTips: false` or
   * `includeChildren`. In a newer Hermes' file, archived sessions are
   * hidden unless `includeArchived`. `startedAfter` (inclusive) and
   * `startedBefore` (exclusive) bound the start time, and `hasChildren`
   * keeps only sessions with at least one child session (delegates,
   * branches, continuations).
   *
   * @param options `source`, `excludeSources`, `startedAfter`,
   *   `startedBefore`, `hasChildren` (default false), `limit` (default 20),
   *   `offset` (default 0), `includeChildren` (default false),
   *   `projectCompressionTips` (default true), `orderByLastActive` (default
   *   false) and `includeArchived` (default false); see
   *   {@linkcode ListSessionsOptions}.
   * @returns The page of sessions, each a full row plus `preview`, `last_active`
   *   and, for a projected chain, `_lineage_root_id`.
   * @throws {RangeError} When `limit` or `offset` is not a non-negative
   *   integer (`Cannot list sessions: limit must be a non-negative integer:
   *   current value is 1.5`), or `startedAfter` or `startedBefore` is not a
   *   finite number.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `source` is not a string or `excludeSources` not an array of
   *   strings, naming the value.
   *
   * @example Newest first, a compression chain as one entry
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * let now = 1_767_000_000;
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => now });
   * db.createSession("root", "cli");
   * db.appendMessage("root", { role: "user", content: "Plan the\nmigration" });
   * now += 60;
   * db.endSession("root", "compression");
   * db.createSession("tip", "cli", { parentSessionId: "root" });
   * db.appendMessage("tip", { role: "user", content: "Go on with the migration plan" });
   * now += 60;
   * db.createSession("other", "telegram");
   * const rows = db.listSessionsRich();
   * assert.deepEqual(rows.map((s) => s.id), ["other", "tip"]);
   * assert.equal(rows[1]._lineage_root_id, "root");
   * assert.equal(rows[1].preview, "Go on with the migration plan");
   * now += 60;
   * db.appendMessage("tip", { role: "assistant", content: "Step one…" });
   * const active = db.listSessionsRich({ orderByLastActive: true });
   * assert.deepEqual(active.map((s) => s.id), ["tip", "other"]);
   * assert.equal(db.listSessionsRich({ includeChildren: true }).length, 3);
   * assert.deepEqual(db.listSessionsRich({ hasChildren: true }).map((s) => s.id), ["tip"]);
   * assert.deepEqual(db.listSessionsRich({ startedAfter: now - 60 }).map((s) => s.id), ["other"]);
   * ```
   */
  listSessionsRich(options: ListSessionsOptions = {}): RichSessionRow[] {
    checkOptionNames("list sessions", options, LIST_SESSIONS_OPTION_NAMES);
    return this.#read((store) => listing.listSessionsRich(store, options ?? {}));
  }

  /**
   * Counts the entries `listSessionsRich` lists with these filters, over all
   * pages (a compression chain counts once).
   *
   * @param options The listing's filters (paging and order are ignored).
   * @returns The count.
   * @throws {RangeError} When `startedAfter` or `startedBefore` is not a finite number.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `source` is not a string or `excludeSources` not an array of
   *   strings, naming the value.
   */
  listedSessionCount(options: ListSessionsOptions = {}): number {
    checkOptionNames("count sessions", options, LIST_SESSIONS_OPTION_NAMES);
    return this.#read((store) => listing.listedSessionCount(store, options ?? {}));
  }

  /**
   * Lists every session (children and archived ones included, nothing
   * projected), most recently active first (by `last_active`: the last
   * message's time, else the start), then newest start, then id
   * descending: Python's `search_sessions` order, which exports follow.
   *
   * @param options `source` (every source when empty), `limit` (default
   *   20) and `offset` (default 0); see {@linkcode SearchSessionsOptions}.
   * @returns Full session rows, each with `last_active` (the newest
   *   message's time, else the start; see {@linkcode SessionRowWithActivity}).
   * @throws {RangeError} When `limit` or `offset` is not a non-negative integer.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `source` is not a string, naming the value.
   *
   * @example The most recently active first
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * let now = 1_767_000_000;
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => now });
   * db.createSession("old", "cron");
   * now += 60;
   * db.createSession("new", "cron");
   * now += 60;
   * db.appendMessage("old", { role: "user", content: "still here" });
   * assert.deepEqual(db.searchSessions({ source: "cron" }).map((s) => s.id), ["old", "new"]);
   * assert.deepEqual(db.searchSessions({ limit: 1, offset: 1 }).map((s) => s.id), ["new"]);
   * ```
   */
  searchSessions(options: SearchSessionsOptions = {}): SessionRowWithActivity[] {
    checkOptionNames("list sessions", options, SEARCH_SESSIONS_OPTION_NAMES);
    return this.#read((store) => listing.searchSessions(store, options ?? {}));
  }

  /**
   * Counts session rows: every session (children and archived ones
   * included), or those of one source.
   *
   * @param options `source` (every source when empty); see
   *   {@linkcode SessionCountOptions}.
   * @returns The count.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `source` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.createSession("s2", "telegram", { parentSessionId: "s1" });
   * assert.equal(db.sessionCount(), 2);
   * assert.equal(db.sessionCount({ source: "telegram" }), 1);
   * ```
   */
  sessionCount(options: SessionCountOptions = {}): number {
    checkOptionNames("count sessions", options, SESSION_COUNT_OPTION_NAMES);
    return this.#read((store) => listing.sessionCount(store, options ?? {}));
  }

  // ── Titles and ids ──────────────────────────────────────────────────────

  /**
   * Resolves what a user typed to a session id: an exact id, else a prefix
   * of exactly one id. The prefix match is SQL `LIKE` (ASCII
   * case-insensitive) with `\`, `%` and `_` taken literally. As in Python,
   * `""` is a prefix of every id: it resolves the one session of a file
   * that holds exactly one.
   *
   * @param idOrPrefix What the user typed.
   * @returns The id, or `undefined` when no session or more than one matches.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `idOrPrefix` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("20260429_090322_3762ca", "cli");
   * db.createSession("20260429_101500_aa11bb", "cli");
   * assert.equal(db.resolveSessionId("20260429_09"), "20260429_090322_3762ca");
   * assert.equal(db.resolveSessionId("20260429"), undefined); // ambiguous
   * assert.equal(db.resolveSessionId("2026%"), undefined); // % is literal
   * ```
   */
  resolveSessionId(idOrPrefix: string): string | undefined {
    return this.#read((store) => titles.resolveSessionId(store, idOrPrefix));
  }

  /**
   * The sessions whose id starts with `prefix`: how many, and the newest
   * started (to say which ones an ambiguous prefix names). The match is
   * that of {@linkcode SessionDB.resolveSessionId}: SQL `LIKE`, ASCII
   * case-insensitive, with `\`, `%` and `_` taken literally.
   *
   * @param prefix The id prefix.
   * @param options `limit`: the most ids (default 10).
   * @returns The count and ids.
   * @throws {RangeError} When `limit` is not a non-negative integer, naming the value.
   * @throws {TypeError} When `prefix` is not a string, naming the value.
   */
  sessionIdsWithPrefix(prefix: string, options: { limit?: number } = {}): PrefixMatches {
    checkOptionNames("look up ids", options, PREFIX_OPTION_NAMES);
    return this.#read((store) => titles.sessionIdsWithPrefix(store, prefix, options ?? {}));
  }

  /**
   * Sets the title of a session, or clears it when the title is `null` or
   * cleans to nothing. The title is cleaned with {@linkcode sanitizeTitle}
   * first (ASCII controls other than tab/LF/CR and invisible characters
   * removed, whitespace runs collapsed to one space, trimmed); it may have
   * 100 code points at most and is unique among sessions (case-sensitive).
   *
   * @param id The session id.
   * @param title The title as typed; `null` or `""` clears it.
   * @returns True when the session exists (and now has the title); false
   *   for an unknown id (nothing is written). The title is checked first, as
   *   Python does: a title too long or in use throws even for an unknown id.
   * @throws {TitleError} `Title too long (N chars, max 100)`, or
   *   `Title 'T' is already in use by session ID` when another session has it;
   *   nothing is written.
   * @throws {TypeError} When `title` is neither a string, `null` nor
   *   `undefined` (which clear the title), naming the value.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {SqliteError} On any other storage failure, at once, with nothing written.
   * @throws {TypeError} When `id` is not a string, naming the value; nothing is written.
   *
   * @example Naming, a duplicate, clearing
   * ```ts
   * import assert from "node:assert/strict";
   * import { TitleError } from "../core/errors.ts";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.createSession("s2", "cli");
   * assert.equal(db.setSessionTitle("s1", "  Weekly\u200b sync "), true);
   * assert.equal(db.getSessionTitle("s1"), "Weekly sync");
   * assert.throws(() => db.setSessionTitle("s2", "Weekly sync"), TitleError);
   * assert.throws(() => db.setSessionTitle("s2", "x".repeat(101)), /Title too long \(101 chars/);
   * assert.equal(db.setSessionTitle("nope", "Other"), false);
   * db.setSessionTitle("s1", "");
   * assert.equal(db.getSessionTitle("s1"), null);
   * ```
   */
  setSessionTitle(id: string, title: string | null): boolean {
    return titles.setSessionTitle(this.#store, id, title);
  }

  /**
   * Reads the title of a session.
   *
   * @param id The session id.
   * @returns The title; `null` when the session has none; `undefined` when
   *   there is no such session.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `id` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * assert.equal(db.getSessionTitle("s1"), null);
   * db.setSessionTitle("s1", "Weekly sync notes");
   * assert.equal(db.getSessionTitle("s1"), "Weekly sync notes");
   * assert.equal(db.getSessionTitle("nope"), undefined);
   * ```
   */
  getSessionTitle(id: string): string | null | undefined {
    // A BLOB title (Python's sqlite3 stores `bytes` so) is its text, as in every row read.
    return blobAsText(this.#read((store) => titles.getSessionTitle(store, id)));
  }

  /**
   * Finds the session whose title is exactly `title` (case-sensitive, not
   * cleaned).
   *
   * @param title The title.
   * @returns The full session row, or `undefined`.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `title` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.setSessionTitle("s1", "数据库迁移计划");
   * assert.equal(db.getSessionByTitle("数据库迁移计划")?.id, "s1");
   * assert.equal(db.getSessionByTitle("数据库"), undefined);
   * ```
   */
  getSessionByTitle(title: string): SessionRow | undefined {
    const row = this.#read((store) => titles.getSessionByTitle(store, title));
    return row === undefined ? undefined : withBlobsAsText(row);
  }

  /**
   * Resolves a title to a session id, as `hermes -r TITLE` does. When
   * numbered variants `"<title> #N"` exist, the most recently started one
   * wins, even over an exact match (it is the live continuation); else the
   * exact title (case-sensitive). The variant match is SQL `LIKE`: ASCII
   * case-insensitive, with `%`, `_` and `\` in the title taken literally.
   *
   * @param title The title as typed.
   * @returns The session id, or `undefined` when nothing matches.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `title` is not a string, naming the value.
   *
   * @example The newest numbered variant wins
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * let now = 1_767_000_000;
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => now });
   * db.createSession("s1", "cli");
   * db.setSessionTitle("s1", "my project");
   * now += 60;
   * db.createSession("s2", "cli");
   * db.setSessionTitle("s2", "my project #2");
   * assert.equal(db.resolveSessionByTitle("my project"), "s2");
   * assert.equal(db.resolveSessionByTitle("my project #2"), "s2");
   * assert.equal(db.resolveSessionByTitle("nothing"), undefined);
   * ```
   */
  resolveSessionByTitle(title: string): string | undefined {
    return this.#read((store) => titles.resolveSessionByTitle(store, title));
  }

  /**
   * The title for the next session of a lineage: the base title (a `" #N"`
   * suffix removed) with one more than the highest number in use, the
   * unnumbered original counting as #1. A base that no session uses, with
   * or without a number, comes back as the bare base.
   *
   * @param base A title, with or without a `" #N"` suffix.
   * @returns The next title, e.g. `"my project #3"`.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `base` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.setSessionTitle("s1", "my project");
   * assert.equal(db.getNextTitleInLineage("my project"), "my project #2");
   * db.createSession("s2", "cli");
   * db.setSessionTitle("s2", "my project #2");
   * assert.equal(db.getNextTitleInLineage("my project #2"), "my project #3");
   * assert.equal(db.getNextTitleInLineage("brand new #4"), "brand new");
   * ```
   */
  getNextTitleInLineage(base: string): string {
    return this.#read((store) => titles.getNextTitleInLineage(store, base));
  }

  // ── Lineage ─────────────────────────────────────────────────────────────

  /**
   * Follows a compression chain forward to its live end: from each session
   * that ended as `compression`, to its most recently started child that
   * started at or after that end (delegates started before it are not
   * followed), at most 100 steps.
   *
   * @param id A session of the chain.
   * @returns The tip's id; `id` itself when it is not compressed, has no
   *   continuation, or does not exist.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `id` is not a string, naming the value.
   *
   * @example root → mid → tip
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => 1_767_000_000 });
   * db.createSession("root", "cli");
   * db.endSession("root", "compression");
   * db.createSession("mid", "cli", { parentSessionId: "root" });
   * db.endSession("mid", "compression");
   * db.createSession("tip", "cli", { parentSessionId: "mid" });
   * assert.equal(db.getCompressionTip("root"), "tip");
   * assert.equal(db.getCompressionTip("tip"), "tip");
   * assert.equal(db.getCompressionTip("nope"), "nope");
   * ```
   */
  getCompressionTip(id: string): string {
    return this.#read((store) => lineage.getCompressionTip(store, id));
  }

  /**
   * The session to resume when the user asks for `id`: `id` itself when it
   * has messages; otherwise the first descendant that has messages,
   * following the most recently started child at each step (at most 32
   * steps, stopping on a cycle). A compression that happened before any
   * message was flushed leaves an empty parent; this finds where the
   * conversation went.
   *
   * @param id The requested session.
   * @returns The session that holds the conversation; `id` when there is
   *   none, when `id` is empty or unknown, or when the chain loops.
   * @throws {SqliteError} When the file cannot be read (Python answers `id`
   *   then; this store reports the failure).
   * @throws {TypeError} When `id` is not a string, naming the value.
   *
   * @example An empty head
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("head", "cli");
   * db.endSession("head", "compression");
   * db.createSession("child", "cli", { parentSessionId: "head" });
   * db.appendMessage("child", { role: "user", content: "hi" });
   * assert.equal(db.resolveResumeSessionId("head"), "child");
   * assert.equal(db.resolveResumeSessionId("child"), "child");
   * ```
   */
  resolveResumeSessionId(id: string): string {
    return this.#read((store) => lineage.resolveResumeSessionId(store, id));
  }

  /**
   * The session and its ancestors: self first, then its parent, up to the
   * root (any kind of parent link: compression, branch, delegate). Stops on
   * a cycle and after 1000 generations.
   *
   * @param id The session id.
   * @returns Full session rows; `[]` for an unknown id.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `id` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("root", "cli");
   * db.createSession("mid", "cli", { parentSessionId: "root" });
   * db.createSession("tip", "cli", { parentSessionId: "mid" });
   * assert.deepEqual(db.getAncestors("tip").map((s) => s.id), ["tip", "mid", "root"]);
   * assert.deepEqual(db.getAncestors("nope"), []);
   * ```
   */
  getAncestors(id: string): SessionRow[] {
    return rowsWithBlobsAsText(this.#read((store) => lineage.getAncestors(store, id)));
  }

  /**
   * The session and its descendants (continuations, branches, delegates,
   * and theirs): self first, then children before grandchildren; within a
   * generation by `started_at`, then id. Each session comes once; stops on
   * a cycle and after 1000 generations.
   *
   * @param id The session id.
   * @returns Full session rows; `[]` for an unknown id.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `id` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * let now = 1_767_000_000;
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => now++ });
   * db.createSession("root", "cli");
   * db.createSession("a", "cli", { parentSessionId: "root" });
   * db.createSession("a1", "cli", { parentSessionId: "a" });
   * db.createSession("b", "cli", { parentSessionId: "root" });
   * assert.deepEqual(db.getDescendants("root").map((s) => s.id), ["root", "a", "b", "a1"]);
   * assert.deepEqual(db.getDescendants("nope"), []);
   * ```
   */
  getDescendants(id: string): SessionRow[] {
    return rowsWithBlobsAsText(this.#read((store) => lineage.getDescendants(store, id)));
  }

  // ── Export and cleanup ──────────────────────────────────────────────────

  /**
   * One session with its messages, as one line of a JSONL export (what
   * `hermes sessions export` writes): every session column, then
   * `messages`, as {@linkcode SessionDB.getMessages} returns them with
   * `includeInactive` (a newer Hermes' rewound and compacted rows included).
   * {@linkcode SessionDB.importSession} reads it back. Every value comes
   * exactly: an integer column beyond 2^53 (a hand-written row, or counts
   * a caller gave as `bigint`) comes as a `bigint`, which `JSON.stringify`
   * refuses (the CLI's export writes its digits); a BLOB or text that is
   * not valid UTF-8 comes as its bytes under `hermes_state_bytes` (see
   * `export` in docs/cli.md). A session of a newer Hermes's file with
   * per-model usage rows carries them under `hermes_state_model_usage`
   * (as {@linkcode SessionDB.getModelUsage} reads them; Python's export
   * carries none), which an import writes back.
   *
   * @param id The session id.
   * @returns The export, or `undefined` for an unknown session.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {TypeError} When `id` is not a string, naming the value.
   *
   * @example One JSONL line
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.appendMessage("s1", { role: "user", content: "hi" });
   * const line = JSON.stringify(db.exportSession("s1"));
   * assert.equal(JSON.parse(line).messages[0].content, "hi");
   * assert.equal(db.exportSession("nope"), undefined);
   * ```
   */
  exportSession(id: string): SessionExport | undefined {
    checkKeyText("export session", "id", id);
    return this.#read((store) => exporting.exportSession(store, id));
  }

  /**
   * Every session with its messages, in the order of
   * {@linkcode SessionDB.searchSessions} (most recently active first, then
   * newest start, then id descending; children included, no limit), each
   * with its `last_active` (see {@linkcode SessionRowWithActivity}), which
   * `exportSession` leaves out. The messages are every row, as
   * {@linkcode SessionDB.exportSession} gives them
   * ({@linkcode SessionDB.getMessages} with `includeInactive`): in a newer
   * Hermes' file the rewound and compacted rows are kept, so an export
   * imported back ({@linkcode SessionDB.importSession}) loses nothing.
   * Holds everything in memory: prefer {@linkcode SessionDB.iterateExport}
   * for large files.
   *
   * @param options `source` (every source when omitted or empty),
   *   `startedAfter` and `startedBefore` (Unix seconds, as the listing's);
   *   see {@linkcode ExportOptions}.
   * @returns The exports.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   * @throws {RangeError} When a start bound is not a finite number.
   * @throws {TypeError} When `source` is not a string, naming the value.
   *
   * @example Filtering by source
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("cron_job_1", "cron");
   * db.createSession("s1", "cli");
   * assert.deepEqual(db.exportAll({ source: "cron" }).map((s) => s.id), ["cron_job_1"]);
   * assert.equal(db.exportAll().length, 2);
   * const hourAgo = Date.now() / 1000 - 3600;
   * assert.equal(db.exportAll({ startedBefore: hourAgo }).length, 0);
   * ```
   */
  exportAll(options: ExportOptions = {}): SessionExportWithActivity[] {
    checkOptionNames("export sessions", options, EXPORT_OPTION_NAMES);
    const given = options ?? {};
    checkOptionalText("export sessions", "source", given.source);
    return this.#read((store) => exporting.exportAll(store, given));
  }

  /**
   * What {@linkcode SessionDB.exportAll} returns, one session at a time, in
   * the same order: memory holds one session's messages at a time. On Bun
   * the session list is read through one cursor, so the export is one
   * consistent snapshot. On Deno and Node the session rows are read whole
   * first (`node:sqlite`'s iterator ends quietly on an error on Deno, which
   * made a failed export look complete, and fails on an integer beyond 2^53
   * on Node), then each session's row again with its messages, in one
   * snapshot of their own, as it is yielded: a session that another process
   * changes meanwhile comes whole as it is then, one it deletes meanwhile is
   * left out, one it creates is not in the list. A file read without locks
   * (another user's, read-only) is read the Deno and Node way on every
   * runtime, each read run again when the owner's checkpoint tears it: no
   * cursor can hold its pages still.
   *
   * While the generator is suspended halfway, that cursor holds a read
   * snapshot of the file: run it to the end (or `return()` it, as `break` in
   * a `for…of` does) before writing through the same `SessionDB`, or the
   * write may find the snapshot stale and fail as busy when another process
   * wrote meanwhile.
   *
   * @param options `source` (every source when omitted or empty),
   *   `startedAfter` and `startedBefore` (Unix seconds, as the listing's);
   *   see {@linkcode ExportOptions}.
   * @returns A generator of exports.
   * @throws {SqliteError} From `next()`, when the file cannot be read, or
   *   (`database is not open`) when the store was closed meanwhile.
   * @throws {RangeError} From `next()`, when a start bound is not a finite number.
   * @throws {TypeError} When `source` is not a string, naming the value (at the call).
   *
   * @example Writing a JSONL export
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.createSession("s2", "cli");
   * const lines: string[] = [];
   * for (const session of db.iterateExport()) lines.push(JSON.stringify(session));
   * await Deno.writeTextFile(`${dir}/export.jsonl`, lines.join("\n") + "\n");
   * assert.equal(lines.length, 2);
   * ```
   */
  iterateExport(options: ExportOptions = {}): Generator<SessionExportWithActivity> {
    checkOptionNames("export sessions", options, EXPORT_OPTION_NAMES);
    const given = options ?? {};
    checkOptionalText("export sessions", "source", given.source);
    const slot = openSlot(this.#slot);
    if (slot.readsUnlocked) return whileOpen(slot, this.#exportReadApart(given));
    return whileOpen(slot, slot.pinned((store) => exporting.iterateExport(store, given)));
  }

  /** `iterateExport` as calls: the session list, then each session read whole on its own. */
  *#exportReadApart(options: ExportOptions): Generator<SessionExportWithActivity> {
    const rows = this.#read((store) => exporting.exportSessionRows(store, options));
    const usage = this.#read(readsSessionModelUsage);
    for (const row of rows) {
      const record = this.#read((store) => exporting.sessionWhole(store, row.id, usage));
      if (record !== undefined) yield record;
    }
  }

  /**
   * Deletes a session and its messages in one transaction. Its children are
   * kept and become roots (their parent is set to NULL) instead of being
   * deleted. With `sessionsDir`, its transcript files there (`<id>.json`,
   * `<id>.jsonl`, `request_dump_<id>_*.json`, names compared literally) are
   * removed after the commit, best effort (a missing folder or a file that
   * cannot be removed is skipped).
   *
   * @param id The session id.
   * @param options `sessionsDir` (see {@linkcode SessionsDirOptions}).
   * @returns True when the session existed; false for an unknown id (nothing changes).
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was deleted.
   * @throws {SqliteError} On any other storage failure, at once, with nothing deleted.
   * @throws {TypeError} When `id` or `sessionsDir` is not a string, naming the value, or
   *   `options` holds an option it does not take, naming it; nothing is deleted.
   *
   * @example The child stays, the transcript goes
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * await Deno.mkdir(`${dir}/sessions`);
   * await Deno.writeTextFile(`${dir}/sessions/s1.jsonl`, "{}\n");
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * db.createSession("s2", "cli", { parentSessionId: "s1" });
   * assert.equal(db.deleteSession("s1", { sessionsDir: `${dir}/sessions` }), true);
   * assert.equal(db.getSession("s2")?.parent_session_id, null);
   * await assert.rejects(Deno.stat(`${dir}/sessions/s1.jsonl`), Deno.errors.NotFound);
   * assert.equal(db.deleteSession("s1"), false);
   * ```
   */
  deleteSession(id: string, options: SessionsDirOptions = {}): boolean {
    return prune.deleteSession(this.#store, id, options);
  }

  /**
   * Deletes the ended sessions started more than `olderThanDays` days ago
   * (by the store's clock; live sessions are never pruned), oldest first,
   * with their messages; their children are kept and become roots, and
   * with `sessionsDir` their transcript files go after each commit. Each
   * session goes whole in one transaction, several per transaction, none
   * holding the lock much longer than 400 ms (with a 160 ms pause between
   * two, so a Python writer gets in; a blocking sleep here, an awaited timer
   * on the asynchronous `SessionStore`): a crash in between leaves whole
   * sessions, and the next prune finishes. Ends with a checkpoint that
   * empties the `-wal` when no other connection is busy. A negative
   * `olderThanDays` is refused before anything is read or written, as
   * {@linkcode SessionDB.pruneCandidates} refuses it (Python takes it and
   * prunes every ended session).
   *
   * @param options `olderThanDays` (default 90), `source` (every source
   *   when empty) and `sessionsDir`; see {@linkcode PruneOptions}.
   * @returns How many sessions were deleted.
   * @throws {RangeError} When `olderThanDays` is negative or not a finite
   *   number (the message names the value); nothing is deleted.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt of one transaction; the sessions of earlier
   *   transactions stay deleted, the rest are kept.
   * @throws {SqliteError} On any other storage failure (the same holds).
   * @throws {TypeError} When `source` or `sessionsDir` is not a string, naming the value, or
   *   `options` is not an object or holds another option, naming it (`{ older_than_days: 365 }`
   *   would otherwise prune at 90 days); nothing is deleted.
   *
   * @example Pruning what ended more than 90 days ago
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * const day = 86400;
   * let now = 1_767_000_000;
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => now });
   * db.createSession("old", "telegram");
   * db.endSession("old", "cli_close");
   * db.createSession("old_live", "telegram");
   * now += 100 * day;
   * db.createSession("recent", "telegram");
   * db.endSession("recent", "cli_close");
   * assert.equal(db.pruneSessions({ olderThanDays: 90, source: "telegram" }), 1);
   * assert.equal(db.getSession("old"), undefined);
   * assert.equal(db.sessionCount(), 2);
   * ```
   */
  pruneSessions(options: PruneOptions = {}): number {
    return prune.pruneSessions(this.#store, options ?? {});
  }

  /**
   * Deletes "ghost" sessions, as Python's `prune_empty_ghost_sessions`
   * chooses them: source `tui`, ended, no title, no message, started more
   * than a day ago (by the store's clock). As with every delete here, and
   * unlike Python (whose plain DELETE fails on the foreign key when a ghost
   * has children), their children are kept and become roots; with
   * `sessionsDir` their transcript files go too. Batched as
   * {@linkcode SessionDB.pruneSessions} is.
   *
   * @param options `sessionsDir` (see {@linkcode SessionsDirOptions}).
   * @returns How many sessions were deleted.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt of one transaction (earlier ones stay done).
   * @throws {SqliteError} On any other storage failure (earlier transactions stay done).
   * @throws {TypeError} When `sessionsDir` is not a string, naming the value, or `options`
   *   holds an option it does not take, naming it; nothing is deleted.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * let now = 1_767_000_000;
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => now });
   * db.createSession("ghost", "tui");
   * db.endSession("ghost", "tui_close");
   * db.createSession("kept", "tui");
   * db.appendMessage("kept", { role: "user", content: "hi" });
   * db.endSession("kept", "tui_close");
   * now += 2 * 86400;
   * assert.equal(db.pruneEmptyGhostSessions(), 1);
   * assert.equal(db.getSession("ghost"), undefined);
   * ```
   */
  pruneEmptyGhostSessions(options: SessionsDirOptions = {}): number {
    return prune.pruneEmptyGhostSessions(this.#store, options ?? {});
  }

  /**
   * Reads a `state_meta` value (the key/value table Python and this store
   * share, e.g. `last_auto_prune`).
   *
   * @param key The key.
   * @returns The value; `null` when the key holds NULL (`setMeta(key, null)`,
   *   or Python's `set_meta(key, None)`); `undefined` when the key is absent,
   *   also in a file of an older Hermes (v1–v6) opened read-only, which has
   *   no `state_meta` table yet.
   * @throws {SqliteError} When the file cannot be read.
   * @throws {TypeError} When `key` is not a string, naming the value.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * assert.equal(db.getMeta("my_key"), undefined);
   * db.setMeta("my_key", "1");
   * assert.equal(db.getMeta("my_key"), "1");
   * ```
   */
  getMeta(key: string): string | null | undefined {
    return this.#read((store) => meta.getMeta(store, key));
  }

  /**
   * Writes a `state_meta` value, replacing the one the key had.
   *
   * @param key The key.
   * @param value The value: text, stored as it is; `null`, stored as NULL
   *   (the key stays, {@linkcode SessionDB.getMeta} answers `null`); a whole
   *   number is stored as its digits, any other number as SQLite writes a
   *   float as text (`1777454434.5678909`, not Python's `str(x)`
   *   `1777454434.567891`: give the text to keep Python's spelling).
   * @throws {TypeError} When `key` is not a string, naming the value.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   * @throws {SqliteError} On any other storage failure, at once, with nothing written.
   * @throws {TypeError} When `value` is neither text, a number nor null, naming the value;
   *   nothing is written.
   *
   * @example Replacing a value
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.setMeta("my_key", "1");
   * db.setMeta("my_key", "2");
   * assert.equal(db.getMeta("my_key"), "2");
   * ```
   */
  setMeta(key: string, value: string | null): void {
    meta.setMeta(this.#store, key, value);
  }

  /**
   * Rebuilds the file to give the pages freed by deletes back to the disk:
   * a best-effort `PRAGMA wal_checkpoint(TRUNCATE)`, then `VACUUM`, then a
   * TRUNCATE checkpoint that does not wait (VACUUM writes the whole
   * database into the `-wal`). `VACUUM` holds the write lock for the whole
   * copy (1.6 s for a 272 MB file): every other writer waits, and a Python
   * writer gives up after about 1.3 s. It is not retried, and nothing here
   * runs it unasked: call it when no writer is attached, at startup.
   *
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {SqliteError} When `VACUUM` fails: of `kind` `busy` when another
   *   connection holds the lock past the busy timeout, or when called
   *   inside a write; the file is left as it was.
   *
   * @example After a large delete
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * const big = { role: "user", content: "x".repeat(500) };
   * db.appendMessages("s1", Array.from({ length: 200 }, () => big));
   * db.deleteSession("s1");
   * db.vacuum();
   * assert.equal(db.inspect({ integrity: false }).freePages, 0);
   * ```
   */
  vacuum(): void {
    prune.vacuum(this.#store);
  }

  /**
   * Prunes (and vacuums) at most once per `minIntervalHours`, sharing
   * Python's `last_auto_prune` marker in `state_meta` (a float in a
   * string): skips when the marker is more recent (or in the future);
   * otherwise prunes ended sessions older than `retentionDays` (as
   * {@linkcode SessionDB.pruneSessions}), runs `VACUUM` when something was
   * pruned and `vacuum` is not false (a VACUUM failure is ignored), and
   * writes the marker, even when nothing was pruned. An unreadable marker
   * counts as none.
   *
   * Never throws on what it finds: an error ends the run and is reported in
   * `error` (its message) and `cause` (the error itself); the marker is
   * then not written. A read-only store reports the `ReadonlyError` this
   * way, and so is an option this call does not take (a `TypeError` naming
   * it: `{ retention_days: 365 }` would otherwise prune at 90 days). A
   * closed store throws, as every method then does.
   *
   * @param options `retentionDays` (default 90), `minIntervalHours`
   *   (default 24), `vacuum` (default true) and `sessionsDir`; see
   *   {@linkcode AutoPruneOptions}.
   * @returns `{ skipped, pruned, vacuumed, error?, cause? }` (see
   *   {@linkcode AutoPruneResult}).
   *
   * @example At startup, twice
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * const first = db.maybeAutoPruneAndVacuum({ retentionDays: 90 });
   * assert.deepEqual(first, { skipped: false, pruned: 0, vacuumed: false });
   * assert.notEqual(db.getMeta("last_auto_prune"), undefined);
   * assert.equal(db.maybeAutoPruneAndVacuum().skipped, true);
   * ```
   */
  maybeAutoPruneAndVacuum(options: AutoPruneOptions = {}): AutoPruneResult {
    return prune.maybeAutoPruneAndVacuum(this.#store, options ?? {});
  }

  // ── Statistics ──────────────────────────────────────────────────────────

  /**
   * Sessions, input and output tokens and estimated cost per model
   * (sessions without a model are left out), highest total cost first;
   * models without any cost come last, then by name.
   *
   * @returns One row per model: `model, session_count, total_input,
   *   total_output, total_cost`.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("a", "cli", { model: "cheap" });
   * db.createSession("b", "cli", { model: "dear" });
   * db.updateTokenCounts("a", { inputTokens: 900, estimatedCostUsd: 0.01 });
   * db.updateTokenCounts("b", { inputTokens: 100, estimatedCostUsd: 0.5 });
   * const rows = db.usageByModel();
   * assert.deepEqual(rows.map((u) => u.model), ["dear", "cheap"]);
   * assert.equal(rows[1].total_input, 900);
   * ```
   */
  usageByModel(): ModelUsage[] {
    return this.#read((store) => stats.usageByModel(store));
  }

  /**
   * The sessions that used the most tokens (input plus output), most
   * first; ties by id. Every session counts, children included.
   *
   * @param limit How many sessions at most (default 10).
   * @returns Rows of `id, title, model, total_tokens, estimated_cost_usd`.
   * @throws {RangeError} When `limit` is not a non-negative integer.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.updateTokenCounts("small", { inputTokens: 10, outputTokens: 5 });
   * db.updateTokenCounts("big", { inputTokens: 1000, outputTokens: 200 });
   * const [top] = db.topSessionsByTokens(1);
   * assert.equal(top.id, "big");
   * assert.equal(top.total_tokens, 1200);
   * assert.throws(() => db.topSessionsByTokens(-1), RangeError);
   * ```
   */
  topSessionsByTokens(limit = 10): SessionTokens[] {
    return this.#read((store) => stats.topSessionsByTokens(store, limit));
  }

  /**
   * Sessions, message rows (inactive ones of a newer Hermes' file
   * included), tokens and cost per source (`hermes-state stats`), most
   * sessions first, then by source. Token totals are 0 when no session has
   * any; `estimated_cost` and `actual_cost` are `null` when no session of
   * the source has one.
   *
   * @returns One row per source (see {@linkcode SourceUsage}).
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("t1", "telegram");
   * db.createSession("t2", "telegram");
   * db.createSession("c1", "cli");
   * db.appendMessage("t1", { role: "user", content: "hi" });
   * const [first, second] = db.usageBySource();
   * assert.equal(first.source, "telegram");
   * assert.equal(first.session_count, 2);
   * assert.equal(first.message_count, 1);
   * assert.equal(second.actual_cost, null);
   * ```
   */
  usageBySource(): SourceUsage[] {
    return this.#read((store) => sourceUsage.usageBySource(store));
  }

  /**
   * Sessions, tokens and cost per day, week, month, model or source
   * (`hermes-state usage`, the web page's Usage view). A session counts
   * whole on the day it started (the session row carries its totals), a day
   * of `timeZone` (default UTC; summer time followed as the runtime's `Intl`
   * knows it); weeks start on Monday, and a week is named by its Monday.
   * Token sums are 0 when no session has any; the cost sums are `null` when
   * no session of the group has one.
   *
   * On a newer Hermes's file with per-model usage rows
   * (`session_model_usage`), a session counts as the larger of its totals
   * and its rows' sum, counter by counter (that Hermes records side work,
   * titles or compression, in its rows only); by model, its rows count
   * under the models they name and the rest of its totals under its own
   * model, so a session that switched models counts under each
   * (`sessions` of the rows then add up to more than the sessions).
   *
   * @param options `by` (`day`, `week`, `month`, `model` or `source`;
   *   default `day`), `since` and `until` (start times in Unix seconds,
   *   `until` exclusive), `source` and `timeZone` (`Asia/Shanghai`); see
   *   {@linkcode UsageReportOptions}.
   * @returns One row per group (`key, sessions, input_tokens,
   *   output_tokens, cache_read_tokens, cache_write_tokens,
   *   reasoning_tokens, estimated_cost_usd, actual_cost_usd`): time groups
   *   oldest first, model and source groups by estimated cost, then tokens,
   *   highest first; ties by key (sessions without a model, key `null`,
   *   first).
   * @throws {RangeError} When `by` is not a grouping (`Cannot report
   *   usage: by must be one of day, week, month, model, source, origin:
   *   current value is "year"`), `since` or `until` is not a finite number,
   *   or `timeZone` is not a time zone.
   * @throws {TypeError} When `by` is `origin`: a file records no origins
   *   (a PostgreSQL store that `hermes-state sync` fills does).
   * @throws {TypeError} When `source` is not a string, naming the value.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   *
   * @example Tokens per day and per model
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => 1_777_000_000 });
   * db.createSession("s1", "cli", { model: "m" });
   * db.updateTokenCounts("s1", { inputTokens: 10, outputTokens: 2, estimatedCostUsd: 0.1 });
   * db.createSession("s2", "telegram");
   * const [day] = db.usageReport({ by: "day" });
   * assert.equal(day.key, "2026-04-24");
   * assert.equal(day.sessions, 2);
   * assert.equal(day.input_tokens, 10);
   * assert.deepEqual(db.usageReport({ by: "model" }).map((row) => row.key), ["m", null]);
   * assert.deepEqual(db.usageReport({ source: "cli", until: 1_777_000_000 }), []);
   * // 1_777_000_000 is 03:06 UTC on 24 April: still the 23rd in Los Angeles.
   * const [pacific] = db.usageReport({ timeZone: "America/Los_Angeles" });
   * assert.equal(pacific.key, "2026-04-23");
   * ```
   */
  usageReport(options: UsageReportOptions = {}): UsageRow[] {
    return this.#read((store) => usage.usageReport(store, options ?? {}));
  }

  /**
   * A session's per-model usage rows, in a newer Hermes's file (since its
   * schema 20, `session_model_usage`): each call's tokens and cost under
   * the model and billing route it used, and side work (a title, a
   * compression) under its `task`. One row per model, route and task, in
   * that order; a column the file's table lacks (`task` before schema 22)
   * is `''`, `0` or `null`; values as the file holds them. What
   * `importSession`'s `modelUsage` writes back, and how `copy` carries them.
   *
   * @param sessionId The session.
   * @returns Its rows; `[]` for a session without any, an unknown session,
   *   and a file without that table (a v11 file, as this store creates).
   * @throws {TypeError} When `sessionId` is not a string, naming the value.
   * @throws {SqliteError} When the file cannot be read.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * db.createSession("s1", "cli");
   * assert.deepEqual(db.getModelUsage("s1"), []);
   * ```
   */
  getModelUsage(sessionId: string): SessionModelUsage[] {
    checkKeyText("read model usage", "sessionId", sessionId);
    return this.#read((store) => readSessionModelUsage(store, sessionId));
  }

  /**
   * A marker that changes whenever anything is committed to the file, by
   * any connection in any process (SQLite's `PRAGMA data_version` with this
   * connection's own `total_changes()`): two equal answers mean nothing was
   * committed in between. Cheap enough to poll every second; live pages do.
   *
   * @returns An opaque text; compare it, do not parse it.
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   *
   * @example Noticing another connection's write
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using reader = await SessionDB.open({ path: `${dir}/state.db` });
   * using writer = await SessionDB.open({ path: `${dir}/state.db` });
   * const before = reader.dataVersion();
   * assert.equal(reader.dataVersion(), before);
   * writer.createSession("s1", "cli");
   * assert.notEqual(reader.dataVersion(), before);
   * ```
   */
  dataVersion(): string {
    const marker = version.dataVersion(this.#store);
    // A store opened again starts its own count: the number of opens keeps the marker moving.
    return this.#slot.reopens === 0 ? marker : `${this.#slot.reopens}/${marker}`;
  }

  /**
   * Describes the open database file (`hermes-state info`): schema version,
   * SQLite version (with a warning for an unsafe one), journal mode, WAL
   * size, page size, page and free-page counts, row counts, FTS tables (and
   * the stale ones), `state_meta` keys, and `PRAGMA quick_check` of every
   * table and index (up to 100 problems), with known harmless conditions
   * told apart from real damage. A damaged table or page is reported (in
   * `integrity`, `damage`, and a `null` row count) instead of thrown.
   * Changes nothing; works read-only.
   *
   * @param options `integrity: false` skips the check, which reads every
   *   page; `searchIndexes: true` also verifies the full-text indexes, which
   *   takes about 40 s per million messages (see {@linkcode InspectOptions}).
   * @returns The description (see {@linkcode DatabaseInfo}).
   * @throws {SqliteError} On a storage failure other than a damaged page.
   * @throws {OpenError} When the file is read without locks (this user may
   *   not write it or its folder) and another process wrote it during each
   *   of five tries, spread over about four seconds: the check could not
   *   tell that from damage.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * const info = db.inspect();
   * assert.equal(info.schemaVersion, 11);
   * assert.equal(info.journalMode, "wal");
   * assert.deepEqual(info.integrity, ["ok"]);
   * assert.deepEqual(info.damage, []);
   * assert.equal(db.inspect({ integrity: false }).integrity, null);
   * ```
   */
  inspect(options: InspectOptions = {}): DatabaseInfo {
    checkOptionNames("inspect database", options, INSPECT_OPTION_NAMES);
    const given = options ?? {};
    return openSlot(this.#slot).steady((store) =>
      inOneRead(store.db, () => inspecting.inspectDatabase(store, given))
    );
  }

  /**
   * The sessions {@linkcode SessionDB.pruneSessions} with the same options
   * would delete, without deleting them (`hermes-state prune --dry-run`):
   * the ended sessions started before now minus `olderThanDays` days,
   * oldest first (then by id). With `ghosts: true`, the sessions
   * {@linkcode SessionDB.pruneEmptyGhostSessions} would delete instead.
   *
   * @param options `olderThanDays` (default 90) and `source` (every source
   *   when blank), or `ghosts`; see {@linkcode PruneCandidatesOptions}.
   * @returns The sessions (`id, source, title, started_at, ended_at,
   *   end_reason, message_count`), oldest first.
   * @throws {RangeError} When `olderThanDays` is negative or not a finite
   *   number, or `ghosts` comes with `olderThanDays` or `source`.
   * @throws {TypeError} When `source` is not a string, naming the value, or
   *   `options` holds another option (as `pruneSessions`).
   * @throws {SqliteError} When the file cannot be read (`kind` `corrupt`, `io`…).
   *
   * @example A dry run
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * let now = 1_767_000_000;
   * using db = await SessionDB.open({ path: `${dir}/state.db`, clock: () => now });
   * db.createSession("old", "cli");
   * db.endSession("old", "cli_close");
   * now += 40 * 86400;
   * assert.deepEqual(db.pruneCandidates({ olderThanDays: 30 }).map((s) => s.id), ["old"]);
   * assert.deepEqual(db.pruneCandidates(), []);
   * assert.equal(db.sessionCount(), 1); // nothing deleted
   * ```
   */
  pruneCandidates(
    options: PruneCandidatesOptions = {},
  ): PruneCandidate[] {
    return this.#read((store) => pruneCandidates.pruneCandidates(store, options ?? {}));
  }

  // ── Import ──────────────────────────────────────────────────────────────

  /**
   * Imports one exported session (a parsed line of a JSONL export, as
   * {@linkcode SessionDB.exportSession} writes it) with its original
   * columns, message timestamps and, when no other row uses them, message
   * ids (new ones, when they are taken or one is past 2^62, where the file's
   * ids would soon run out, in the order of the original ids).
   * Everything happens in one write transaction: on any error nothing
   * of the record is written. A session already present is skipped, or
   * with `replace` replaced (its row updated in place, so its children keep
   * their parent, and its messages rewritten). A parent that is not in the
   * file yet is left out and reported in `deferredParent`, for
   * {@linkcode SessionDB.restoreParentLinks}. Columns this file has no place
   * for are reported in `droppedColumns`; counters the record leaves out
   * are computed from its messages. A title another session has is
   * replaced by the lineage's next numbered title (`"notes #2"`), reported
   * in `renamedTo`: the session is imported whole.
   *
   * With `modelUsage`, the session's per-model usage rows (as
   * {@linkcode SessionDB.getModelUsage} reads them) are written with it,
   * replacing those it had; a file without that table (a v11 file) names
   * `session_model_usage` in `droppedColumns`.
   *
   * @param record The parsed record: session columns plus `messages`.
   * @param options `replace` (default false) and `modelUsage`; see {@linkcode ImportOptions}.
   * @returns `{ outcome, id, messages, deferredParent, droppedColumns,
   *   relinked, renamedTo }` (see {@linkcode ImportResult}).
   * @throws {TypeError} When the record is not an object, lacks a non-empty
   *   string `id`, a string `source`, a numeric `started_at` or a `messages`
   *   list, has a non-string `parent_session_id`, or a message lacks a
   *   string `role` or a numeric `timestamp`; or when a `modelUsage` row
   *   lacks a string `model` or holds a value not of its column's kind; the
   *   message names the field and its value.
   * @throws {RangeError} When two `modelUsage` rows share a model, billing
   *   route and task.
   * @throws {SqliteError} On other storage failures. Nothing is written.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was written.
   *
   * @example Copying a session between two files
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using a = await SessionDB.open({ path: `${dir}/a.db` });
   * a.createSession("s1", "cli");
   * a.appendMessage("s1", { role: "user", content: "hello" });
   * using b = await SessionDB.open({ path: `${dir}/b.db` });
   * const record = a.exportSession("s1")!;
   * assert.equal(b.importSession(record).outcome, "imported");
   * assert.equal(b.importSession(record).outcome, "skipped");
   * assert.equal(b.importSession(record, { replace: true }).outcome, "replaced");
   * assert.deepEqual(b.getMessages("s1").map((m) => m.content), ["hello"]);
   * assert.throws(() => b.importSession({ id: "x" }), TypeError);
   * ```
   */
  importSession(record: unknown, options: ImportOptions = {}): ImportResult {
    checkOptionNames("import session", options, IMPORT_OPTION_NAMES);
    return importing.importSession(this.#store, record, options);
  }

  /**
   * Links imported children to parents that arrived after them (an export
   * lists the newest activity first, so a child often comes before its
   * parent), in one transaction. A link is made only when the child has no
   * parent now and the parent exists; the others stay roots, as a deleted
   * parent leaves them. An empty list touches nothing (a read-only store
   * still refuses it, as every write).
   *
   * @param links The `deferredParent` answers of
   *   {@linkcode SessionDB.importSession}, as `{ id, parentId }` (see
   *   {@linkcode ParentLink}).
   * @returns How many links were made.
   * @throws {TypeError} When `links` is not an array of `{ id, parentId }`
   *   with both ids strings, or a link makes a session its own parent,
   *   naming the bad link; nothing is linked.
   * @throws {ReadonlyError} When the database was opened with `readonly: true`,
   *   even for an empty list.
   * @throws {WriteBusyError} When another connection kept the write lock
   *   through every attempt (15 by default); nothing was linked.
   * @throws {SqliteError} On any other storage failure, at once, with nothing linked.
   *
   * @example A child imported before its parent
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionDB } from "./session_db.ts";
   * const dir = await Deno.makeTempDir();
   * using db = await SessionDB.open({ path: `${dir}/state.db` });
   * const child = { id: "c", source: "cli", started_at: 2, parent_session_id: "p", messages: [] };
   * const { deferredParent } = db.importSession(child);
   * assert.equal(deferredParent, "p");
   * db.importSession({ id: "p", source: "cli", started_at: 1, messages: [] });
   * assert.equal(db.restoreParentLinks([{ id: "c", parentId: deferredParent! }]), 1);
   * assert.equal(db.getSession("c")?.parent_session_id, "p");
   * ```
   */
  restoreParentLinks(links: readonly ParentLink[]): number {
    return importing.restoreParentLinks(this.#store, links);
  }
}
