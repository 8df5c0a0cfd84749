/**
 * Sessions with their messages, one at a time or all.
 *
 * @module
 */
import type { SqliteStatement } from "./driver/types.ts";
import type { Store } from "./store.ts";
import type { SessionExport, SessionRow } from "./types.ts";
import { getSession } from "./sessions.ts";
import { getMessages } from "./messages.ts";

/** Options of `exportAll` and `iterateExport`. */
export interface ExportOptions {
  /** Only sessions of this source; every source when omitted or empty. */
  source?: string | null;
}

/**
 * Every session (children included) with its last activity, newest activity
 * first: the order of Python's `search_sessions`, which `export_all` uses.
 */
function sessionsQuery(filtered: boolean): string {
  return `SELECT s.*, COALESCE(m.last_active, s.started_at) AS last_active
    FROM sessions s
    LEFT JOIN (
      SELECT session_id, MAX(timestamp) AS last_active FROM messages GROUP BY session_id
    ) m ON m.session_id = s.id
    ${filtered ? "WHERE s.source = ?" : ""}
    ORDER BY last_active DESC, s.started_at DESC, s.id DESC`;
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

/**
 * One session with its messages, as one line of a JSONL export: every
 * session column, then `messages` (as `getMessages` returns them).
 *
 * @param store The open store.
 * @param id The session id.
 * @returns The export, or `undefined` for an unknown session.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * db.appendMessage("s1", { role: "user", content: "hi" });
 * const line = JSON.stringify(db.exportSession("s1"));
 * console.assert(JSON.parse(line).messages.length === 1);
 * ```
 */
export function exportSession(store: Store, id: string): SessionExport | undefined {
  const session = getSession(store, id);
  if (session === undefined) return undefined;
  return { ...session, messages: getMessages(store, id, { includeInactive: true }) };
}

/**
 * Every session with its messages, newest activity first (children
 * included, no limit). Each session has an extra `last_active` column (its
 * last message's timestamp, else `started_at`). Holds everything in memory:
 * prefer {@linkcode iterateExport} for large files.
 *
 * @param store The open store.
 * @param options `source` filter.
 * @returns The exports.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("cron_job_1", "cron");
 * db.createSession("s1", "cli");
 * console.assert(db.exportAll({ source: "cron" }).length === 1);
 * console.assert(db.exportAll().length === 2);
 * ```
 */
export function exportAll(store: Store, options: ExportOptions = {}): SessionExport[] {
  return Array.from(iterateExport(store, options));
}

/**
 * What {@linkcode exportAll} returns, one session at a time, in the same
 * order: memory stays flat whatever the size of the file. The session list
 * is read through one cursor, so the export is one consistent snapshot.
 *
 * While the generator is suspended halfway, that cursor holds a read
 * snapshot of the file: run it to the end (or `return()` it, as `break` in a
 * `for…of` does) before writing through the same store, or the write may
 * find the snapshot stale and fail as busy when another process wrote
 * meanwhile.
 *
 * @param store The open store.
 * @param options `source` filter.
 * @returns A generator of exports.
 *
 * @example Writing a JSONL export
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = await Deno.makeTempDir();
 * using db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * const lines: string[] = [];
 * for (const session of db.iterateExport()) lines.push(JSON.stringify(session));
 * console.assert(lines.length === 1);
 * ```
 */
export function* iterateExport(
  store: Store,
  options: ExportOptions = {},
): Generator<SessionExport, void, undefined> {
  const source = options.source;
  const sql = sessionsQuery(Boolean(source));
  const statement = borrowStatement(store, sql);
  const rows = source ? statement.iterate(source) : statement.iterate();
  try {
    for (const row of rows) {
      const session = row as SessionRow;
      yield { ...session, messages: getMessages(store, session.id) };
    }
  } finally {
    // Ends the cursor (and its read snapshot) even when the consumer stops early.
    rows.return?.();
    returnStatement(store, sql, statement);
  }
}

/**
 * The sessions an export covers, without their messages, in export order
 * (what {@linkcode iterateExport} walks): read in one statement, so a caller
 * that then reads each session's messages holds no read snapshot between
 * sessions.
 *
 * @param store The open store.
 * @param options `source` filter.
 * @returns The session rows, each with `last_active`.
 */
export function exportSessionRows(store: Store, options: ExportOptions = {}): SessionRow[] {
  const source = options.source;
  const statement = store.statement(sessionsQuery(Boolean(source)));
  return (source ? statement.all(source) : statement.all()) as SessionRow[];
}

/**
 * One session row of {@linkcode exportSessionRows} with its messages, as
 * {@linkcode iterateExport} yields it.
 *
 * @param store The open store.
 * @param session A row of `exportSessionRows`.
 * @returns The export.
 */
export function withMessages(store: Store, session: SessionRow): SessionExport {
  return { ...session, messages: getMessages(store, session.id, { includeInactive: true }) };
}
