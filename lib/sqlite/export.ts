/**
 * Sessions with their messages, one at a time or all, every value as the
 * file holds it (`exact_rows.ts`): integers beyond 2^53 as `bigint`, the
 * bytes of a BLOB or of text that is not valid UTF-8 under
 * `hermes_state_bytes`.
 *
 * @module
 */
import type { SqliteStatement, SqlRow, SqlValue } from "./driver/types.ts";
import { sessionsRead } from "./schema/read_views.ts";
import type { Store } from "./store.ts";
import type {
  MessageRow,
  SessionExport,
  SessionExportWithActivity,
  SessionRow,
  SessionRowWithActivity,
} from "../core/types.ts";
import { messageFromRow } from "../core/message_row.ts";
import { withTextImportKeeps } from "../core/text_import_keeps.ts";
import { getSession } from "./sessions.ts";
import { needsExactRead, readExactRows } from "./exact_rows.ts";
import type { ExportOptions } from "../core/transfer_options.ts";
import { startedRangeClauses } from "./listing.ts";
import { runtimeName } from "./driver/load.ts";
import { withModelUsage } from "../core/session_model_usage.ts";
import { readSessionModelUsage, readsSessionModelUsage } from "./session_model_usage.ts";
import { UnexportableIdError } from "../core/errors.ts";

/**
 * Every session (children included) with its last activity, newest activity
 * first: the order of Python's `search_sessions`, which `export_all` uses;
 * only those of a source, and started in a range, when the options say so.
 */
function sessionsQuery(
  store: Store,
  options: ExportOptions,
): { sql: string; params: (string | number)[] } {
  const clauses: string[] = [];
  const params: (string | number)[] = [];
  if (options.source) {
    clauses.push("s.source = ?");
    params.push(options.source);
  }
  const range = startedRangeClauses(options, "export sessions");
  clauses.push(...range.clauses);
  params.push(...range.params);
  const sql = `SELECT s.*, COALESCE(m.last_active, s.started_at) AS last_active
    FROM ${sessionsRead(store)} s
    LEFT JOIN (
      SELECT session_id, MAX(timestamp) AS last_active FROM messages GROUP BY session_id
    ) m ON m.session_id = s.id
    ${clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : ""}
    ORDER BY last_active DESC, s.started_at DESC, s.id DESC`;
  return { sql, params };
}

/**
 * Statements of the session list not in use by a running export, per store
 * and query. Each running export holds a statement of its own (two may run
 * at once), and gives it back when it ends, so statements are not prepared
 * again and again.
 */
const idleStatements = new WeakMap<Store, Map<string, SqliteStatement[]>>();

function borrowStatement(store: Store, sql: string): SqliteStatement {
  return idleStatements.get(store)?.get(sql)?.pop() ?? store.db.prepare(sql);
}

function returnStatement(store: Store, sql: string, statement: SqliteStatement): void {
  let bySql = idleStatements.get(store);
  if (bySql === undefined) idleStatements.set(store, bySql = new Map());
  const idle = bySql.get(sql) ?? [];
  idle.push(statement);
  bySql.set(sql, idle);
}

/** Implements `SessionDB.exportSession`: the row plus every message row (inactive ones too). */
export function exportSession(store: Store, id: string): SessionExport | undefined {
  const session = getSession(store, id);
  return session === undefined ? undefined : withMessages(store, session);
}

/** Implements `SessionDB.exportAll`: {@linkcode iterateExport} collected, every message row. */
export function exportAll(
  store: Store,
  options: ExportOptions = {},
): SessionExportWithActivity[] {
  return Array.from(iterateExport(store, options));
}

/**
 * The statement that reads one session's row as the session list reads it
 * (with `last_active`), where whole session rows are read (`sessionsRead`).
 *
 * @param store The open store.
 * @returns The SQL; its one parameter is the session's id.
 */
export function sessionAgainSql(store: Store): string {
  return `SELECT s.*, COALESCE(
    (SELECT MAX(timestamp) FROM messages WHERE session_id = s.id), s.started_at) AS last_active
  FROM ${sessionsRead(store)} s WHERE s.id = ?`;
}

/**
 * Implements `SessionDB.iterateExport`: one cursor over the session list,
 * every message row. Where the driver reads the list whole first
 * (`node:sqlite`, on Deno and Node), the list's snapshot ends there: each
 * session's row is read again with its messages in one snapshot of their
 * own (a savepoint, which also nests in a caller's transaction), so a
 * session another process changes meanwhile comes whole as it is then,
 * and one deleted meanwhile not at all.
 */
export function* iterateExport(
  store: Store,
  options: ExportOptions = {},
): Generator<SessionExportWithActivity, void, undefined> {
  const usage = readsSessionModelUsage(store);
  const { sql, params } = sessionsQuery(store, options);
  const statement = borrowStatement(store, sql);
  const rows = statement.iterate(...params);
  const readAgain = runtimeName() !== "bun";
  try {
    for (const row of rows) {
      const session = row as SessionRowWithActivity;
      refuseUnreadableId(store, session.id);
      if (!readAgain) {
        yield withMessages(store, session, usage);
        continue;
      }
      const record = sessionWhole(store, session.id, usage);
      if (record !== undefined) yield record;
    }
  } finally {
    // Ends the cursor (and its read snapshot) even when the consumer stops early.
    rows.return?.();
    returnStatement(store, sql, statement);
  }
}

/**
 * One session of an export as it is now, its row (with `last_active`) and
 * its messages read in one snapshot: what an export yields for a session
 * of a list read earlier.
 *
 * @param store The open store.
 * @param id The session.
 * @param usage Whether the file may hold per-model usage rows (`readsSessionModelUsage`, asked
 *   once by a caller that exports many sessions).
 * @returns The export, or `undefined` when the session is gone.
 */
export function sessionWhole(
  store: Store,
  id: string,
  usage = true,
): SessionExportWithActivity | undefined {
  return inOneSnapshot(store, () => {
    const now = store.statement(sessionAgainSql(store)).get(id) as
      | SessionRowWithActivity
      | undefined;
    return now === undefined ? undefined : withMessages(store, now, usage);
  });
}

/** Runs `read` in one read snapshot: a savepoint, released (or rolled back on an error). */
function inOneSnapshot<T>(store: Store, read: () => T): T {
  store.db.exec("SAVEPOINT hermes_export_session");
  try {
    const result = read();
    store.db.exec("RELEASE hermes_export_session");
    return result;
  } catch (error) {
    store.db.exec("ROLLBACK TO hermes_export_session; RELEASE hermes_export_session");
    throw error;
  }
}

/**
 * The sessions an export covers, without their messages, in export order
 * (what {@linkcode iterateExport} walks): read in one statement, so a caller
 * that then reads each session's messages holds no read snapshot between
 * sessions.
 *
 * @param store The open store.
 * @param options The `source` and start-time filters.
 * @returns The session rows, each with `last_active`.
 */
export function exportSessionRows(
  store: Store,
  options: ExportOptions = {},
): SessionRowWithActivity[] {
  const { sql, params } = sessionsQuery(store, options);
  const rows = store.statement(sql).all(...params) as SessionRowWithActivity[];
  for (const row of rows) refuseUnreadableId(store, row.id);
  return rows;
}

/**
 * Refuses a session whose id is not valid UTF-8 text: read, it holds
 * U+FFFD where its bytes were, so neither its row nor its messages can be
 * found by it again, nor can JSON carry it (Python's export stops there too).
 *
 * @throws {UnexportableIdError} Naming the session's id as read.
 */
function refuseUnreadableId(store: Store, id: string): void {
  if (!id.includes("\uFFFD")) return;
  if (store.statement("SELECT 1 AS one FROM sessions WHERE id = ?").get(id) !== undefined) return;
  throw new UnexportableIdError(id);
}

/**
 * One session row of {@linkcode exportSessionRows} with its messages, as
 * {@linkcode iterateExport} yields it: every row, those a newer Hermes marks
 * inactive (rewound, compacted) included, so an export loses nothing.
 *
 * @param store The open store.
 * @param session A row of `exportSessionRows`.
 * @param usage Whether the file may hold per-model usage rows (see {@linkcode sessionWhole}).
 * @returns The export.
 */
function withMessages<Row extends SessionRow>(
  store: Store,
  session: Row,
  usage = true,
): Row & Pick<SessionExport, "messages"> {
  return { ...exactSession(store, session, usage), messages: exactMessages(store, session.id) };
}

/** The order of a session's messages: transcript order. */
const MESSAGE_ORDER = "ORDER BY timestamp, id";

/**
 * The session's row as the file holds it: read again exactly when a value
 * may differ ({@linkcode needsExactRead}); `last_active` kept as read; a
 * newer Hermes's per-model usage rows of the session under
 * `hermes_state_model_usage` (`withModelUsage`), when it has any.
 *
 * @param store The open store.
 * @param session The row as read.
 * @param mayHoldUsage Whether the file may hold per-model usage rows (see
 *   {@linkcode sessionWhole}): `false` reads none.
 * @returns The row, exact.
 */
export function exactSession<Row extends SessionRow>(
  store: Store,
  session: Row,
  mayHoldUsage = true,
): Row {
  const usage = mayHoldUsage ? readSessionModelUsage(store, session.id) : [];
  if (!needsExactRead(session as unknown as SqlRow)) return withModelUsage(session, usage);
  const [exact] = readExactRows(store, "sessions", "id = ?", [session.id]);
  if (exact === undefined) return withModelUsage(session, usage);
  return withModelUsage(
    ("last_active" in session
      ? { ...exact, last_active: session.last_active }
      : exact) as unknown as Row,
    usage,
  );
}

/**
 * Every message row of a session (those a newer Hermes marks inactive
 * included), in transcript order.
 */
function exactMessages(store: Store, sessionId: string): MessageRow[] {
  return exactMessagesWhere(store, "session_id = ?", [sessionId]);
}

/**
 * The message rows `where` selects, in transcript order, as an export
 * carries them: each read exactly when one of them may differ from the file
 * ({@linkcode needsExactRead}), the stored text an import would not write
 * again carried ({@linkcode withTextImportKeeps}).
 *
 * @param store The open store.
 * @param where The condition on `messages` (positional parameters).
 * @param params Its parameters.
 * @returns The messages.
 */
export function exactMessagesWhere(
  store: Store,
  where: string,
  params: readonly SqlValue[],
): MessageRow[] {
  let rows = store.statement(`SELECT * FROM messages WHERE ${where} ${MESSAGE_ORDER}`).all(
    ...params,
  );
  if (rows.some(needsExactRead)) {
    rows = readExactRows(store, "messages", where, params, MESSAGE_ORDER);
  }
  return rows.map((row) => withTextImportKeeps(messageFromRow(row)));
}
