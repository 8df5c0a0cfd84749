/**
 * Rows of the PostgreSQL engine as the SQLite engine returns them: the same
 * columns (the search vectors left out), content and tool calls decoded, a
 * conversation built by the same rules, a listing preview cut the same way.
 * The rules mirror `lib/sqlite/messages.ts`, `lib/sqlite/conversation.ts` and
 * `lib/sqlite/listing.ts` (their helpers are private there); the conformance suite
 * holds the two engines to the same answers.
 *
 * @module
 */
import { decodeContent, encodeContent, encodeJson } from "../core/content.ts";
import {
  codePointLength,
  codePointSlice,
  PYTHON_WHITESPACE,
  pythonStrip,
} from "../core/python_text.ts";
import type {
  ConversationMessage,
  JsonValue,
  MessageRow,
  NewMessage,
  RichSessionRow,
} from "../core/types.ts";
import type { PgRow, PgValue } from "./_client.ts";
import { gramsVector, searchDocument, wordsVector } from "./text_search.ts";

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

/** `s.id, s.source, …`: the session columns of alias `s`. */
export const SESSION_COLUMNS = SESSION_COLUMN_NAMES.map((c) => `s.${c}`).join(", ");
/** `m.id, m.session_id, …`: the message columns of alias `m`. */
export const MESSAGE_COLUMNS = MESSAGE_COLUMN_NAMES.map((c) => `m.${c}`).join(", ");

function parseToolCalls(stored: unknown): JsonValue | null {
  if (stored === null || stored === undefined || stored === "" || stored === 0) {
    return (stored ?? null) as JsonValue | null;
  }
  if (typeof stored !== "string") return [];
  try {
    return JSON.parse(stored) as JsonValue;
  } catch {
    return [];
  }
}

/**
 * A stored message as `getMessages` returns it.
 *
 * @param row The row.
 * @returns The message, content and tool calls decoded.
 */
export function messageFromRow(row: PgRow): MessageRow {
  const message = row as MessageRow;
  message.content = decodeContent(row.content);
  message.tool_calls = parseToolCalls(row.tool_calls);
  return message;
}

// ---------------------------------------------------------------------------
// Message values for INSERT
// ---------------------------------------------------------------------------

function describe(value: unknown): string {
  try {
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function textValue(value: unknown, field: string, action: string): string | number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" || typeof value === "number") return value;
  if (typeof value === "bigint") return String(value);
  throw new TypeError(
    `Cannot ${action}: ${field} must be a string: current value is ${describe(value)}`,
  );
}

function integerValue(value: unknown, field: string, action: string): number | string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "bigint") return String(value);
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw new TypeError(
    `Cannot ${action}: ${field} must be a number: current value is ${describe(value)}`,
  );
}

/**
 * Tool calls a message adds to `tool_call_count`: an array's length, 1 for
 * any other value.
 *
 * @param toolCalls The message's tool calls.
 * @returns The count.
 */
export function toolCallsAdded(toolCalls: unknown): number {
  if (toolCalls === undefined || toolCalls === null) return 0;
  return Array.isArray(toolCalls) ? toolCalls.length : 1;
}

/** The stored values of one message, in {@linkcode INSERT_COLUMNS} order. */
export type MessageValues = PgValue[];

/** Columns a message insert writes (the timestamp is index 5, the session id comes first). */
export const INSERT_COLUMNS: readonly string[] = [
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
  "search_words",
  "search_grams",
];

/** SQL casts of {@linkcode INSERT_COLUMNS}, for untyped parameters. */
export const INSERT_CASTS: readonly string[] = INSERT_COLUMNS.map((c) =>
  c === "timestamp"
    ? "::double precision"
    : c === "token_count"
    ? "::bigint"
    : c.startsWith("search_")
    ? "::tsvector"
    : "::text"
);

/** Index of the timestamp in {@linkcode MessageValues}. */
export const TIMESTAMP_INDEX = 5;

function withSearch(values: PgValue[]): MessageValues {
  const doc = searchDocument(
    values[1] as string | null,
    values[4] as string | null,
    values[3] as string | null,
  );
  values.push(wordsVector(doc), gramsVector(doc));
  return values;
}

function stringOrNull(value: string | number | null): string | null {
  return value === null ? null : String(value);
}

/**
 * The stored values of an `appendMessage` argument, validated as SQLite's
 * engine validates them.
 *
 * @param message The new message.
 * @param action The action named in errors ("append message").
 * @returns The values (timestamp still 0).
 * @throws {TypeError} When a field has the wrong type.
 */
export function newMessageValues(message: NewMessage, action: string): MessageValues {
  if (message === null || typeof message !== "object") {
    throw new TypeError(
      `Cannot ${action}: a message must be an object: current value is ${describe(message)}`,
    );
  }
  if (typeof message.role !== "string") {
    throw new TypeError(
      `Cannot ${action}: role must be a string: current value is ${describe(message.role)}`,
    );
  }
  return withSearch([
    message.role,
    encodeContent(message.content),
    stringOrNull(textValue(message.toolCallId, "toolCallId", action)),
    encodeJson(message.toolCalls),
    stringOrNull(textValue(message.toolName, "toolName", action)),
    0,
    integerValue(message.tokenCount, "tokenCount", action),
    stringOrNull(textValue(message.finishReason, "finishReason", action)),
    stringOrNull(textValue(message.reasoning, "reasoning", action)),
    stringOrNull(textValue(message.reasoningContent, "reasoningContent", action)),
    encodeJson(message.reasoningDetails),
    encodeJson(message.codexReasoningItems),
    encodeJson(message.codexMessageItems),
  ]);
}

/**
 * The stored values of a `replaceMessages` item (the conversation shape).
 *
 * @param message One conversation message.
 * @param action The action named in errors.
 * @returns The values (timestamp still 0).
 * @throws {TypeError} When a field has the wrong type.
 */
export function conversationValues(message: ConversationMessage, action: string): MessageValues {
  if (message === null || typeof message !== "object") {
    throw new TypeError(
      `Cannot ${action}: a message must be an object: current value is ${describe(message)}`,
    );
  }
  const role = stringOrNull(textValue(message.role ?? "unknown", "role", action));
  const assistant = role === "assistant";
  return withSearch([
    role,
    encodeContent(message.content),
    stringOrNull(textValue(message.tool_call_id, "tool_call_id", action)),
    encodeJson(message.tool_calls),
    stringOrNull(textValue(message.tool_name, "tool_name", action)),
    0,
    integerValue(message.token_count, "token_count", action),
    stringOrNull(textValue(message.finish_reason, "finish_reason", action)),
    assistant ? stringOrNull(textValue(message.reasoning, "reasoning", action)) : null,
    assistant
      ? stringOrNull(textValue(message.reasoning_content, "reasoning_content", action))
      : null,
    assistant ? encodeJson(message.reasoning_details) : null,
    assistant ? encodeJson(message.codex_reasoning_items) : null,
    assistant ? encodeJson(message.codex_message_items) : null,
  ]);
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

// ---------------------------------------------------------------------------
// Conversation (as lib/conversation.ts)
// ---------------------------------------------------------------------------

const WS = PYTHON_WHITESPACE;
const MAY_HOLD_MEMORY = /memory-context|\[system note:/iu;
const MEMORY_BLOCK = new RegExp(
  `<[${WS}]*memory-context[${WS}]*>[\\s\\S]*?</[${WS}]*memory-context[${WS}]*>`,
  "giu",
);
const MEMORY_NOTE = new RegExp(
  `\\[System note:[${WS}]*The following is recalled memory context,[${WS}]*` +
    `NOT new user input\\.[${WS}]*Treat as (?:informational background data|` +
    `authoritative reference data[^\\]]*)\\.\\][${WS}]*`,
  "giu",
);
const MEMORY_TAG = new RegExp(`</?[${WS}]*memory-context[${WS}]*>`, "giu");

function withoutMemoryContext(text: string): string {
  if (!MAY_HOLD_MEMORY.test(text)) return pythonStrip(text);
  return pythonStrip(
    text.replace(MEMORY_BLOCK, "").replace(MEMORY_NOTE, "").replace(MEMORY_TAG, ""),
  );
}

function truthy(value: unknown): boolean {
  return value !== null && value !== undefined && value !== "" && value !== 0;
}

function parseOr(stored: unknown, fallback: JsonValue | null): JsonValue | null {
  if (typeof stored !== "string") return fallback;
  try {
    return JSON.parse(stored) as JsonValue;
  } catch {
    return fallback;
  }
}

/**
 * One stored message in the conversation shape.
 *
 * @param row The message row (raw columns).
 * @returns The conversation message.
 */
export function toConversationMessage(row: PgRow): ConversationMessage {
  const role = row.role as string;
  let content = decodeContent(row.content);
  if ((role === "user" || role === "assistant") && typeof content === "string") {
    content = withoutMemoryContext(content);
  }
  const message: ConversationMessage = { role, content };
  if (truthy(row.tool_call_id)) message.tool_call_id = row.tool_call_id as string;
  if (truthy(row.tool_name)) message.tool_name = row.tool_name as string;
  if (truthy(row.tool_calls)) message.tool_calls = parseOr(row.tool_calls, []) as JsonValue;
  if (role === "assistant") {
    if (truthy(row.finish_reason)) message.finish_reason = row.finish_reason as string;
    if (truthy(row.reasoning)) message.reasoning = row.reasoning as string;
    if (row.reasoning_content !== null && row.reasoning_content !== undefined) {
      message.reasoning_content = row.reasoning_content as string;
    }
    for (const key of ["reasoning_details", "codex_reasoning_items", "codex_message_items"]) {
      if (truthy(row[key])) message[key] = parseOr(row[key], null);
    }
  }
  return message;
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
  const raw = pythonStrip(codePointSlice(line, 63));
  const preview = raw === ""
    ? ""
    : codePointSlice(raw, 60) + (codePointLength(raw) > 60 ? "..." : "");
  return Object.assign(row, { preview }) as unknown as RichSessionRow;
}
