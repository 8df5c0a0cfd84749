/**
 * Sessions with their messages, one at a time or all.
 *
 * @module
 */
import type { SqliteStatement } from "./driver/types.ts";
import type { Store } from "./store.ts";
import type { SessionExport, SessionRow } from "../core/types.ts";
import { getSession } from "./sessions.ts";
import { getMessages } from "./messages.ts";
import type { ExportOptions } from "../core/transfer_options.ts";
import { startedRangeClauses } from "./listing.ts";
import { runtimeName } from "./driver/load.ts";

/**
 * Every session (children included) with its last activity, newest activity
 * first: the order of Python's `search_sessions`, which `export_all` uses;
 * only those of a source, and started in a range, when the options say so.
 */
function sessionsQuery(options: ExportOptions): { sql: string; params: (string | number)[] } {
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
    FROM sessions s
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
  if (session === undefined) return undefined;
  return { ...session, messages: getMessages(store, id, { includeInactive: true }) };
}

/** Implements `SessionDB.exportAll`: {@linkcode iterateExport} collected, every message row. */
export function exportAll(store: Store, options: ExportOptions = {}): SessionExport[] {
  return Array.from(iterateExport(store, options));
}

/** One session's row as the session list reads it (with `last_active`). */
const SESSION_AGAIN_SQL = `SELECT s.*, COALESCE(
    (SELECT MAX(timestamp) FROM messages WHERE session_id = s.id), s.started_at) AS last_active
  FROM sessions s WHERE s.id = ?`;

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
): Generator<SessionExport, void, undefined> {
  const { sql, params } = sessionsQuery(options);
  const statement = borrowStatement(store, sql);
  const rows = statement.iterate(...params);
  const readAgain = runtimeName() !== "bun";
  try {
    for (const row of rows) {
      const session = row as SessionRow;
      if (!readAgain) {
        yield withMessages(store, session);
        continue;
      }
      const record = sessionWhole(store, session.id);
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
 * @returns The export, or `undefined` when the session is gone.
 */
export function sessionWhole(store: Store, id: string): SessionExport | undefined {
  return inOneSnapshot(store, () => {
    const now = store.statement(SESSION_AGAIN_SQL).get(id) as SessionRow | undefined;
    return now === undefined ? undefined : withMessages(store, now);
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
export function exportSessionRows(store: Store, options: ExportOptions = {}): SessionRow[] {
  const { sql, params } = sessionsQuery(options);
  return store.statement(sql).all(...params) as SessionRow[];
}

/**
 * One session row of {@linkcode exportSessionRows} with its messages, as
 * {@linkcode iterateExport} yields it: every row, those a newer Hermes marks
 * inactive (rewound, compacted) included, so an export loses nothing.
 *
 * @param store The open store.
 * @param session A row of `exportSessionRows`.
 * @returns The export.
 */
function withMessages(store: Store, session: SessionRow): SessionExport {
  return { ...session, messages: getMessages(store, session.id, { includeInactive: true }) };
}
