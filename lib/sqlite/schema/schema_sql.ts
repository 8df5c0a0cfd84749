/**
 * The schema of `state.db` at version 11, exactly as the Python Hermes
 * writes it. SQLite keeps CREATE statements as written, so the whitespace here
 * is part of the file format: do not reformat these strings.
 *
 * @module
 */

/** The schema version this library writes. */
export const SCHEMA_VERSION = 11;

/** The tables. */
export const TABLES_SQL = `
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT
);

CREATE TABLE IF NOT EXISTS state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);
`;

/**
 * Their indexes, created once missing columns were added (an index on a column
 * an old file lacks would fail). The title index is {@linkcode TITLE_INDEX_SQL}.
 */
export const INDEXES_SQL = `
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
`;

/** The unique title index, created after the version step. */
export const TITLE_INDEX_SQL =
  "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL";

/** Sets one `state_meta` key (two parameters: the key, the value). */
export const UPSERT_META_SQL = "INSERT INTO state_meta (key, value) VALUES (?, ?) " +
  "ON CONFLICT(key) DO UPDATE SET value = excluded.value";

/** The two full-text tables: the default tokenizer, and trigram for CJK and substrings. */
export const FTS_TABLES = ["messages_fts", "messages_fts_trigram"] as const;

/** Name of one full-text table. */
export type FtsTable = typeof FTS_TABLES[number];

/** The text a message contributes to both full-text tables, over the columns of `row`. */
export function indexedTextSql(row: string): string {
  return `COALESCE(${row}.content, '') || ' ' || COALESCE(${row}.tool_name, '') || ' ' || COALESCE(${row}.tool_calls, '')`;
}

/** The CREATE statement of one full-text table. */
export function ftsTableSql(table: FtsTable): string {
  const tokenizer = table === "messages_fts_trigram" ? ",\n    tokenize='trigram'" : "";
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(\n    content${tokenizer}\n);`;
}

/** The three triggers that keep one full-text table in step with `messages`. */
export function ftsTriggersSql(table: FtsTable): string {
  const insert = `    INSERT INTO ${table}(rowid, content) VALUES (
        new.id,
        ${indexedTextSql("new")}
    );`;
  const remove = `    DELETE FROM ${table} WHERE rowid = old.id;`;
  return `
CREATE TRIGGER IF NOT EXISTS ${table}_insert AFTER INSERT ON messages BEGIN
${insert}
END;

CREATE TRIGGER IF NOT EXISTS ${table}_delete AFTER DELETE ON messages BEGIN
${remove}
END;

CREATE TRIGGER IF NOT EXISTS ${table}_update AFTER UPDATE ON messages BEGIN
${remove}
${insert}
END;
`;
}

/** Fills one full-text table from every message row. */
export function ftsBackfillSql(table: FtsTable): string {
  return `INSERT INTO ${table}(rowid, content) SELECT m.id, ${indexedTextSql("m")} FROM messages m`;
}

/** One column as the schema declares it. */
export interface DeclaredColumn {
  /** The table. */
  readonly table: string;
  /** The column name. */
  readonly name: string;
  /** Everything after the name: type, constraints, default. */
  readonly definition: string;
}

/** Every column of {@linkcode TABLES_SQL}, in declaration order. */
export const DECLARED_COLUMNS: readonly DeclaredColumn[] = parseColumns(TABLES_SQL);

function parseColumns(sql: string): DeclaredColumn[] {
  const columns: DeclaredColumn[] = [];
  const tables = sql.matchAll(/CREATE TABLE IF NOT EXISTS (\w+) \(([^;]*)\);/g);
  for (const [, table, body] of tables) {
    for (const line of body.split("\n")) {
      const match = /^\s*(\w+) (.+?),?$/.exec(line);
      if (!match || /^(FOREIGN|PRIMARY|UNIQUE|CHECK)$/.test(match[1])) continue;
      columns.push({ table, name: match[1], definition: match[2] });
    }
  }
  return columns;
}
