/**
 * Importing what `exportSession`/`exportAll` wrote (one line of a JSONL
 * export): the session row with its original columns, its messages with
 * their original timestamps (and ids, when they are free), all or nothing.
 *
 * @module
 */
import type { SqlValue } from "./driver/types.ts";
import { encodeContent, encodeJson } from "../core/content.ts";
import type { Store } from "./store.ts";
import { insertIndexedAfter } from "./fts_bulk.ts";
import type { MessageContent } from "../core/types.ts";
import type { ImportOptions, ImportResult, ParentLink } from "../core/transfer_options.ts";
import { unknownColumns } from "../core/import_record.ts";

/** The record's columns that `store` has no place for. */
function droppedColumns(store: Store, checked: CheckedRecord): string[] {
  return unknownColumns(checked.row, checked.messages, {
    sessions: new Set(liveColumns(store, "sessions")),
    messages: new Set(liveColumns(store, "messages")),
  });
}

/** The JSON columns that exports carry as raw JSON text (Python keeps them as strings). */
const RAW_JSON_COLUMNS = new Set([
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
]);

/** The columns of `table` in file order (the store reads them once per connection). */
function liveColumns(store: Store, table: "sessions" | "messages"): string[] {
  return [...store.columns(table)];
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

function describeValue(value: unknown): string {
  if (value === undefined) return "missing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function invalid(field: string, expectation: string, value: unknown): TypeError {
  return new TypeError(
    `Cannot import session: ${field} must be ${expectation}: current value is ${
      describeValue(value)
    }`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A plain value for a column: scalars as they are, booleans as 0/1, JSON for the rest. */
function scalar(field: string, value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "bigint") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw invalid(field, "a finite number", value);
    return value;
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  return JSON.stringify(value);
}

interface CheckedRecord {
  id: string;
  row: Record<string, unknown>;
  messages: Record<string, unknown>[];
}

function check(record: unknown): CheckedRecord {
  if (!isObject(record)) throw invalid("the record", "a JSON object", record);
  const { id, source, started_at: startedAt, messages } = record;
  if (typeof id !== "string" || id === "") throw invalid("id", "a non-empty string", id);
  if (typeof source !== "string") throw invalid("source", "a string", source);
  if (!isFiniteNumber(startedAt)) throw invalid("started_at", "a number", startedAt);
  const parent = record.parent_session_id;
  if (parent !== undefined && parent !== null && typeof parent !== "string") {
    throw invalid("parent_session_id", "a string or null", parent);
  }
  if (!Array.isArray(messages)) throw invalid("messages", "a list", messages);
  messages.forEach((message, index) => {
    if (!isObject(message)) throw invalid(`messages[${index}]`, "a JSON object", message);
    if (typeof message.role !== "string") {
      throw invalid(`messages[${index}].role`, "a string", message.role);
    }
    if (!isFiniteNumber(message.timestamp)) {
      throw invalid(`messages[${index}].timestamp`, "a number", message.timestamp);
    }
  });
  return { id, row: record, messages: messages as Record<string, unknown>[] };
}

function sessionExists(store: Store, id: string): boolean {
  return store.statement("SELECT 1 AS one FROM sessions WHERE id = ?").get(id) !== undefined;
}

/** The value of one message column as the file stores it. */
function messageValue(column: string, value: unknown, field: string): SqlValue {
  if (column === "content") {
    if (value === null || value === undefined) return null;
    if (typeof value === "object") return encodeContent(value as MessageContent);
    return scalar(field, value);
  }
  if (column === "tool_calls" || RAW_JSON_COLUMNS.has(column)) {
    // A string is JSON text already (how exports carry the raw columns).
    if (typeof value === "string") return value === "" ? null : value;
    return encodeJson(value);
  }
  return scalar(field, value);
}

/** Counters a hand-written record may leave out: Python's rules (SPEC §5). */
function derivedCounters(messages: Record<string, unknown>[]): Record<string, number> {
  let toolCalls = 0;
  for (const message of messages) {
    const calls = message.tool_calls;
    if (Array.isArray(calls)) toolCalls += calls.length;
    else if (calls !== null && calls !== undefined && calls !== "") toolCalls += 1;
  }
  return { message_count: messages.length, tool_call_count: toolCalls };
}

/** True when every message carries a distinct integer id that no row uses yet. */
function originalIdsFree(store: Store, messages: Record<string, unknown>[]): boolean {
  const seen = new Set<number>();
  const taken = store.statement("SELECT 1 AS one FROM messages WHERE id = ?");
  for (const message of messages) {
    const id = message.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0 || seen.has(id)) {
      return false;
    }
    seen.add(id);
    if (taken.get(id) !== undefined) return false;
  }
  return true;
}

function writeSessionRow(
  store: Store,
  checked: CheckedRecord,
  parent: string | null,
  exists: boolean,
): void {
  const derived = derivedCounters(checked.messages);
  const columns: string[] = [];
  const values: SqlValue[] = [];
  for (const column of liveColumns(store, "sessions")) {
    if (column === "id") continue;
    if (column === "parent_session_id") {
      columns.push(column);
      values.push(parent);
    } else if (column in checked.row) {
      columns.push(column);
      values.push(scalar(column, checked.row[column]));
    } else if (column in derived) {
      columns.push(column);
      values.push(derived[column]);
    }
  }
  if (exists) {
    const assignments = columns.map((column) => `${quote(column)} = ?`).join(", ");
    store.statement(`UPDATE sessions SET ${assignments} WHERE id = ?`).run(...values, checked.id);
  } else {
    const names = ["id", ...columns].map(quote).join(", ");
    const marks = ["?", ...columns.map(() => "?")].join(", ");
    store.statement(`INSERT INTO sessions (${names}) VALUES (${marks})`).run(
      checked.id,
      ...values,
    );
  }
}

function writeMessages(store: Store, checked: CheckedRecord): void {
  const keepIds = originalIdsFree(store, checked.messages);
  const columns = liveColumns(store, "messages").filter((c) => c !== "id" && c !== "session_id");
  insertIndexedAfter(
    store,
    checked.messages.length,
    () =>
      checked.messages.map((message, index) => {
        const names = ["session_id"];
        const values: SqlValue[] = [checked.id];
        if (keepIds) {
          names.push("id");
          values.push(message.id as number);
        }
        for (const column of columns) {
          if (!(column in message)) continue;
          names.push(column);
          values.push(messageValue(column, message[column], `messages[${index}].${column}`));
        }
        const marks = names.map(() => "?").join(", ");
        return Number(
          store.statement(`INSERT INTO messages (${names.map(quote).join(", ")}) VALUES (${marks})`)
            .run(...values).lastInsertRowid,
        );
      }),
  );
}

/** Implements `SessionDB.importSession`: checks the record, then writes it in one transaction. */
export function importSession(
  store: Store,
  record: unknown,
  options: ImportOptions = {},
): ImportResult {
  const checked = check(record);
  return store.write(() => {
    const exists = sessionExists(store, checked.id);
    const named = (checked.row.parent_session_id as string | null | undefined) ?? null;
    if (exists && !options.replace) return skip(store, checked.id, named);
    const parentPresent = named === null || named === checked.id || sessionExists(store, named);
    const parent = parentPresent ? named : null;
    if (exists) store.statement("DELETE FROM messages WHERE session_id = ?").run(checked.id);
    writeSessionRow(store, checked, parent, exists);
    writeMessages(store, checked);
    return {
      outcome: exists ? "replaced" : "imported",
      id: checked.id,
      messages: checked.messages.length,
      deferredParent: parentPresent ? null : named,
      droppedColumns: droppedColumns(store, checked),
      relinked: false,
    };
  });
}

/** Links a session that has no parent to an existing parent. */
const LINK_SQL = "UPDATE sessions SET parent_session_id = ? WHERE id = ? " +
  "AND parent_session_id IS NULL AND EXISTS (SELECT 1 FROM sessions WHERE id = ?)";

/**
 * A session already present is left as it is, except for a parent link an
 * earlier, interrupted or partial import could not make: it is made when
 * the parent is in the file now, and deferred otherwise.
 */
function skip(store: Store, id: string, named: string | null): ImportResult {
  const result: ImportResult = {
    outcome: "skipped",
    id,
    messages: 0,
    deferredParent: null,
    droppedColumns: [],
    relinked: false,
  };
  if (named === null || named === id) return result;
  const current = store.statement("SELECT parent_session_id AS parent FROM sessions WHERE id = ?")
    .get(id)?.parent;
  if (current !== null && current !== undefined) return result;
  if (!sessionExists(store, named)) return { ...result, deferredParent: named };
  store.statement(LINK_SQL).run(named, id, named);
  return { ...result, relinked: true };
}

/** Implements `SessionDB.restoreParentLinks`: links still-orphaned children to present parents. */
export function restoreParentLinks(store: Store, links: readonly ParentLink[]): number {
  if (links.length === 0) return 0;
  return store.write(() => {
    const link = store.statement(LINK_SQL);
    let linked = 0;
    for (const { id, parentId } of links) linked += link.run(parentId, id, parentId).changes;
    return linked;
  });
}
