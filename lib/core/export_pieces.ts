/**
 * An export read in pieces: each session's row, then its messages a chunk
 * at a time, so that writing a session never holds all its messages (nor
 * one string of them) in memory. What the CLI's `export` and the web's
 * download write from; the library's `exportSession`, `exportAll` and
 * `iterateExport` keep giving whole records.
 *
 * A store that reads in pieces says so with a method under
 * {@linkcode EXPORT_PIECES}; any other {@linkcode SessionStore} is read
 * through `exportSession` / `iterateExport`, each record cut into pieces
 * after it was read whole.
 *
 * @module
 */
import type { SessionStore } from "./session_store.ts";
import type { MessageRow, SessionExport, SessionRow } from "./types.ts";
import type { ExportOptions } from "./transfer_options.ts";
import { checkKeyText } from "./session_options.ts";

/** Messages per chunk: with tool results of 100 KB, about 10 MB of text. */
export const EXPORT_CHUNK_MESSAGES = 100;

/**
 * One piece of an export: a session's row (every column as the store holds
 * it, `last_active` when a list of sessions is exported; no `messages`),
 * which begins that session, or the next messages of the session begun last,
 * in transcript order (inactive ones included). A session's pieces all come
 * before the next session's row.
 */
export type ExportPiece =
  | { readonly session: SessionRow }
  | { readonly messages: readonly MessageRow[] };

/**
 * What to export: one session by its exact id (as `exportSession`), or the
 * sessions `iterateExport` gives for these options (an `origin` too on a
 * store that records origins).
 */
export type ExportSelection =
  | { readonly id: string }
  | { readonly filter: ExportOptions & { readonly origin?: string } };

/** How an export is read in pieces. */
export interface ExportPiecesOptions {
  /** Messages per chunk (at least 1); {@linkcode EXPORT_CHUNK_MESSAGES} by default. */
  readonly chunk?: number;
  /**
   * Read each session, its row and all its chunks, in one snapshot held
   * while the pieces are consumed (a SQLite file: a savepoint on the
   * store's connection, which a write on that connection cannot run
   * beside, for a command that is the connection's only user, and only in
   * WAL mode, where it keeps no other writer waiting; a PostgreSQL server:
   * a read-only REPEATABLE READ transaction on a connection of its own). Otherwise
   * the session's row and the list of its messages are read in one
   * snapshot, each chunk in one of its own: a message deleted meanwhile is
   * left out, one added meanwhile comes with the next export.
   * @default {false}
   */
  readonly holdSnapshot?: boolean;
  /**
   * Whether a session is exported, asked of its row (as its first piece
   * would carry it, `last_active` included when a list is exported) before
   * any of its messages is read: a session it refuses gives no piece, and a
   * store that reads in pieces itself reads none of its messages (a
   * PostgreSQL server reads their ids with the row). It may be asked more
   * than once of a session (a read tried again while the file is locked),
   * and what it throws ends the export. Every session by default.
   */
  readonly keep?: (session: SessionRow) => boolean;
}

/** The key of a store's own piece reader (an internal seam; not part of `mod.ts`). */
export const EXPORT_PIECES: unique symbol = Symbol("hermes-state export pieces");

/** A store that reads an export in pieces itself. */
export interface PieceExporter {
  /** The pieces of `selection`, read a chunk at a time; see {@linkcode readExportPieces}. */
  [EXPORT_PIECES](
    selection: ExportSelection,
    options: Required<ExportPiecesOptions>,
  ): AsyncIterableIterator<ExportPiece>;
}

/**
 * The chunk size of `options`, checked.
 *
 * @throws {RangeError} When it is not a positive integer, naming the value.
 */
function chunkOf(options: ExportPiecesOptions): number {
  const chunk = options.chunk ?? EXPORT_CHUNK_MESSAGES;
  if (!Number.isSafeInteger(chunk) || chunk < 1) {
    throw new RangeError(
      `Cannot export: chunk must be a positive integer: current value is ${chunk}`,
    );
  }
  return chunk;
}

/**
 * The pieces of an export: the records `exportSession(id)` or
 * `iterateExport(filter)` give, with the same rows and values in the same
 * order, each session's messages a chunk at a time. A session not found,
 * or refused by `keep`, gives no piece.
 *
 * @param store The store.
 * @param selection One session, or the sessions of a filter.
 * @param options The chunk size, whether each session is one held snapshot, and which are kept.
 * @returns The pieces; ending it early (`return`) ends the reads.
 * @throws {TypeError} At once, when the id asked for is not text, naming the value.
 * @throws What `exportSession` / `iterateExport` throw (`UnexportableIdError`…), on a `next()`.
 */
export function readExportPieces(
  store: SessionStore,
  selection: ExportSelection,
  options: ExportPiecesOptions = {},
): AsyncIterableIterator<ExportPiece> {
  // Checked here for every engine, as `exportSession` checks it.
  if ("id" in selection) checkKeyText("export session", "id", selection.id);
  const settled: Required<ExportPiecesOptions> = {
    chunk: chunkOf(options),
    holdSnapshot: options.holdSnapshot ?? false,
    keep: options.keep ?? keepEvery,
  };
  const own = (store as Partial<PieceExporter>)[EXPORT_PIECES];
  if (typeof own === "function") return own.call(store, selection, settled);
  return recordPieces(store, selection, settled);
}

/** Keeps every session: the default of `keep`. */
function keepEvery(): boolean {
  return true;
}

/**
 * The pieces of whole records, for a store that has no reader of its own:
 * a session `keep` refuses was read whole all the same, and gives no piece.
 */
async function* recordPieces(
  store: SessionStore,
  selection: ExportSelection,
  options: Required<ExportPiecesOptions>,
): AsyncIterableIterator<ExportPiece> {
  if ("id" in selection) {
    const record = await store.exportSession(selection.id);
    if (record !== undefined) yield* piecesOf(record, options);
    return;
  }
  for await (const record of store.iterateExport(selection.filter)) {
    yield* piecesOf(record, options);
  }
}

/**
 * A whole record as pieces: its row, then its messages `chunk` at a time;
 * none when `keep` refuses its row.
 *
 * @param record A record of `exportSession` / `iterateExport`.
 * @param options Messages per piece, and which sessions are kept.
 * @returns The pieces.
 */
function* piecesOf(
  record: SessionExport,
  { chunk, keep }: Required<ExportPiecesOptions>,
): Generator<ExportPiece> {
  const { messages, ...row } = record;
  const session = row as SessionRow;
  if (!keep(session)) return;
  yield { session };
  for (let at = 0; at < messages.length; at += chunk) {
    yield { messages: messages.slice(at, at + chunk) };
  }
}
