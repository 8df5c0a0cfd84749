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
import { SqliteError } from "./driver/sqlite_error.ts";
import { ReadonlyError } from "../core/errors.ts";
import type { Store } from "./store.ts";
import type { ConversationMessage, MessageRow, NewMessage } from "../core/types.ts";
import { messageFromRow } from "../core/message_row.ts";
import {
  conversationValues,
  MESSAGE_VALUE_NAMES,
  messageValues,
  toolCallsAdded,
} from "../core/message_values.ts";
import { describeValue } from "../core/shown_value.ts";
import { insertIndexedAfter } from "./fts_bulk.ts";
import {
  checkedAfterId,
  checkKeyText,
  checkOptionalText,
  type MessagesOptions,
} from "../core/session_options.ts";

/** The INSERT column list: the session, the message's values, the write's timestamp. */
const INSERT_NAMES = ["session_id", ...MESSAGE_VALUE_NAMES, "timestamp"];

/** One message row; bound as `(sessionId, ...messageValues(m), timestamp)`. */
const INSERT_MESSAGE = `INSERT INTO messages (${INSERT_NAMES.join(", ")}) VALUES (${
  INSERT_NAMES.map(() => "?").join(", ")
})`;

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

/** Implements `SessionDB.appendMessage`: one row plus the counters, in one write. */
export function appendMessage(store: Store, sessionId: string, message: NewMessage): number {
  checkKeyText("append message", "sessionId", sessionId);
  const values = messageValues(message, "append message");
  const added = toolCallsAdded(message.toolCalls);
  return store.write(() => {
    const { lastInsertRowid } = store.statement(INSERT_MESSAGE).run(
      sessionId,
      ...values,
      store.now(),
    );
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
  checkKeyText("append messages", "sessionId", sessionId);
  if (!Array.isArray(messages)) {
    throw new TypeError(
      `Cannot append messages: messages must be an array: current value is ${
        describeValue(messages)
      }`,
    );
  }
  if (store.readonly) throw new ReadonlyError(store.path);
  if (messages.length === 0) return [];
  // Every message checked before any is written: a bad one is a TypeError, whatever the session.
  const checked = Array.from(messages, (message) => messageValues(message, "append messages"));
  return store.write(() => {
    let toolCalls = 0;
    const ids = insertIndexedAfter(store, messages.length, () => {
      const insert = store.statement(INSERT_MESSAGE);
      const ids = new Array<number>(messages.length);
      let timestamp = store.now();
      for (let i = 0; i < messages.length; i++) {
        const message = messages[i];
        ids[i] = Number(insert.run(sessionId, ...checked[i], timestamp).lastInsertRowid);
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
  checkKeyText("replace messages", "sessionId", sessionId);
  if (!Array.isArray(messages)) {
    throw new TypeError(
      `Cannot replace messages: messages must be an array: current value is ${
        describeValue(messages)
      }`,
    );
  }
  store.write(() => {
    store.statement("DELETE FROM messages WHERE session_id = ?").run(sessionId);
    const insert = store.statement(INSERT_MESSAGE);
    let timestamp = store.now();
    let toolCalls = 0;
    insertIndexedAfter(store, messages.length, () =>
      // Array.from, not map(): a hole (`[a, , b]`) is seen, and refused, as `undefined`.
      Array.from(messages, (message) => {
        const values = conversationValues(message, "replace messages");
        const id = Number(insert.run(sessionId, ...values, timestamp).lastInsertRowid);
        timestamp += TIMESTAMP_STEP;
        toolCalls += toolCallsAdded(message.tool_calls);
        return id;
      }));
    const { changes } = store
      .statement("UPDATE sessions SET message_count = ?, tool_call_count = ? WHERE id = ?")
      .run(messages.length, toolCalls, sessionId);
    if (changes === 0 && messages.length > 0) throw missingSession();
  });
}

/** Implements `SessionDB.clearMessages`: deletes the rows and zeroes the counters. */
export function clearMessages(store: Store, sessionId: string): void {
  checkKeyText("clear messages", "sessionId", sessionId);
  store.write(() => {
    store.statement("DELETE FROM messages WHERE session_id = ?").run(sessionId);
    store
      .statement("UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?")
      .run(sessionId);
  });
}

/** Implements `SessionDB.getMessages`: the rows by `timestamp, id`, decoded. */
export function getMessages(
  store: Store,
  sessionId: string,
  options: MessagesOptions = {},
): MessageRow[] {
  checkKeyText("read messages", "sessionId", sessionId);
  options ??= {};
  const live = !options.includeInactive && store.columns("messages").has("active");
  const after = checkedAfterId(options.afterId);
  return store
    .statement(
      `SELECT * FROM messages WHERE session_id = ?${after === undefined ? "" : " AND id > ?"}${
        live ? ACTIVE_ONLY : ""
      } ORDER BY timestamp, id`,
    )
    .all(...(after === undefined ? [sessionId] : [sessionId, after]))
    .map(messageFromRow);
}

/** The rows a newer Hermes replays: not rewound, not compacted (`active` is 1, or NULL). */
export const ACTIVE_ONLY = " AND COALESCE(active, 1) != 0";

/** Implements `SessionDB.messageCount`: `COUNT(*)` of one session's rows, or of all. */
export function messageCount(store: Store, sessionId?: string): number {
  checkOptionalText("count messages", "sessionId", sessionId);
  const row = sessionId
    ? store.statement("SELECT COUNT(*) AS n FROM messages WHERE session_id = ?").get(sessionId)
    : store.statement("SELECT COUNT(*) AS n FROM messages").get();
  return Number(row?.n ?? 0);
}
