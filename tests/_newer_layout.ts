/**
 * A file laid out as a newer Hermes lays it out (schema 30, its "FTS storage
 * version 3", public since v2026.9), built from a v11 file with raw SQL. No
 * fixture written by that Hermes exists yet; this reproduces what its
 * published schema says matters to a reader of the file:
 *
 * - `messages_fts` has three columns (`content`, `tool_name`, `tool_calls`)
 *   and takes its text from a view, `messages_fts_src`, which keeps only the
 *   first 8,192 characters of a tool row;
 * - `messages_fts_trigram` has two (`content`, `tool_name`) and takes them
 *   from `messages_fts_trigram_src`, which leaves out tool rows and the rows
 *   of `cron` and `subagent` sessions;
 * - both are external-content tables kept by triggers of its own text;
 * - `messages` has columns v11 lacks (`display_kind`, …), and `state_meta`
 *   records the layout (`fts_storage_version` = 3).
 */
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";

/** Characters of a tool row that the newer words index holds. */
export const TOOL_PREFIX = 8192;

const WORDS_TEXT = (row: string) =>
  `CASE WHEN ${row}.role = 'tool' THEN substr(COALESCE(${row}.content, ''), 1, ${TOOL_PREFIX}) ELSE ${row}.content END`;

const TRIGRAM_SESSION = `source NOT IN ('cron', 'subagent')`;

/** The newer layout's statements, in the order they run. */
const LAYOUT_SQL = `
DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_delete; DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_trigram_insert; DROP TRIGGER messages_fts_trigram_delete;
DROP TRIGGER messages_fts_trigram_update;
DROP TABLE messages_fts; DROP TABLE messages_fts_trigram;
ALTER TABLE messages ADD COLUMN display_kind TEXT;
ALTER TABLE messages ADD COLUMN display_order INTEGER;
CREATE VIEW messages_fts_src AS
  SELECT id, ${WORDS_TEXT("messages")} AS content, tool_name, tool_calls FROM messages;
CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
  VALUES (new.id, ${WORDS_TEXT("new")}, new.tool_name, new.tool_calls);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
  VALUES ('delete', old.id, ${WORDS_TEXT("old")}, old.tool_name, old.tool_calls);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name, tool_calls, role ON messages
BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
  VALUES ('delete', old.id, ${WORDS_TEXT("old")}, old.tool_name, old.tool_calls);
  INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
  VALUES (new.id, ${WORDS_TEXT("new")}, new.tool_name, new.tool_calls);
END;
CREATE VIEW messages_fts_trigram_src AS
  SELECT m.id, m.content, m.tool_name FROM messages AS m JOIN sessions AS s ON s.id = m.session_id
  WHERE m.role <> 'tool' AND s.${TRIGRAM_SESSION};
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(
  content, tool_name, content='messages_fts_trigram_src', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages
WHEN new.role <> 'tool' AND EXISTS (SELECT 1 FROM sessions WHERE id = new.session_id AND ${TRIGRAM_SESSION})
BEGIN
  INSERT INTO messages_fts_trigram(rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
END;
CREATE TRIGGER messages_fts_trigram_delete AFTER DELETE ON messages
WHEN old.role <> 'tool' AND EXISTS (SELECT 1 FROM sessions WHERE id = old.session_id AND ${TRIGRAM_SESSION})
BEGIN
  INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content, tool_name)
  VALUES ('delete', old.id, old.content, old.tool_name);
END;
CREATE TRIGGER messages_fts_trigram_update AFTER UPDATE OF content, tool_name, role ON messages
BEGIN
  INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content, tool_name)
  SELECT 'delete', old.id, old.content, old.tool_name WHERE old.role <> 'tool'
    AND EXISTS (SELECT 1 FROM sessions WHERE id = old.session_id AND ${TRIGRAM_SESSION});
  INSERT INTO messages_fts_trigram(rowid, content, tool_name)
  SELECT new.id, new.content, new.tool_name WHERE new.role <> 'tool'
    AND EXISTS (SELECT 1 FROM sessions WHERE id = new.session_id AND ${TRIGRAM_SESSION});
END;
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES ('rebuild');
UPDATE schema_version SET version = 30;
INSERT OR REPLACE INTO state_meta (key, value) VALUES ('fts_storage_version', '3');
`;

/**
 * Rewrites the full-text layout of a v11 file (no open store on it) into the
 * newer Hermes's, in one transaction.
 *
 * @param raw A raw connection to the file.
 */
export function layOutAsSchema30(raw: SqliteConnection): void {
  raw.exec(`BEGIN IMMEDIATE; ${LAYOUT_SQL} COMMIT;`);
}

/** Every schema object's CREATE text, by name: what must come out of a command unchanged. */
export function schemaText(raw: SqliteConnection): Record<string, string | null> {
  return Object.fromEntries(
    raw.prepare("SELECT name, sql FROM sqlite_master ORDER BY name").all().map((row) => [
      String(row.name),
      row.sql === null ? null : String(row.sql),
    ]),
  );
}
