/**
 * `importSession` and `restoreParentLinks` on PostgreSQL: the checks, the
 * outcomes and the stored values of `lib/sqlite/import.ts` (original message ids
 * kept when they are free, the id sequence moved past them).
 *
 * @module
 */
import { encodeContent, encodeJson } from "../core/content.ts";
import { unknownColumns } from "../core/import_record.ts";
import type { ImportOptions, ImportResult, ParentLink } from "../core/transfer_options.ts";
import type { MessageContent } from "../core/types.ts";
import type { PgQuery, PgValue } from "./_client.ts";
import { MESSAGE_COLUMN_NAMES, SESSION_COLUMN_NAMES } from "./_rows.ts";
import { gramsVector, searchDocument, wordsVector } from "./text_search.ts";

/** Messages per multi-row INSERT (17 parameters each; PostgreSQL allows 65,535). */
const INSERT_ROWS = 500;

const RAW_JSON_COLUMNS = new Set([
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
]);

const SESSION_CASTS: Record<string, string> = {
  started_at: "double precision",
  ended_at: "double precision",
  estimated_cost_usd: "double precision",
  actual_cost_usd: "double precision",
  message_count: "bigint",
  tool_call_count: "bigint",
  input_tokens: "bigint",
  output_tokens: "bigint",
  cache_read_tokens: "bigint",
  cache_write_tokens: "bigint",
  reasoning_tokens: "bigint",
  api_call_count: "bigint",
};

const MESSAGE_CASTS: Record<string, string> = {
  id: "bigint",
  timestamp: "double precision",
  token_count: "bigint",
  search_words: "tsvector",
  search_grams: "tsvector",
};

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

function scalar(field: string, value: unknown): PgValue {
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

function messageValue(column: string, value: unknown, field: string): PgValue {
  if (column === "content") {
    if (value === null || value === undefined) return null;
    if (typeof value === "object") return encodeContent(value as MessageContent);
    return scalar(field, value);
  }
  if (column === "tool_calls" || RAW_JSON_COLUMNS.has(column)) {
    if (typeof value === "string") return value === "" ? null : value;
    return encodeJson(value);
  }
  return scalar(field, value);
}

function derivedCounters(messages: Record<string, unknown>[]): Record<string, number> {
  let toolCalls = 0;
  for (const message of messages) {
    const calls = message.tool_calls;
    if (Array.isArray(calls)) toolCalls += calls.length;
    else if (calls !== null && calls !== undefined && calls !== "") toolCalls += 1;
  }
  return { message_count: messages.length, tool_call_count: toolCalls };
}

function cast(column: string, casts: Record<string, string>): string {
  return `::${casts[column] ?? "text"}`;
}

async function sessionExists(query: PgQuery, id: string): Promise<boolean> {
  return (await query("SELECT 1 FROM sessions WHERE id = $1", [id])).length > 0;
}

async function originalIdsFree(
  query: PgQuery,
  messages: Record<string, unknown>[],
): Promise<boolean> {
  if (messages.length === 0) return true;
  const seen = new Set<number>();
  for (const message of messages) {
    const id = message.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0 || seen.has(id)) {
      return false;
    }
    seen.add(id);
  }
  const taken = await query(
    "SELECT 1 FROM messages WHERE id IN (SELECT json_array_elements_text($1::text::json)::bigint) LIMIT 1",
    [JSON.stringify([...seen])],
  );
  return taken.length === 0;
}

async function writeSessionRow(
  query: PgQuery,
  checked: CheckedRecord,
  parent: string | null,
  exists: boolean,
): Promise<void> {
  const derived = derivedCounters(checked.messages);
  const columns: string[] = [];
  const values: PgValue[] = [];
  for (const column of SESSION_COLUMN_NAMES) {
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
  const marks = columns.map((c, i) => `$${i + 2}${cast(c, SESSION_CASTS)}`);
  if (exists) {
    const assignments = columns.map((c, i) => `${c} = ${marks[i]}`).join(", ");
    await query(`UPDATE sessions SET ${assignments} WHERE id = $1`, [checked.id, ...values]);
  } else {
    await query(
      `INSERT INTO sessions (id, ${columns.join(", ")}) VALUES ($1, ${marks.join(", ")})`,
      [checked.id, ...values],
    );
  }
}

async function writeMessages(query: PgQuery, checked: CheckedRecord): Promise<void> {
  const keepIds = await originalIdsFree(query, checked.messages);
  const columns = MESSAGE_COLUMN_NAMES.filter((c) => c !== "id" && c !== "session_id");
  let highest = 0;
  // Consecutive messages with the same columns go in one multi-row INSERT (in order, so
  // new ids follow the record's order).
  let pending: { names: string[]; rows: PgValue[][] } | undefined;
  const flush = async () => {
    if (pending === undefined || pending.rows.length === 0) return;
    const { names, rows } = pending;
    pending = undefined;
    const params: PgValue[] = [];
    const tuples = rows.map((values) => {
      const marks = values.map((value, i) => {
        params.push(value);
        return `$${params.length}${cast(names[i], MESSAGE_CASTS)}`;
      });
      return `(${marks.join(", ")})`;
    });
    await query(`INSERT INTO messages (${names.join(", ")}) VALUES ${tuples.join(", ")}`, params);
  };
  for (const [index, message] of checked.messages.entries()) {
    const names = ["session_id"];
    const values: PgValue[] = [checked.id];
    if (keepIds) {
      names.push("id");
      values.push(message.id as number);
      highest = Math.max(highest, message.id as number);
    }
    const stored: Record<string, PgValue> = {};
    for (const column of columns) {
      if (!(column in message)) continue;
      names.push(column);
      const value = messageValue(column, message[column], `messages[${index}].${column}`);
      stored[column] = value;
      values.push(value);
    }
    const doc = searchDocument(
      stored.content == null ? null : String(stored.content),
      stored.tool_name == null ? null : String(stored.tool_name),
      stored.tool_calls == null ? null : String(stored.tool_calls),
    );
    names.push("search_words", "search_grams");
    values.push(wordsVector(doc), gramsVector(doc));
    if (
      pending !== undefined &&
      (pending.rows.length >= INSERT_ROWS || pending.names.join() !== names.join())
    ) {
      await flush();
    }
    pending ??= { names, rows: [] };
    pending.rows.push(values);
  }
  await flush();
  if (highest > 0) {
    // Only ever forward: the sequence must never hand out an id that exists.
    await query(
      `SELECT setval(pg_get_serial_sequence('messages', 'id'), $1::bigint)
       WHERE $1::bigint > (SELECT last_value FROM messages_id_seq)`,
      [highest],
    );
  }
}

/**
 * Imports one exported session record, as `SessionDB.importSession` does.
 *
 * @param transaction Runs a function in one transaction.
 * @param record One record of a JSONL export.
 * @param options `replace` an existing session instead of skipping it.
 * @returns What happened.
 * @throws {TypeError} When the record is not a valid session export.
 */
export async function importSessionPg(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  record: unknown,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const checked = check(record);
  return await transaction(async (query) => {
    const exists = await sessionExists(query, checked.id);
    const named = (checked.row.parent_session_id as string | null | undefined) ?? null;
    if (exists && !options.replace) return await skip(query, checked.id, named);
    const parentPresent = named === null || named === checked.id ||
      await sessionExists(query, named);
    const parent = parentPresent ? named : null;
    if (exists) await query("DELETE FROM messages WHERE session_id = $1", [checked.id]);
    if (!exists && parent === checked.id) {
      // A row cannot name itself before it exists: insert, then link.
      await writeSessionRow(query, checked, null, false);
      await query("UPDATE sessions SET parent_session_id = id WHERE id = $1", [checked.id]);
    } else {
      await writeSessionRow(query, checked, parent, exists);
    }
    await writeMessages(query, checked);
    return {
      outcome: exists ? "replaced" : "imported",
      id: checked.id,
      messages: checked.messages.length,
      deferredParent: parentPresent ? null : named,
      droppedColumns: unknownColumns(checked.row, checked.messages, PG_COLUMNS),
      relinked: false,
    };
  });
}

/** The columns the PostgreSQL tables have (the v11 ones). */
const PG_COLUMNS = {
  sessions: new Set(SESSION_COLUMN_NAMES),
  messages: new Set(MESSAGE_COLUMN_NAMES),
};

/**
 * A session already present is left as it is, except for a parent link an
 * earlier import could not make: made when the parent is in now, deferred
 * otherwise (as `importSession` on SQLite).
 */
async function skip(query: PgQuery, id: string, named: string | null): Promise<ImportResult> {
  const result: ImportResult = {
    outcome: "skipped",
    id,
    messages: 0,
    deferredParent: null,
    droppedColumns: [],
    relinked: false,
  };
  if (named === null || named === id) return result;
  const rows = await query("SELECT parent_session_id AS parent FROM sessions WHERE id = $1", [id]);
  if (rows[0]?.parent !== null && rows[0]?.parent !== undefined) return result;
  if (!await sessionExists(query, named)) return { ...result, deferredParent: named };
  const linked = await query(
    `UPDATE sessions SET parent_session_id = $1 WHERE id = $2 AND parent_session_id IS NULL
     AND EXISTS (SELECT 1 FROM sessions WHERE id = $1) RETURNING id`,
    [named, id],
  );
  return { ...result, relinked: linked.length > 0 };
}

/**
 * Links imported sessions to parents imported after them.
 *
 * @param transaction Runs a function in one transaction.
 * @param links The deferred links.
 * @returns How many were linked.
 */
export async function restoreParentLinksPg(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  links: readonly ParentLink[],
): Promise<number> {
  if (links.length === 0) return 0;
  return await transaction(async (query) => {
    let linked = 0;
    for (const { id, parentId } of links) {
      const rows = await query(
        `UPDATE sessions SET parent_session_id = $1 WHERE id = $2 AND parent_session_id IS NULL
         AND EXISTS (SELECT 1 FROM sessions WHERE id = $1) RETURNING id`,
        [parentId, id],
      );
      linked += rows.length;
    }
    return linked;
  });
}
