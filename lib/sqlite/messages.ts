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
import type { SqlValue } from "./driver/types.ts";
import { ReadonlyError } from "../core/errors.ts";
import { isForeignKeyFailure, missingSessionMessage } from "../core/missing_session.ts";
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
import { readsAfterAlongRowid } from "./rows_after.ts";
import {
  type CheckedMessagesOptions,
  checkedMessagesOptions,
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
 * The error SQLite raises for a message whose session does not exist, naming
 * it; also thrown when the file's schema has no foreign key to raise it.
 */
function missingSession(doing: string, sessionId: string, cause?: unknown): SqliteError {
  return new SqliteError(missingSessionMessage(doing, sessionId), 19, { extendedCode: 787, cause });
}

/** Runs the write `body` of messages of `sessionId`, naming the session when it does not exist. */
function ofSession<T>(store: Store, doing: string, sessionId: string, body: () => T): T {
  return store.write(() => {
    try {
      return body();
    } catch (error) {
      if (isForeignKeyFailure(error)) throw missingSession(doing, sessionId, error);
      throw error;
    }
  });
}

/** Implements `SessionDB.appendMessage`: one row plus the counters, in one write. */
export function appendMessage(store: Store, sessionId: string, message: NewMessage): number {
  checkKeyText("append message", "sessionId", sessionId);
  const values = messageValues(message, "append message");
  const added = toolCallsAdded(message.toolCalls);
  return ofSession(store, "append message", sessionId, () => {
    const { lastInsertRowid } = store.statement(INSERT_MESSAGE).run(
      sessionId,
      ...values,
      store.now(),
    );
    const { changes } = store.statement(ADD_TO_COUNTERS).run(1, added, sessionId);
    if (changes === 0) throw missingSession("append message", sessionId);
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
  return ofSession(store, "append messages", sessionId, () => {
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
    if (changes === 0) throw missingSession("append messages", sessionId);
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
  ofSession(store, "replace messages", sessionId, () => {
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
    if (changes === 0 && messages.length > 0) throw missingSession("replace messages", sessionId);
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
  const checked = checkedMessagesOptions("read messages", options);
  const { where, params } = selection(store, sessionId, checked);
  const rows = `SELECT * FROM messages m WHERE ${where}`;
  const take = checked.take;
  const sql = take === undefined ? `${rows} ORDER BY m.timestamp, m.id` : take.newest
    // The last ones: read backwards along the index, then put back in order.
    ? `SELECT * FROM (${rows} ORDER BY m.timestamp DESC, m.id DESC LIMIT ?) ORDER BY timestamp, id`
    : `${rows} ORDER BY m.timestamp, m.id LIMIT ?`;
  const bound = take === undefined ? params : [...params, take.count];
  return store.statement(sql).all(...bound).map(messageFromRow);
}

/** Implements `SessionDB.countMessages`: how many rows `getMessages` returns, counted in SQL. */
export function countMessages(
  store: Store,
  sessionId: string,
  options: MessagesOptions = {},
): number {
  checkKeyText("count messages", "sessionId", sessionId);
  const checked = checkedMessagesOptions("count messages", options);
  const { where, params } = selection(store, sessionId, checked);
  const row = store.statement(`SELECT COUNT(*) AS n FROM messages m WHERE ${where}`).get(...params);
  const count = Number(row?.n ?? 0);
  return checked.take === undefined ? count : Math.min(count, checked.take.count);
}

/**
 * The timestamp of the session's message `?` (bound: the id, the session): a place in the
 * order, read by the primary key; NULL, so no row, when the session has no such message.
 */
const CURSOR_TIMESTAMP = "(SELECT c.timestamp FROM messages c WHERE c.id = ? AND c.session_id = ?)";

/**
 * The `WHERE` clause (of `messages m`) that {@linkcode MessagesOptions} select, and its
 * parameters. A place (`beforeId`, `fromId`) is a range of `idx_messages_session`
 * (`session_id, timestamp`, then the rowid), so a page reads its own rows, not the session's.
 */
function selection(
  store: Store,
  sessionId: string,
  options: CheckedMessagesOptions,
): { where: string; params: SqlValue[] } {
  const columns = store.columns("messages");
  const afterId = options.afterId;
  // Past an id, the rows may be fewer along the rowid: `+` keeps the index out (rows_after.ts).
  const alongRowid = afterId !== undefined && readsAfterAlongRowid(store, sessionId, afterId);
  let where = alongRowid ? "+m.session_id = ?" : "m.session_id = ?";
  const params: SqlValue[] = [sessionId];
  if (afterId !== undefined) {
    where += " AND m.id > ?";
    params.push(afterId);
  }
  const place = (id: number, inOrder: "<" | ">", sameTime: "<" | ">=") => {
    where += ` AND m.timestamp ${inOrder}= ${CURSOR_TIMESTAMP}` +
      ` AND (m.timestamp ${inOrder} ${CURSOR_TIMESTAMP} OR m.id ${sameTime} ?)`;
    params.push(id, sessionId, id, sessionId, id);
  };
  if (options.beforeId !== undefined) place(options.beforeId, "<", "<");
  if (options.fromId !== undefined) place(options.fromId, ">", ">=");
  if (!options.includeInactive && columns.has("active")) where += ACTIVE_ONLY;
  // As isShownInTranscript reads it: a BLOB as its text.
  if (options.excludeHidden && columns.has("display_kind")) {
    where += " AND CAST(m.display_kind AS TEXT) IS NOT 'hidden'";
  }
  return { where, params };
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
