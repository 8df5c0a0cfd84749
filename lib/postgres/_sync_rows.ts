/**
 * The statements `sync` writes a batch of sessions with, a few for the
 * whole batch: the session rows (one upsert), their messages (multi-row
 * inserts), and the records of what the server now holds (`sync_sessions`).
 * (Their goals: `_sync_meta.ts`.)
 *
 * @module
 */
import { textOrNull } from "../core/blob_text.ts";
import type { PgQuery, PgValue } from "./_client_types.ts";
import {
  COUNTER_COLUMNS,
  INSERT_COLUMNS,
  insertMessagesSql,
  type MessageValues,
  SESSION_COLUMN_NAMES,
  valuesList,
} from "./_rows.ts";
import { EXTRA_COLUMN } from "./_extra.ts";
import { freeTitles } from "./_sync_titles.ts";
import type { SourceSession } from "./_sync_source.ts";

/** Rows per multi-row INSERT. */
const CHUNK = 1000;

/**
 * Inserts messages of several sessions, in multi-row statements, in the
 * order given (the server's ids follow it).
 *
 * @param query The transaction's query function.
 * @param rows `[server session id, stored values]` pairs.
 */
export async function insertMessages(
  query: PgQuery,
  rows: readonly (readonly [string, MessageValues])[],
): Promise<void> {
  const columns = ["session_id", ...INSERT_COLUMNS];
  for (let at = 0; at < rows.length; at += CHUNK) {
    const chunk = rows.slice(at, at + CHUNK);
    const values = valuesList(chunk.map(([, row]) => row), 1);
    // Each tuple gets its session id in front; parameters after the values'.
    const ids = chunk.map(([id]) => id);
    const first = values.params.length + 1;
    let n = 0;
    const sql = values.sql.replace(/\(\$/g, () => `($${first + n++}::text, $`);
    await query(insertMessagesSql(columns, `VALUES ${sql}`), [...values.params, ...ids]);
  }
}

/** Session columns bound as numbers, with their casts. */
const SESSION_CASTS: Record<string, string> = {
  started_at: "double precision",
  ended_at: "double precision",
  estimated_cost_usd: "double precision",
  actual_cost_usd: "double precision",
};

/** A session column's value as a parameter. */
function sessionValue(column: string, value: unknown): PgValue {
  if (value === null || value === undefined) return null;
  if (SESSION_CASTS[column] !== undefined || typeof value === "number") return Number(value);
  if (typeof value === "bigint") return String(value);
  return textOrNull(value);
}

/** The session columns a sync writes (the parent is linked after the pass), a newer Hermes's last. */
const UPSERT_COLUMNS = [
  ...SESSION_COLUMN_NAMES.filter((c) => c !== "id" && c !== "parent_session_id"),
  EXTRA_COLUMN,
];
/** The parameters' casts of an upserted row: its id, then {@linkcode UPSERT_COLUMNS}. */
const UPSERT_CASTS = [
  "text",
  ...UPSERT_COLUMNS.map((c) =>
    SESSION_CASTS[c] ??
      (COUNTER_COLUMNS.includes(c) ? "numeric" : c === EXTRA_COLUMN ? "text::jsonb" : "text")
  ),
];

/**
 * Inserts or updates a batch's session rows in one statement, each with a
 * title free on the server.
 *
 * @param query The transaction's query function.
 * @param origin The origin.
 * @param sessions The sessions.
 */
export async function upsertSessions(
  query: PgQuery,
  origin: string,
  sessions: readonly SourceSession[],
): Promise<void> {
  const titles = await freeTitles(query, origin, sessions);
  const rows = sessions.map((session) => {
    const id = `${origin}/${session.row.id}`;
    return [
      id,
      ...UPSERT_COLUMNS.map((column) =>
        column === "title"
          ? titles.get(id)!
          : column === EXTRA_COLUMN
          ? session.extra
          : sessionValue(column, session.row[column])
      ),
    ];
  });
  const { sql, params } = tuplesOf(rows, UPSERT_CASTS);
  await query(
    `INSERT INTO sessions (id, ${UPSERT_COLUMNS.join(", ")}) VALUES ${sql}
     ON CONFLICT (id) DO UPDATE SET ${
      UPSERT_COLUMNS.map((c) => `${c} = excluded.${c}`).join(", ")
    }`,
    params,
  );
}

/** The parameters' casts of a `sync_sessions` row. */
const RECORD_CASTS = [
  "text",
  "text",
  "text",
  "text",
  "text",
  "bigint",
  "bigint",
  "bigint",
  "text",
  "text",
  "text",
];

/**
 * Records what the server now holds of a batch's sessions, in one statement.
 *
 * @param query The transaction's query function.
 * @param origin The origin.
 * @param sessions The sessions.
 */
export async function recordSessions(
  query: PgQuery,
  origin: string,
  sessions: readonly SourceSession[],
): Promise<void> {
  const rows = sessions.map((source) => [
    `${origin}/${source.row.id}`,
    origin,
    String(source.row.id),
    textOrNull(source.row.parent_session_id),
    source.digest,
    source.count,
    source.maxId,
    source.messageDigest,
    source.extraDigest,
    source.shownDigest,
    source.metaDigest,
  ]);
  const { sql, params } = tuplesOf(rows, RECORD_CASTS);
  await query(
    `INSERT INTO sync_sessions (session_id, origin, source_id, source_parent, row_digest,
       message_count, max_message_id, message_digest, extra_digest, shown_digest, meta_digest)
     VALUES ${sql}
     ON CONFLICT (session_id) DO UPDATE SET source_parent = excluded.source_parent,
       row_digest = excluded.row_digest, message_count = excluded.message_count,
       max_message_id = excluded.max_message_id, message_digest = excluded.message_digest,
       extra_digest = excluded.extra_digest, shown_digest = excluded.shown_digest,
       meta_digest = excluded.meta_digest`,
    params,
  );
}

/** `($1::cast, $2::cast, …), (…)` for rows of values, and the parameters in order. */
function tuplesOf(
  rows: readonly (readonly PgValue[])[],
  casts: readonly string[],
): { sql: string; params: PgValue[] } {
  const params: PgValue[] = [];
  const sql = rows.map((row) =>
    `(${row.map((value, i) => `$${params.push(value)}::${casts[i]}`).join(", ")})`
  ).join(", ");
  return { sql, params };
}
