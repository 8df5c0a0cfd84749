/**
 * Writes sessions and messages with raw SQL, for tests that need data of a
 * given shape (exact timestamps, lineage, cycles) without going through the
 * API under test.
 */
import { SessionDB, type SessionDBOptions } from "../lib/sqlite/session_db.ts";
import type { SqlValue } from "../lib/sqlite/driver/types.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";

/** A session row to insert; omitted columns take their defaults. */
export interface RawSession {
  id: string;
  source?: string;
  started_at: number;
  ended_at?: number | null;
  end_reason?: string | null;
  parent_session_id?: string | null;
  title?: string | null;
  model?: string | null;
  input_tokens?: number;
  output_tokens?: number;
  estimated_cost_usd?: number | null;
}

/** A message row to insert. */
export interface RawMessage {
  session_id: string;
  role: string;
  content?: string | null;
  timestamp: number;
  tool_name?: string | null;
  tool_calls?: string | null;
}

/** Inserts rows into the file at `path` (schema already there), foreign keys off. */
export async function insertRows(
  path: string,
  sessions: readonly RawSession[],
  messages: readonly RawMessage[] = [],
): Promise<void> {
  using db = await rawOpen(path);
  db.exec("PRAGMA foreign_keys = OFF; BEGIN");
  const session = db.prepare(
    `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id, title,
       model, input_tokens, output_tokens, estimated_cost_usd)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const s of sessions) {
    session.run(
      s.id,
      s.source ?? "cli",
      s.started_at,
      s.ended_at ?? null,
      s.end_reason ?? null,
      s.parent_session_id ?? null,
      s.title ?? null,
      s.model ?? null,
      s.input_tokens ?? 0,
      s.output_tokens ?? 0,
      s.estimated_cost_usd ?? null,
    );
  }
  const message = db.prepare(
    `INSERT INTO messages (session_id, role, content, timestamp, tool_name, tool_calls)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  for (const m of messages) {
    message.run(
      m.session_id,
      m.role,
      m.content ?? null,
      m.timestamp,
      m.tool_name ?? null,
      m.tool_calls ?? null,
    );
  }
  db.exec("COMMIT");
}

/** A new database holding these rows, opened with `options` (a clock, say). */
export async function dbWith(
  sessions: readonly RawSession[],
  messages: readonly RawMessage[] = [],
  options: SessionDBOptions = {},
): Promise<SessionDB> {
  const path = options.path ?? tempDbPath();
  (await SessionDB.open({ path })).close();
  await insertRows(path, sessions, messages);
  return SessionDB.open({ ...options, path });
}

/** Runs one statement on the file at `path` through a separate raw connection. */
export async function rawRun(path: string, sql: string, ...params: SqlValue[]): Promise<void> {
  using db = await rawOpen(path);
  db.prepare(sql).run(...params);
}

/** All rows of a query on the file at `path`, through a separate read-only connection. */
export async function rawAll(
  path: string,
  sql: string,
  ...params: SqlValue[]
): Promise<Record<string, SqlValue>[]> {
  using db = await rawOpen(path, true);
  return db.prepare(sql).all(...params);
}

/**
 * A new file whose session `s` holds one message for each pair of stored
 * `content` and `tool_calls` texts, written as another writer stores them.
 */
export async function fileWithStoredTexts(
  rows: readonly (readonly [string, string | null])[],
): Promise<string> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  using raw = await rawOpen(path);
  raw.exec("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1777400000)");
  const insert = raw.prepare(
    `INSERT INTO messages (session_id, role, content, tool_calls, timestamp)
     VALUES ('s', 'assistant', ?, ?, ?)`,
  );
  rows.forEach(([content, calls], i) => insert.run(content, calls, 1777400001 + i));
  return path;
}

/** Each message's stored `content` and `tool_calls`, in time order. */
export async function storedMessageTexts(path: string): Promise<unknown[][]> {
  using raw = await rawOpen(path, true);
  return raw.prepare("SELECT content, tool_calls FROM messages ORDER BY timestamp").all()
    .map((row) => [row.content, row.tool_calls]);
}
