/**
 * A large state.db built fast for the health tests: raw SQL inserts in one
 * transaction with the FTS triggers off, then both FTS tables filled in one
 * statement each and the v11 triggers put back.
 */
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { FTS_TABLES, ftsBackfillSql, ftsTriggersSql } from "../lib/sqlite/schema/schema_sql.ts";
import { rawOpen } from "./_helpers.ts";

/** Options of {@linkcode buildLargeFile}. */
export interface LargeFileOptions {
  /** Messages to write. */
  readonly messages: number;
  /** Messages per session. */
  readonly perSession?: number;
}

const WORDS = [
  "docker",
  "deploy",
  "memory",
  "kernel",
  "gateway",
  "telegram",
  "prune",
  "index",
  "vacuum",
  "rollback",
  "session",
  "trigram",
  "記憶",
  "断裂",
  "连接",
  "검색",
  "テスト",
  "latency",
];

/**
 * Writes a v11 file at `path` with `messages` messages, counters matching.
 * Message `i` (1-based) has content `m<i> <words…>` and every fifth one a
 * tool call.
 */
export async function buildLargeFile(path: string, options: LargeFileOptions): Promise<void> {
  const perSession = options.perSession ?? 50;
  (await SessionDB.open({ path })).close();
  const db = await rawOpen(path);
  try {
    const words = WORDS.map((w, i) => `SELECT ${i} AS k, '${w}' AS w`).join(" UNION ALL ");
    db.exec("BEGIN IMMEDIATE");
    for (const table of FTS_TABLES) {
      for (const event of ["insert", "delete", "update"]) db.exec(`DROP TRIGGER ${table}_${event}`);
    }
    const sessions = Math.ceil(options.messages / perSession);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${sessions})
      INSERT INTO sessions (id, source, started_at, message_count, tool_call_count)
      SELECT printf('big_%06d', i), 'cli', 1700000000 + i * 60, 0, 0 FROM n`);
    db.exec(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${options.messages}),
      w AS (${words})
      INSERT INTO messages (session_id, role, content, tool_calls, tool_name, timestamp)
      SELECT printf('big_%06d', (i - 1) / ${perSession} + 1),
        CASE i % 2 WHEN 1 THEN 'user' ELSE 'assistant' END,
        'm' || i || ' ' || (SELECT w FROM w WHERE k = i % 18) || ' ' ||
          (SELECT w FROM w WHERE k = (i / 7) % 18) || ' step ' || (i % 1000) ||
          ' of the plan, checking the logs again',
        CASE WHEN i % 5 = 0 THEN '[{"id": "call_' || i || '", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]' END,
        NULL,
        1700000000 + i
      FROM n`,
    );
    db.exec(
      `UPDATE sessions SET message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id),
      tool_call_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id AND m.tool_calls IS NOT NULL)`,
    );
    for (const table of FTS_TABLES) {
      db.exec(ftsBackfillSql(table));
      db.exec(ftsTriggersSql(table));
    }
    db.exec("COMMIT");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}
