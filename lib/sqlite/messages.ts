/**
 * Message history: append, replace, clear, read, count.
 *
 * Counters follow Python: `message_count` +1 per message; `tool_call_count`
 * + the length of a `tool_calls` array, +1 for any other non-null value,
 * whatever the role. JSON columns are written by `pythonJson` (empty → NULL),
 * multimodal content behind the `"\u0000json:"` prefix.
 *
 * @module
 */
import type { SqlValue } from "./driver/types.ts";
import { SqliteError } from "./driver/sqlite_error.ts";
import { ReadonlyError } from "../core/errors.ts";
import type { Store } from "./store.ts";
import type { ConversationMessage, JsonValue, MessageRow, NewMessage } from "../core/types.ts";
import { decodeContent, encodeContent, encodeJson } from "../core/content.ts";
import { insertIndexedAfter } from "./fts_bulk.ts";
import type { MessagesOptions } from "../core/session_options.ts";

const INSERT_MESSAGE = `INSERT INTO messages (session_id, role, content, tool_call_id,
  tool_calls, tool_name, timestamp, token_count, finish_reason,
  reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
  codex_message_items)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

const ADD_TO_COUNTERS = `UPDATE sessions SET message_count = message_count + ?,
  tool_call_count = tool_call_count + ? WHERE id = ?`;

/** Python's replace step writes timestamps this far apart, so order is kept. */
const TIMESTAMP_STEP = 1e-6;

/**
 * The error SQLite raises for a message whose session does not exist, also
 * thrown when the file's schema has no foreign key to raise it.
 */
function missingSession(): SqliteError {
  return new SqliteError("FOREIGN KEY constraint failed", 19, { extendedCode: 787 });
}

function describe(value: unknown): string {
  try {
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** A text column value: a string (or a number, as Python would bind it), else NULL. */
function textValue(value: unknown, field: string, action: string): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "bigint") {
    return value;
  }
  throw new TypeError(
    `Cannot ${action}: ${field} must be a string: current value is ${describe(value)}`,
  );
}

function integerValue(value: unknown, field: string, action: string): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "bigint" || (typeof value === "number" && Number.isFinite(value))) {
    return value;
  }
  throw new TypeError(
    `Cannot ${action}: ${field} must be a number: current value is ${describe(value)}`,
  );
}

/** What one message adds to `tool_call_count`. */
function toolCallsAdded(toolCalls: unknown): number {
  if (toolCalls === undefined || toolCalls === null) return 0;
  return Array.isArray(toolCalls) ? toolCalls.length : 1;
}

/** The 14 bound values of one row (`timestamp` filled in by the caller). */
type MessageParams = SqlValue[];

function newMessageParams(sessionId: string, message: NewMessage, action: string): MessageParams {
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
  return [
    sessionId,
    message.role,
    encodeContent(message.content),
    textValue(message.toolCallId, "toolCallId", action),
    encodeJson(message.toolCalls),
    textValue(message.toolName, "toolName", action),
    0,
    integerValue(message.tokenCount, "tokenCount", action),
    textValue(message.finishReason, "finishReason", action),
    textValue(message.reasoning, "reasoning", action),
    textValue(message.reasoningContent, "reasoningContent", action),
    encodeJson(message.reasoningDetails),
    encodeJson(message.codexReasoningItems),
    encodeJson(message.codexMessageItems),
  ];
}

function conversationParams(
  sessionId: string,
  message: ConversationMessage,
  action: string,
): MessageParams {
  if (message === null || typeof message !== "object") {
    throw new TypeError(
      `Cannot ${action}: a message must be an object: current value is ${describe(message)}`,
    );
  }
  const role = textValue(message.role ?? "unknown", "role", action);
  // Reasoning fields belong to assistant turns only (as in Python).
  const assistant = role === "assistant";
  return [
    sessionId,
    role,
    encodeContent(message.content),
    textValue(message.tool_call_id, "tool_call_id", action),
    encodeJson(message.tool_calls),
    textValue(message.tool_name, "tool_name", action),
    0,
    integerValue(message.token_count, "token_count", action),
    textValue(message.finish_reason, "finish_reason", action),
    assistant ? textValue(message.reasoning, "reasoning", action) : null,
    assistant ? textValue(message.reasoning_content, "reasoning_content", action) : null,
    assistant ? encodeJson(message.reasoning_details) : null,
    assistant ? encodeJson(message.codex_reasoning_items) : null,
    assistant ? encodeJson(message.codex_message_items) : null,
  ];
}

const TIMESTAMP = 6;

/** Implements `SessionDB.appendMessage`: one row plus the counters, in one write. */
export function appendMessage(store: Store, sessionId: string, message: NewMessage): number {
  const params = newMessageParams(sessionId, message, "append message");
  const added = toolCallsAdded(message.toolCalls);
  return store.write(() => {
    params[TIMESTAMP] = store.now();
    const { lastInsertRowid } = store.statement(INSERT_MESSAGE).run(...params);
    const { changes } = store.statement(ADD_TO_COUNTERS).run(1, added, sessionId);
    if (changes === 0) throw missingSession();
    return Number(lastInsertRowid);
  });
}

/** Implements `SessionDB.appendMessages`: many rows, indexed in one pass (see `fts_bulk.ts`). */
export function appendMessages(
  store: Store,
  sessionId: string,
  messages: readonly NewMessage[],
): number[] {
  if (!Array.isArray(messages)) {
    throw new TypeError(
      `Cannot append messages: messages must be an array: current value is ${describe(messages)}`,
    );
  }
  if (store.readonly) throw new ReadonlyError(store.path);
  if (messages.length === 0) return [];
  return store.write(() => {
    let toolCalls = 0;
    const ids = insertIndexedAfter(store, messages.length, () => {
      const insert = store.statement(INSERT_MESSAGE);
      const ids = new Array<number>(messages.length);
      let timestamp = store.now();
      for (let i = 0; i < messages.length; i++) {
        const message = messages[i];
        const params = newMessageParams(sessionId, message, "append messages");
        params[TIMESTAMP] = timestamp;
        ids[i] = Number(insert.run(...params).lastInsertRowid);
        toolCalls += toolCallsAdded(message.toolCalls);
        timestamp += TIMESTAMP_STEP;
      }
      return ids;
    });
    const { changes } = store.statement(ADD_TO_COUNTERS).run(messages.length, toolCalls, sessionId);
    if (changes === 0) throw missingSession();
    return ids;
  });
}

/** Implements `SessionDB.replaceMessages`: delete, re-insert, recount, in one write. */
export function replaceMessages(
  store: Store,
  sessionId: string,
  messages: readonly ConversationMessage[],
): void {
  if (!Array.isArray(messages)) {
    throw new TypeError(
      `Cannot replace messages: messages must be an array: current value is ${describe(messages)}`,
    );
  }
  store.write(() => {
    store.statement("DELETE FROM messages WHERE session_id = ?").run(sessionId);
    const insert = store.statement(INSERT_MESSAGE);
    let timestamp = store.now();
    let toolCalls = 0;
    insertIndexedAfter(store, messages.length, () =>
      messages.map((message) => {
        const params = conversationParams(sessionId, message, "replace messages");
        params[TIMESTAMP] = timestamp;
        timestamp += TIMESTAMP_STEP;
        toolCalls += toolCallsAdded(message.tool_calls);
        return Number(insert.run(...params).lastInsertRowid);
      }));
    const { changes } = store
      .statement("UPDATE sessions SET message_count = ?, tool_call_count = ? WHERE id = ?")
      .run(messages.length, toolCalls, sessionId);
    if (changes === 0 && messages.length > 0) throw missingSession();
  });
}

/** Implements `SessionDB.clearMessages`: deletes the rows and zeroes the counters. */
export function clearMessages(store: Store, sessionId: string): void {
  store.write(() => {
    store.statement("DELETE FROM messages WHERE session_id = ?").run(sessionId);
    store
      .statement("UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?")
      .run(sessionId);
  });
}

/**
 * `tool_calls` as Python's `get_messages` returns it: parsed when non-empty,
 * `[]` when the JSON is bad, anything falsy as it is.
 */
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
 * Turns a raw `messages` row into a {@linkcode MessageRow}: content decoded,
 * `tool_calls` parsed (bad JSON → `[]`). The other JSON columns stay JSON
 * text, as Python returns them. Never throws on bad data.
 *
 * @param row A `SELECT *` row of `messages`.
 * @returns The message, keeping every column (including unknown ones).
 */
function messageFromRow(row: Record<string, unknown>): MessageRow {
  const message = row as MessageRow;
  if ("content" in row) message.content = decodeContent(row.content);
  if ("tool_calls" in row) message.tool_calls = parseToolCalls(row.tool_calls);
  return message;
}

/** Implements `SessionDB.getMessages`: the rows by `timestamp, id`, decoded. */
export function getMessages(
  store: Store,
  sessionId: string,
  options: MessagesOptions = {},
): MessageRow[] {
  const live = !options.includeInactive && store.columns("messages").has("active");
  return store
    .statement(
      `SELECT * FROM messages WHERE session_id = ?${
        live ? ACTIVE_ONLY : ""
      } ORDER BY timestamp, id`,
    )
    .all(sessionId)
    .map(messageFromRow);
}

/** The rows a newer Hermes replays: not rewound, not compacted (`active` is 1, or NULL). */
export const ACTIVE_ONLY = " AND COALESCE(active, 1) != 0";

/** Implements `SessionDB.messageCount`: `COUNT(*)` of one session's rows, or of all. */
export function messageCount(store: Store, sessionId?: string): number {
  const row = sessionId
    ? store.statement("SELECT COUNT(*) AS n FROM messages WHERE session_id = ?").get(sessionId)
    : store.statement("SELECT COUNT(*) AS n FROM messages").get();
  return Number(row?.n ?? 0);
}
