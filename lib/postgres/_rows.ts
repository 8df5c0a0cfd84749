/**
 * Rows of the PostgreSQL engine as the SQLite engine returns them: the
 * column lists, the message values laid out as PostgreSQL parameters (with
 * the search vectors), and the listing preview of a row. The rules
 * themselves are the core's (`lib/core/message_values.ts`,
 * `message_row.ts`, `conversation_message.ts`, `listing_rows.ts`), shared
 * with the SQLite engine; the conformance suite holds the two to the same answers.
 *
 * @module
 */
import {
  conversationValues,
  MESSAGE_VALUE_NAMES,
  messageValues,
  type StoredValue,
} from "../core/message_values.ts";
import { codePointSlice } from "../core/python_text.ts";
import type { ConversationMessage, NewMessage, RichSessionRow } from "../core/types.ts";
import type { PgRow, PgValue } from "./_client_types.ts";
import { gramsVector, searchDocument, wordsVector } from "./text_search.ts";
import { previewText } from "../core/listing_rows.ts";
import { EXTRA_COLUMN, searchHiddenSql } from "./_extra.ts";

/** The v11 session columns, in the file's order. */
export const SESSION_COLUMN_NAMES: readonly string[] = [
  "id",
  "source",
  "user_id",
  "model",
  "model_config",
  "system_prompt",
  "parent_session_id",
  "started_at",
  "ended_at",
  "end_reason",
  "message_count",
  "tool_call_count",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "billing_provider",
  "billing_base_url",
  "billing_mode",
  "estimated_cost_usd",
  "actual_cost_usd",
  "cost_status",
  "cost_source",
  "pricing_version",
  "title",
  "api_call_count",
];

/**
 * The session columns that are INTEGER in the file and numeric on the
 * server (with the messages' `token_count`): SQLite may hold a REAL in any.
 */
export const COUNTER_COLUMNS: readonly string[] = SESSION_COLUMN_NAMES.filter((c) =>
  /_count$|_tokens$/.test(c)
);

/** The v11 message columns, in the file's order. */
export const MESSAGE_COLUMN_NAMES: readonly string[] = [
  "id",
  "session_id",
  "role",
  "content",
  "tool_call_id",
  "tool_calls",
  "tool_name",
  "timestamp",
  "token_count",
  "finish_reason",
  "reasoning",
  "reasoning_content",
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
];

/** The v11 session columns, as a set (a newer Hermes's others go to `extra_columns`). */
export const SESSION_COLUMN_SET: ReadonlySet<string> = new Set(SESSION_COLUMN_NAMES);
/** The v11 message columns, as a set. */
export const MESSAGE_COLUMN_SET: ReadonlySet<string> = new Set(MESSAGE_COLUMN_NAMES);

/**
 * `s.id, s.source, …, s.extra_columns`: the session columns of alias `s`
 * (the client spreads a newer Hermes's columns into the row).
 */
export const SESSION_COLUMNS = [...SESSION_COLUMN_NAMES, EXTRA_COLUMN].map((c) => `s.${c}`)
  .join(", ");
/** `m.id, m.session_id, …, m.extra_columns`: the message columns of alias `m`. */
export const MESSAGE_COLUMNS = [...MESSAGE_COLUMN_NAMES, EXTRA_COLUMN].map((c) => `m.${c}`)
  .join(", ");

// ---------------------------------------------------------------------------
// Message values for INSERT
// ---------------------------------------------------------------------------

/** The stored values of one message, in {@linkcode INSERT_COLUMNS} order. */
export type MessageValues = PgValue[];

/**
 * Columns a message insert writes: every message column but the id and the
 * session (which comes first), a newer Hermes's columns, then the search vectors.
 */
export const INSERT_COLUMNS: readonly string[] = [
  ...MESSAGE_COLUMN_NAMES.filter((column) => column !== "id" && column !== "session_id"),
  EXTRA_COLUMN,
  "search_words",
  "search_grams",
];

/** SQL casts of {@linkcode INSERT_COLUMNS}, for untyped parameters. */
export const INSERT_CASTS: readonly string[] = INSERT_COLUMNS.map((c) =>
  c === "timestamp"
    ? "::double precision"
    : c === "token_count"
    ? "::numeric"
    : c.startsWith("search_")
    ? "::tsvector"
    : c === EXTRA_COLUMN
    ? "::text::jsonb"
    : "::text"
);

/** Index of the timestamp in {@linkcode MessageValues}. */
export const TIMESTAMP_INDEX: number = INSERT_COLUMNS.indexOf("timestamp");

function withSearch(values: PgValue[]): MessageValues {
  const doc = searchDocument(
    values[1] as string | null,
    values[4] as string | null,
    values[3] as string | null,
  );
  values.push(wordsVector(doc), gramsVector(doc));
  return values;
}

/** Where each of {@linkcode INSERT_COLUMNS} comes from in the core values (-1: not from the message). */
const SOURCE_INDEX = INSERT_COLUMNS.map((column) => MESSAGE_VALUE_NAMES.indexOf(column));

/** A core value as a parameter: text columns bound as text, a bigint as its digits. */
function parameter(value: StoredValue, column: string): PgValue {
  if (typeof value === "bigint") return String(value);
  if (typeof value === "number" && column !== "token_count") return String(value);
  return value;
}

/** The core values of a message laid out as {@linkcode INSERT_COLUMNS}, timestamp 0, vectors added. */
function insertValues(values: readonly StoredValue[]): MessageValues {
  const out: PgValue[] = [];
  for (const [i, source] of SOURCE_INDEX.entries()) {
    if (INSERT_COLUMNS[i].startsWith("search_")) break;
    // A message of the API has no newer columns; the timestamp is set by the caller.
    const column = INSERT_COLUMNS[i];
    out.push(
      source !== -1 ? parameter(values[source], column) : column === EXTRA_COLUMN ? null : 0,
    );
  }
  return withSearch(out);
}

/**
 * The stored values of an `appendMessage` argument, validated as SQLite's
 * engine validates them ({@linkcode messageValues}).
 *
 * @param message The new message.
 * @param action The action named in errors ("append message").
 * @returns The values (timestamp still 0).
 * @throws {TypeError} When a field has the wrong type.
 */
export function newMessageValues(message: NewMessage, action: string): MessageValues {
  return insertValues(messageValues(message, action));
}

/**
 * The stored values of a `replaceMessages` item (the conversation shape),
 * validated as SQLite's engine validates them ({@linkcode conversationValues}).
 *
 * @param message One conversation message.
 * @param action The action named in errors.
 * @returns The values (timestamp still 0).
 * @throws {TypeError} When a field has the wrong type.
 */
export function pgConversationValues(message: ConversationMessage, action: string): MessageValues {
  return insertValues(conversationValues(message, action));
}

/**
 * A multi-row `VALUES` list for messages of `sessionParam`: one row per
 * item, every parameter cast.
 *
 * @param rows The values of each message.
 * @param first Number of the first `$n` parameter.
 * @returns The SQL and the flat parameters.
 */
export function valuesList(
  rows: readonly MessageValues[],
  first: number,
): { sql: string; params: PgValue[] } {
  const params: PgValue[] = [];
  const tuples = rows.map((values) => {
    const marks = values.map((value, i) => {
      params.push(value);
      return `$${first + params.length - 1}${INSERT_CASTS[i]}`;
    });
    return `(${marks.join(", ")})`;
  });
  return { sql: tuples.join(", "), params };
}

/** The columns of `message_words` copied from the message (its id comes first). */
const WORDS_COPIED = ["session_id", "role", "timestamp"];

/**
 * One statement that inserts messages with their word vectors: each row
 * into `messages`, and its id, session, role, timestamp and `search_words`
 * into the narrow `message_words` table the word search ranks from (see
 * `schema.ts`); both get `search_hidden` from the row's `extra_columns`.
 * Rows without an `id` take the next ones of the sequence, in the order
 * `source` yields them.
 *
 * @param columns The columns `source` yields, in order: `session_id`, any
 *   message columns (`extra_columns` among them), `search_words`,
 *   `search_grams`, and `id` if given.
 * @param source A query (it may read the CTEs of `before`).
 * @param before CTEs to define first, as `name AS (…)`, comma-separated.
 * @returns The SQL; its rows are the new ids, ascending.
 */
export function insertMessagesSql(
  columns: readonly string[],
  source: string,
  before?: string,
): string {
  const stored = columns.filter((c) => c !== "search_words" && c !== "id").join(", ");
  const ids = columns.includes("id") ? "" : "nextval('messages_id_seq') AS id, ";
  const copied = WORDS_COPIED.map((c) => columns.includes(c) ? c : "NULL");
  const hidden = columns.includes(EXTRA_COLUMN) ? searchHiddenSql("src") : "false";
  return `WITH ${before ? `${before}, ` : ""}
    v AS MATERIALIZED (SELECT ${ids}src.*, ${hidden} AS search_hidden
      FROM (${source}) AS src(${columns.join(", ")})),
    m AS (INSERT INTO messages (id, ${stored}, search_hidden)
      SELECT id, ${stored}, search_hidden FROM v),
    w AS (INSERT INTO message_words (id, ${WORDS_COPIED.join(", ")}, search_words, search_hidden)
      SELECT id, ${copied.join(", ")}, search_words, search_hidden FROM v)
    SELECT id FROM v ORDER BY id`;
}

// ---------------------------------------------------------------------------
// Listing preview (as lib/listing.ts)
// ---------------------------------------------------------------------------

/**
 * Moves `_preview_raw` (the first 200 characters of the first user message)
 * into `preview` as SQLite computes it: cut at the first NUL (SQLite's text
 * functions stop there, so multimodal content previews as ""), newlines as
 * spaces, 63 characters, stripped, then 60 characters plus `...`.
 *
 * @param row A listing row with `_preview_raw`.
 * @returns The row with `preview`.
 */
export function withPreview(row: PgRow): RichSessionRow {
  const value = String(row._preview_raw ?? "");
  delete row._preview_raw;
  const line = value.split("\u0000")[0].replaceAll("\n", " ").replaceAll("\r", " ");
  const preview = previewText(codePointSlice(line, 63));
  return Object.assign(row, { preview }) as unknown as RichSessionRow;
}
