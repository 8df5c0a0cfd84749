/**
 * The export reads of the PostgreSQL engine: one session, every session an
 * export covers a page at a time, and the export in pieces, each read in
 * one snapshot of the server, and rejecting once the store is closed as
 * every method then does.
 *
 * @module
 */
import {
  hasModelUsageTable,
  modelUsageBySessionPg,
  modelUsageOfPg,
  readModelUsagePg,
} from "./_usage.ts";
import { withModelUsage } from "../core/session_model_usage.ts";
import { checkKeyText } from "../core/session_options.ts";
import type { ExportOptions } from "../core/transfer_options.ts";
import type {
  MessageRow,
  SessionExport,
  SessionExportWithActivity,
  SessionRow,
  SessionRowWithActivity,
} from "../core/types.ts";
import type { ExportPiece, ExportPiecesOptions, ExportSelection } from "../core/export_pieces.ts";
import { messageFromRow } from "../core/message_row.ts";
import { withTextImportKeeps } from "../core/text_import_keeps.ts";
import type { PgClient, PgQuery, PgRow, PgValue } from "./_client_types.ts";
import {
  EXACT_MESSAGE_COLUMNS,
  EXACT_SESSION_COLUMNS,
  exactMessageRow,
  exactSessionRow,
} from "./_exact_rows.ts";
import { jsonParam } from "./_text_codec.ts";
import { holdSnapshot } from "./_held_snapshot.ts";
import { notOpenError } from "./_closed_store.ts";
import { type OriginFilter, sourceAndOrigin, startedRangeClauses } from "./_session_filters.ts";

/** What the export of a store reads through: the store's own reads and state. */
export interface ExportReads {
  /** The store's query: one that rejects once the store is closed. */
  readonly query: PgQuery;
  /** Reads in one snapshot of the server (a read-only REPEATABLE READ transaction). */
  inSnapshot<T>(read: (query: PgQuery) => Promise<T>): Promise<T>;
  /** The store's pool, for the reads of a session in pieces and the snapshot held for them. */
  readonly client: PgClient;
  /** Whether the store has been closed. */
  closed(): boolean;
}

/**
 * Messages a page of `iterateExport` holds (but for a session alone that
 * holds more), and the most one statement of it reads.
 */
export const EXPORT_PAGE = 2000;

/** The alias of the number of messages a session holds, read with the listing. */
const HELD = "hermes_messages_held";

/**
 * The rows of the sessions `where` selects, with their last activity, in
 * export order; `counted`, with how many messages each holds (as
 * {@linkcode HELD}), counted by the same grouping: a row's stored
 * `message_count` may be stale (an old or hand-edited row).
 */
const EXPORT_SESSIONS = (where: string, counted = false) =>
  `SELECT ${EXACT_SESSION_COLUMNS}, COALESCE(m.last_active, s.started_at) AS last_active${
    counted ? `, COALESCE(m.held, 0) AS ${HELD}` : ""
  }
   FROM sessions s
   LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active${
    counted ? ", COUNT(*) AS held" : ""
  } FROM messages GROUP BY session_id) m
     ON m.session_id = s.id
   ${where}
   ORDER BY last_active DESC, s.started_at DESC, s.id COLLATE "C" DESC`;

/**
 * The messages of the sessions `$1` names (a JSON array of ids), at most
 * {@linkcode EXPORT_PAGE} of them, in the order of the session, time and
 * id; with `$2`, those after the message of that id, in that order.
 */
const PAGE_MESSAGES = (after: boolean) =>
  `SELECT ${EXACT_MESSAGE_COLUMNS} FROM messages m
   WHERE m.session_id IN (SELECT json_array_elements_text($1::text::json))${
    after
      ? `
     AND (m.session_id, m.timestamp, m.id) >
       (SELECT a.session_id, a.timestamp, a.id FROM messages a WHERE a.id = $2::bigint)`
      : ""
  }
   ORDER BY m.session_id, m.timestamp, m.id
   LIMIT ${EXPORT_PAGE}`;

/**
 * The rows of {@linkcode EXPORT_SESSIONS} of the sessions `$1` names (a JSON
 * array of ids), unordered: each one's activity read by the index, not by
 * a grouping of every message.
 */
const EXPORT_SESSIONS_BY_IDS = `SELECT ${EXACT_SESSION_COLUMNS},
    COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)
      AS last_active
  FROM sessions s WHERE s.id IN (SELECT json_array_elements_text($1::text::json))`;

/**
 * One session with every message (`exportSession`), read in one snapshot.
 *
 * @param reads The store's reads.
 * @param id A session id.
 * @returns The session and its messages, or `undefined` when it is unknown.
 */
export async function exportSessionPg(
  reads: ExportReads,
  id: string,
): Promise<SessionExport | undefined> {
  checkKeyText("export session", "id", id);
  // The row and its messages of one state (a message written between two reads came with a
  // row that did not count it).
  const read = await reads.inSnapshot(async (query) => {
    const [session] = await query(
      `SELECT ${EXACT_SESSION_COLUMNS} FROM sessions s WHERE s.id = $1`,
      [id],
    );
    if (session === undefined) return undefined;
    // Every message (those a newer Hermes marks inactive too), as getMessages with
    // includeInactive.
    const rows = await query(
      `SELECT ${EXACT_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = $1
         ORDER BY m.timestamp, m.id`,
      [id],
    );
    return { session, rows, usage: await modelUsageOfPg(query, id) };
  });
  if (read === undefined) return undefined;
  const messages = read.rows.map((row) =>
    withTextImportKeeps(messageFromRow(exactMessageRow(row)))
  );
  const session = withModelUsage(
    exactSessionRow(read.session) as unknown as SessionRow,
    read.usage,
  );
  return { ...session, messages };
}

/**
 * The sessions an export covers, without their messages, in export order.
 *
 * @param query The store's query.
 * @param options The export's filters (checked).
 * @returns Their rows with `last_active`.
 */
export async function exportedSessions(
  query: PgQuery,
  options: ExportOptions & OriginFilter,
): Promise<SessionRowWithActivity[]> {
  return (await listExported(query, options, false))
    .map(exactSessionRow) as unknown as SessionRowWithActivity[];
}

/** The rows of {@linkcode exportedSessions} as the client reads them, `counted` as there. */
async function listExported(
  query: PgQuery,
  options: ExportOptions & OriginFilter,
  counted: boolean,
): Promise<PgRow[]> {
  const params: PgValue[] = [];
  let where = sourceAndOrigin(options, params, "export sessions");
  const range = startedRangeClauses(options, params, "export sessions");
  if (range.length > 0) where += `${where === "" ? "WHERE " : " AND "}${range.join(" AND ")}`;
  return await query(EXPORT_SESSIONS(where, counted), params);
}

/**
 * The messages of a page's sessions, read {@linkcode EXPORT_PAGE} at a time
 * (each read goes on after the last message of the one before), as the
 * client returns them.
 */
async function pageMessages(query: PgQuery, ids: string): Promise<PgRow[]> {
  const rows: PgRow[] = [];
  let after: PgValue | undefined;
  for (;;) {
    const params = after === undefined ? [ids] : [ids, after];
    const read = await query(PAGE_MESSAGES(after !== undefined), params);
    for (const row of read) rows.push(row);
    if (read.length < EXPORT_PAGE) return rows;
    // The id's digits, read before exactMessageRow makes them a number.
    after = String(read[read.length - 1].id);
  }
}

/**
 * The sessions an export covers with their messages (`iterateExport`), a
 * page of about 2000 messages read at a time, each page in one snapshot.
 * A page is made of whole sessions by the number of messages each holds,
 * counted with the listing (not by its stored `message_count`, which an
 * old or hand-edited row may have wrong), and its messages are read 2000
 * at most a statement: a session alone holding more is held whole, but
 * read in parts.
 *
 * @param reads The store's reads.
 * @param options The export's filters (checked).
 * @returns The sessions, in export order.
 */
export async function* iterateExportPg(
  reads: ExportReads,
  options: ExportOptions & OriginFilter,
): AsyncIterableIterator<SessionExportWithActivity> {
  const listing = await listExported(reads.query, options ?? {}, true);
  // How many messages each session holds, counted: its stored message_count may be stale.
  const held = listing.map((row) => Number(row[HELD]));
  const sessions = listing.map((row) => {
    delete row[HELD];
    return exactSessionRow(row) as unknown as SessionRowWithActivity;
  });
  for (let at = 0; at < sessions.length;) {
    // A page of sessions holds about EXPORT_PAGE messages (at least one session), so memory
    // stays bounded however the messages are spread; each statement reads EXPORT_PAGE at most.
    let end = at + 1;
    let messages = held[at];
    while (end < sessions.length && messages + held[end] <= EXPORT_PAGE) {
      messages += held[end];
      end++;
    }
    const listed = sessions.slice(at, end);
    at = end;
    // The page's rows read again with their messages, in one snapshot: the listing is older
    // (a row that did not count a message written since, or a session deleted since, which
    // is left out as the SQLite engine leaves it out).
    const ids = jsonParam(listed.map((s) => s.id));
    const { again, rows, usage } = await reads.inSnapshot(async (query) => ({
      again: await query(EXPORT_SESSIONS_BY_IDS, [ids]),
      rows: await pageMessages(query, ids),
      usage: await modelUsageBySessionPg(query, listed.map((s) => s.id)),
    }));
    const byId = new Map(
      again.map((row) => exactSessionRow(row) as unknown as SessionRowWithActivity)
        .map((row) => [row.id, withModelUsage(row, usage.get(row.id) ?? [])]),
    );
    const page = listed.flatMap((s) => byId.get(s.id) ?? []);
    const bySession = new Map<string, MessageRow[]>();
    for (const row of rows) {
      const message = withTextImportKeeps(messageFromRow(exactMessageRow(row)));
      let list = bySession.get(message.session_id);
      if (list === undefined) bySession.set(message.session_id, list = []);
      list.push(message);
    }
    for (const session of page) {
      // Resumed after close(), it rejects as every method then does (a closed SQLite store's).
      if (reads.closed()) throw notOpenError();
      yield { ...session, messages: bySession.get(session.id) ?? [] };
    }
  }
}

/**
 * The export in pieces (`lib/core/export_pieces.ts`): the rows and values
 * of `exportSession` / `iterateExport`, each session's row read again with
 * the list of its messages' ids, which are read a chunk at a time (a
 * message deleted meanwhile is left out), or, with `holdSnapshot`, all of
 * a session's reads in one snapshot held while its pieces are consumed;
 * a session `keep` refuses gives no piece, and none of its messages is read.
 *
 * @param reads The store's reads.
 * @param selection One session, or the filters of an export.
 * @param options The chunk of messages, whether to hold a snapshot, and which sessions are kept.
 * @returns The pieces, in export order.
 */
export async function* exportPiecesPg(
  reads: ExportReads,
  selection: ExportSelection,
  options: Required<ExportPiecesOptions>,
): AsyncIterableIterator<ExportPiece> {
  // Asked once for the export, not for each session (a statement more for each).
  const usage = await hasModelUsageTable(reads.query);
  if ("id" in selection) {
    yield* sessionPieces(reads, selection.id, { listed: false, usage }, options);
    return;
  }
  for (const session of await exportedSessions(reads.query, selection.filter ?? {})) {
    yield* sessionPieces(reads, session.id, { listed: true, usage }, options);
  }
}

/**
 * How a session of an export in pieces is read: `listed` (its row with
 * `last_active`), and whether the store has per-model usage rows to read.
 */
interface PieceReading {
  readonly listed: boolean;
  readonly usage: boolean;
}

/**
 * One session of an export in pieces, each of its reads in one snapshot
 * held while the pieces are consumed when `holdSnapshot` asks (a session
 * cleared and written again meanwhile came as its first chunks, the
 * others left out: a transcript the server never held).
 */
async function* sessionPieces(
  reads: ExportReads,
  id: string,
  reading: PieceReading,
  options: Required<ExportPiecesOptions>,
): AsyncGenerator<ExportPiece> {
  // Each read after close() rejects as every method then does (a closed SQLite store's).
  const whileOpen = (read: PgQuery): PgQuery => (text, params, settings) =>
    reads.closed() ? Promise.reject(notOpenError()) : read(text, params, settings);
  if (!options.holdSnapshot) {
    yield* sessionPiecesBy(whileOpen(reads.client.query), reads, id, reading, options);
    return;
  }
  if (reads.closed()) throw notOpenError();
  const held = await holdSnapshot(reads.client);
  let done = false;
  try {
    yield* sessionPiecesBy(whileOpen(held.query), reads, id, reading, options);
    done = true;
  } finally {
    // Stopped early or failed: the snapshot ends, and the error (if any) stands.
    if (done) await held.end();
    else await held.end().catch(() => {});
  }
}

/**
 * One session of an export in pieces: its row, then its messages `chunk`
 * at a time; nothing when it is gone, or `keep` refuses its row (its
 * messages then not read: only their ids came with the row). The row (with `last_active` when it
 * was `listed`) is read again with the list of its messages, in one
 * statement, so both are of one state, as the SQLite engine reads them:
 * the listing's row, read before a write the messages came after, said 2
 * messages where 3 followed, and a session deleted since the listing came
 * as its row without messages.
 */
async function* sessionPiecesBy(
  query: PgQuery,
  reads: ExportReads,
  id: string,
  { listed, usage }: PieceReading,
  { chunk, keep }: Required<ExportPiecesOptions>,
): AsyncGenerator<ExportPiece> {
  const row = listed
    ? EXPORT_SESSIONS("WHERE s.id = $1")
    : `SELECT ${EXACT_SESSION_COLUMNS} FROM sessions s WHERE s.id = $1`;
  const [found] = await query(
    `SELECT r.*, (SELECT json_agg(m.id::text ORDER BY m.timestamp, m.id) FROM messages m
         WHERE m.session_id = $1)::text AS hermes_message_ids
       FROM (${row}) r`,
    [id],
  );
  if (found === undefined) return;
  const { hermes_message_ids: listedIds, ...read } = found;
  const session = withModelUsage(
    exactSessionRow(read) as unknown as SessionRow,
    usage ? (await readModelUsagePg(query, [id])).get(id) ?? [] : [],
  );
  if (!keep(session)) return;
  const ids = JSON.parse(String(listedIds ?? "[]")) as string[];
  // Resumed after close(), it rejects as every method then does (a closed SQLite store's).
  if (reads.closed()) throw notOpenError();
  yield { session };
  for (let at = 0; at < ids.length; at += chunk) {
    const rows = await query(
      `SELECT ${EXACT_MESSAGE_COLUMNS} FROM messages m
         WHERE m.id IN (SELECT json_array_elements_text($1::text::json)::bigint)
         ORDER BY m.timestamp, m.id`,
      [jsonParam(ids.slice(at, at + chunk))],
    );
    const messages = rows.map((row) => withTextImportKeeps(messageFromRow(exactMessageRow(row))));
    if (messages.length > 0) yield { messages };
  }
}
