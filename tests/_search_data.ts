/**
 * Test data for the search tests, written with raw SQL (the triggers fill
 * both FTS indexes), so the search tests do not depend on appendMessage.
 */
import { SessionDB } from "../lib/sqlite/session_db.ts";
import type { SqlValue } from "../lib/sqlite/driver/types.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";

/** A session to insert. */
export interface SessionSeed {
  id: string;
  source?: string;
  model?: string | null;
  started_at?: number;
}

/** A message to insert. */
export interface MessageSeed {
  session_id: string;
  role?: string;
  content?: string | null;
  tool_name?: string | null;
  tool_calls?: string | null;
  timestamp: number;
}

/** A database file with these rows, and a SessionDB open on it. */
export interface Seeded {
  db: SessionDB;
  path: string;
  /** Message ids, in insertion order. */
  ids: number[];
}

/**
 * Creates a v11 file, inserts the rows with a raw connection, and opens it.
 *
 * @param sessions The sessions.
 * @param messages The messages, in insertion (id) order.
 * @returns The open database and the new message ids.
 */
export async function seeded(
  sessions: readonly SessionSeed[],
  messages: readonly MessageSeed[],
): Promise<Seeded> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  const ids = await insertRows(path, sessions, messages);
  return { db: await SessionDB.open({ path }), path, ids };
}

/**
 * Inserts rows into an existing file through a raw connection.
 *
 * @returns The new message ids.
 */
export async function insertRows(
  path: string,
  sessions: readonly SessionSeed[],
  messages: readonly MessageSeed[],
): Promise<number[]> {
  const raw = await rawOpen(path);
  try {
    raw.exec("BEGIN");
    const session = raw.prepare(
      "INSERT INTO sessions (id, source, model, started_at) VALUES (?, ?, ?, ?)",
    );
    for (const s of sessions) {
      session.run(s.id, s.source ?? "cli", s.model ?? null, s.started_at ?? 1_700_000_000);
    }
    const message = raw.prepare(
      "INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) " +
        "VALUES (?, ?, ?, ?, ?, ?)",
    );
    const ids: number[] = [];
    for (const m of messages) {
      const values: SqlValue[] = [
        m.session_id,
        m.role ?? "user",
        m.content ?? null,
        m.tool_name ?? null,
        m.tool_calls ?? null,
        m.timestamp,
      ];
      ids.push(Number(message.run(...values).lastInsertRowid));
    }
    raw.exec("COMMIT");
    return ids;
  } finally {
    raw.close();
  }
}
