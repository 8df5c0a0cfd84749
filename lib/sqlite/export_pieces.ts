/**
 * An export of a SQLite file read in pieces (`lib/core/export_pieces.ts`):
 * each session's row, then its messages a chunk at a time, every value as
 * `exportSession` / `iterateExport` give it (`export.ts`: integers beyond
 * 2^53, BLOBs, text that is not valid UTF-8, stored text an import would
 * not write again), in the same order.
 *
 * A session's row and the list of its messages are read in one snapshot;
 * the messages are then read by that list, a chunk at a time. Held (a
 * savepoint kept open until the session's last chunk was read), the
 * snapshot covers the chunks too, as `iterateExport` reads a session whole;
 * only in WAL mode, where a held snapshot keeps no writer waiting (in a
 * rollback journal mode it is a shared lock: each chunk is read on its own).
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { MessageRow, SessionRow, SessionRowWithActivity } from "../core/types.ts";
import type { ExportPiece, ExportPiecesOptions, ExportSelection } from "../core/export_pieces.ts";
import { exactMessagesWhere, exactSession, exportSessionRows, sessionAgainSql } from "./export.ts";
import { getSession } from "./sessions.ts";
import { readsSessionModelUsage } from "./session_model_usage.ts";

/** How the pieces reach the store's connection. */
export interface StoreAccess {
  /**
   * Runs a read on the store's connection (trying again while the file is
   * locked): the current store, or `on`, a pinned one.
   */
  read<T>(read: (store: Store) => T, on?: Store): Promise<T>;
  /**
   * The current store, kept open on its connection until `unpin`, which a
   * held snapshot (a savepoint) needs across calls: the file opened again
   * meanwhile (after a writer's checkpoint, a read-only store is) left the
   * savepoint behind on the old connection ("no such savepoint").
   * `undefined` for a store read without locks, which holds no snapshot.
   */
  pin(): Promise<Store | undefined>;
  /** Lets a pinned store go. */
  unpin(store: Store): void;
}

/** The savepoint a session's read snapshot is. */
const SAVEPOINT = "hermes_export_pieces";

/**
 * The ids of a session's messages in transcript order, as text (an id may
 * pass 2^53). Ids, not rowids: an older Hermes's file is read through a
 * view (`read_views.ts`), which has none.
 */
const IDS_SQL = `SELECT CAST(id AS TEXT) AS hermes_id FROM messages
  WHERE session_id = ? ORDER BY timestamp, id`;

/** The messages of a chunk, by the ids of a JSON array. */
const CHUNK_WHERE = "id IN (SELECT value FROM json_each(?))";

/** A session's row and the ids of its messages, read in one snapshot. */
interface SessionStart {
  readonly session: SessionRow;
  readonly ids: readonly string[];
}

/**
 * How a session's start is read: `listed` (with `last_active`), which sessions are kept, and
 * whether the file may hold per-model usage rows (asked once for the export).
 */
interface StartReading {
  readonly listed: boolean;
  readonly keep: (session: SessionRow) => boolean;
  readonly usage: boolean;
}

/**
 * Reads the session's row (`listed`: again as the session list reads it,
 * with `last_active`) and its messages' ids in the snapshot of an open
 * savepoint; nothing more when `keep` refuses the row (its messages are not
 * read, not even their ids).
 */
function readStart(store: Store, id: string, reading: StartReading): SessionStart | undefined {
  const row = reading.listed
    ? store.statement(sessionAgainSql(store)).get(id) as SessionRowWithActivity | undefined
    : getSession(store, id);
  if (row === undefined) return undefined;
  const session = exactSession(store, row, reading.usage);
  if (!reading.keep(session)) return undefined;
  const ids = store.statement(IDS_SQL).all(id).map((read) => String(read.hermes_id));
  return { session, ids };
}

/**
 * Whether a snapshot of the file may be held while its pieces are written out: in WAL mode,
 * where a reader's snapshot keeps no writer waiting. In a rollback journal mode (`delete`,
 * `truncate`, `persist`) it is a shared lock, which keeps every writer from committing for as
 * long as the output pauses (`export - | less`): each chunk is read in a snapshot of its own.
 */
function mayHold(store: Store): boolean {
  const mode = store.statement("PRAGMA journal_mode").get()?.journal_mode;
  return String(mode).toLowerCase() === "wal";
}

/**
 * Opens the savepoint and reads the session's start in it; leaves the
 * savepoint open when `hold` is given and the session is there (and kept),
 * else ends it.
 */
function openSession(
  store: Store,
  id: string,
  reading: StartReading,
  hold: boolean,
): SessionStart | undefined {
  store.db.exec(`SAVEPOINT ${SAVEPOINT}`);
  let start: SessionStart | undefined;
  try {
    start = readStart(store, id, reading);
  } catch (error) {
    rollBack(store);
    throw error;
  }
  if (!hold || start === undefined) store.db.exec(`RELEASE ${SAVEPOINT}`);
  return start;
}

/** Ends the savepoint, having changed nothing. */
function rollBack(store: Store): void {
  store.db.exec(`ROLLBACK TO ${SAVEPOINT}; RELEASE ${SAVEPOINT}`);
}

/**
 * The messages of a chunk of ids, in transcript order, as an export carries them.
 *
 * @param store The open store.
 * @param ids The ids (digits).
 * @returns The messages still there.
 */
function readChunk(store: Store, ids: readonly string[]): MessageRow[] {
  return exactMessagesWhere(store, CHUNK_WHERE, [`[${ids.join(",")}]`]);
}

/**
 * The pieces of one session: its row, then its messages `chunk` at a time;
 * none when it is not there (any more), or `keep` refuses it.
 */
async function* sessionPieces(
  access: StoreAccess,
  id: string,
  how: Omit<StartReading, "keep">,
  options: Required<ExportPiecesOptions>,
): AsyncGenerator<ExportPiece> {
  // A held snapshot is a savepoint on one connection: every read of the session runs there.
  const on = options.holdSnapshot ? await access.pin() : undefined;
  const hold = on !== undefined;
  try {
    const reading = { ...how, keep: options.keep };
    const start = await access.read((store) => openSession(store, id, reading, hold), on);
    if (start === undefined) return;
    let done = false;
    try {
      yield { session: start.session };
      for (let at = 0; at < start.ids.length; at += options.chunk) {
        const ids = start.ids.slice(at, at + options.chunk);
        const messages = await access.read((store) => readChunk(store, ids), on);
        if (messages.length > 0) yield { messages };
      }
      if (hold) await access.read((store) => store.db.exec(`RELEASE ${SAVEPOINT}`), on);
      done = true;
    } finally {
      // Stopped early or failed: the held snapshot ends, and the error (if any) stands.
      if (hold && !done) await access.read(rollBack, on).catch(() => {});
    }
  } finally {
    if (on !== undefined) access.unpin(on);
  }
}

/**
 * The pieces of `selection` in a SQLite file: `exportSession(id)`'s record,
 * or `iterateExport(filter)`'s (the session list read first, each session's
 * row read again with its messages), each session's messages `chunk` at a time.
 *
 * @param access Runs reads on the store's connection, or on one pinned for a held snapshot.
 * @param selection One session, or the sessions of a filter (no `origin`: checked by the caller).
 * @param options The chunk size, whether each session is one held snapshot, and which are
 *   kept (asked of each row before its messages are read).
 * @returns The pieces.
 * @throws {UnexportableIdError} When a listed session's id is not valid UTF-8 text.
 */
export async function* sqliteExportPieces(
  access: StoreAccess,
  selection: ExportSelection,
  options: Required<ExportPiecesOptions>,
): AsyncGenerator<ExportPiece> {
  // Held only where the file's journal mode lets a snapshot keep no writer waiting (once for
  // the export: the mode does not change under it).
  const holdSnapshot = options.holdSnapshot && await access.read(mayHold);
  const reading = { ...options, holdSnapshot };
  // Asked once for the export, not for each session.
  const usage = await access.read(readsSessionModelUsage);
  if ("id" in selection) {
    yield* sessionPieces(access, selection.id, { listed: false, usage }, reading);
    return;
  }
  const rows = await access.read((store) => exportSessionRows(store, selection.filter));
  for (const row of rows) yield* sessionPieces(access, row.id, { listed: true, usage }, reading);
}
