/**
 * An import record (a session with its messages, as `export` writes it)
 * checked the same way by every engine before it writes anything.
 *
 * @module
 */
import { encodeContent, encodeJson, MULTIMODAL_PREFIX, pythonJson } from "./content.ts";
import { storedTextOf } from "./stored_text.ts";
import { MAX_VALUE_DEPTH, nestedDeeperThan, parseJsonExact } from "./exact_json.ts";
import { quotedValue } from "./shown_value.ts";
import { STORED_BYTES_KEY } from "./stored_bytes.ts";
import { parsePythonJson } from "./python_json_parse.ts";
import { MODEL_USAGE_KEY } from "./session_model_usage.ts";
import type { ImportResult } from "./transfer_options.ts";
import type { MessageContent } from "./types.ts";

/**
 * Keys an export adds that are no column: they are never reported as
 * dropped. `hermes_state_bytes` is not one: an engine that stores the bytes
 * it carries takes it out first, and one that does not reports it.
 */
const NOT_COLUMNS = new Set(["messages", "last_active", "id", "session_id", MODEL_USAGE_KEY]);

/**
 * The columns of a record (session ones, then `messages.` ones) that the
 * target's tables have no place for; shared by every engine.
 *
 * @param row The session record.
 * @param messages Its messages.
 * @param columns The target's column names of `sessions` and of `messages`.
 * @returns The dropped column names.
 */
export function unknownColumns(
  row: Record<string, unknown>,
  messages: readonly Record<string, unknown>[],
  columns: { sessions: ReadonlySet<string>; messages: ReadonlySet<string> },
): string[] {
  const dropped = Object.keys(row).filter((key) =>
    !NOT_COLUMNS.has(key) && !columns.sessions.has(key)
  );
  const messageKeys = new Set(messages.flatMap((message) => Object.keys(message)));
  for (const key of messageKeys) {
    if (!NOT_COLUMNS.has(key) && !columns.messages.has(key)) dropped.push(`messages.${key}`);
  }
  return dropped;
}

/** A value an import writes to a column: text, a number, or NULL. */
export type ImportValue = string | number | bigint | null;

/** A record that passed {@linkcode checkImportRecord}. */
export interface ImportRecord {
  /** The session id. */
  readonly id: string;
  /** The whole record (its session columns, and more). */
  readonly row: Record<string, unknown>;
  /** Its messages, each an object with a role and a timestamp. */
  readonly messages: Record<string, unknown>[];
}

/** A value, short, for an error message. */
function shortValue(value: unknown): string {
  if (value === undefined) return "missing";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (typeof value === "bigint") return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function invalid(field: string, expectation: string, value: unknown): TypeError {
  return new TypeError(
    `Cannot import session: ${field} must be ${expectation}: current value is ${shortValue(value)}`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A number, or an integer beyond 2^53 as an exact import reads it (`bigint`). */
function isCount(value: unknown): boolean {
  return isFiniteNumber(value) || typeof value === "bigint";
}

/** Seconds a JavaScript `Date` can hold either side of 1970 (8.64e15 ms). */
const LATEST_TIME = 8.64e12;

function isTime(value: unknown): value is number {
  return isFiniteNumber(value) && Math.abs(value) <= LATEST_TIME;
}

const TIME_EXPECTED = "a time in Unix seconds";

/** Session columns that hold numbers (or NULL): a record's text there would read back as NaN. */
const NUMBER_COLUMNS = [
  "message_count",
  "tool_call_count",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "estimated_cost_usd",
  "actual_cost_usd",
  "api_call_count",
] as const;

function checkNumbers(record: Record<string, unknown>): void {
  const ended = record.ended_at;
  if (ended !== undefined && ended !== null && !isTime(ended)) {
    throw invalid("ended_at", `${TIME_EXPECTED} or null`, ended);
  }
  for (const column of NUMBER_COLUMNS) {
    const value = record[column];
    if (value !== undefined && value !== null && !isCount(value)) {
      throw invalid(column, "a number or null", value);
    }
  }
}

/**
 * Whether `record` carries `column`'s stored bytes (`hermes_state_bytes`:
 * a BLOB, or text that is not valid UTF-8), which stand for the column's
 * value: export writes the column itself as `null` for a BLOB.
 */
function carriesBytes(record: Record<string, unknown>, column: string): boolean {
  const carried = record[STORED_BYTES_KEY];
  return isObject(carried) && Object.hasOwn(carried, column);
}

/**
 * Checks one record of a JSONL export before anything is written: a
 * non-empty string id, a string source (or its bytes, carried), a start in Unix seconds (within
 * what a JavaScript `Date` holds), an end likewise or null, numbers (or
 * null) in the counter, token and cost columns, a string (or null) parent,
 * a title that is no list or object, and a list of messages that each have a string role (or its bytes,
 * carried) and a timestamp as the start.
 *
 * @param record One parsed line of an export.
 * @returns The record, typed.
 * @throws {TypeError} Naming the first field that is wrong and its value.
 */
export function checkImportRecord(record: unknown): ImportRecord {
  if (!isObject(record)) throw invalid("the record", "a JSON object", record);
  const { id, source, started_at: startedAt, messages } = record;
  if (typeof id !== "string" || id === "") throw invalid("id", "a non-empty string", id);
  if (typeof source !== "string" && !carriesBytes(record, "source")) {
    throw invalid("source", "a string", source);
  }
  if (!isTime(startedAt)) throw invalid("started_at", TIME_EXPECTED, startedAt);
  checkNumbers(record);
  const parent = record.parent_session_id;
  if (parent !== undefined && parent !== null && typeof parent !== "string") {
    throw invalid("parent_session_id", "a string or null", parent);
  }
  // A title is text (a number is stored as its text): a list or an object failed its line with
  // the raw UNIQUE error of a title another session holds.
  const title = record.title;
  if (typeof title === "object" && title !== null) {
    throw invalid("title", "a string, a number or null", title);
  }
  if (!Array.isArray(messages)) throw invalid("messages", "a list", messages);
  // By index, not forEach(): forEach() skips an array's holes, which are no messages.
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index];
    if (!isObject(message)) throw invalid(`messages[${index}]`, "a JSON object", message);
    if (typeof message.role !== "string" && !carriesBytes(message, "role")) {
      throw invalid(`messages[${index}].role`, "a string", message.role);
    }
    if (!isTime(message.timestamp)) {
      throw invalid(`messages[${index}].timestamp`, TIME_EXPECTED, message.timestamp);
    }
  }
  return { id, row: record, messages: messages as Record<string, unknown>[] };
}

/** The parent the record names, `null` when none. */
export function namedParent(record: ImportRecord): string | null {
  return (record.row.parent_session_id as string | null | undefined) ?? null;
}

/** SQLite's INTEGER range: an integer beyond it is a REAL there. */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A plain column value: scalars as they are, booleans as the integers 0
 * and 1, JSON text for the rest. A whole number is an integer, as Python's `json` reads it and
 * `sqlite3` binds it: Deno's and Node's drivers bind every number as a REAL,
 * which a text column then kept as `"123456789.0"` (Bun's as `"123456789"`).
 * An integer beyond SQLite's 64-bit range (which an exact read of an export
 * gives as a `bigint`) is the number it is, as SQLite reads such a literal:
 * an export writes a REAL of 1e19 so (`10000000000000000000`), and binding
 * it failed the line ("BigInt value is too large to bind").
 *
 * @param field The field, for the error.
 * @param value The record's value.
 * @returns What the column stores.
 * @throws {TypeError} For a number that is not finite.
 */
export function scalarValue(field: string, value: unknown): ImportValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") {
    return value >= INT64_MIN && value <= INT64_MAX ? value : Number(value);
  }
  if (typeof value === "string") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw invalid(field, "a finite number", value);
    // -0 stays the REAL it is (JSON's -0 and -0.0 read alike).
    return Number.isSafeInteger(value) && !Object.is(value, -0) ? BigInt(value) : value;
  }
  // An integer too, as Python binds True: a REAL 1 made a text column '1.0' on Deno and Node.
  if (typeof value === "boolean") return value ? 1n : 0n;
  return JSON.stringify(value);
}

/**
 * The JSON columns that exports carry as the stored JSON text (Python's
 * `get_messages` returns them as strings). `tool_calls` is not one: every
 * export carries it parsed, so a string there is a value (Python's
 * `append_message(..., tool_calls="text")` stores `"text"`, quotes included).
 */
const RAW_JSON_COLUMNS = new Set([
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
]);

/**
 * The stored form of message content read from a record: text as it is;
 * any other value (parts, and also a number or a boolean, which an export
 * carries for a stored `"\u0000json:5"`) behind the multimodal prefix, so
 * that Python reads back the value and not its text.
 */
function contentImportValue(value: unknown, field: string): ImportValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw invalid(field, "a finite number", value);
  }
  if (typeof value === "bigint") return String(value);
  return encodeContent(value as MessageContent);
}

/** The value stored JSON text holds, `undefined` when it is no JSON. */
function parsedOrUndefined(text: string): unknown {
  try {
    return parsePythonJson(text);
  } catch {
    return undefined;
  }
}

/**
 * The stored text a message read from another store carries for `column`
 * ({@linkcode storedTextOf}), when the value is still the one read from it
 * (both write the same JSON): writing it keeps the bytes, where encoding
 * the value again would lose what a JavaScript number cannot hold
 * (`1.0`, `1152921504606846977`) and the source's JSON spacing.
 */
function unchangedStoredText(column: string, value: unknown, stored: string): string | undefined {
  const json = column === "content" ? stored.slice(MULTIMODAL_PREFIX.length) : stored;
  const read = parsedOrUndefined(json);
  if (read === undefined) return undefined;
  try {
    return pythonJson(read) === pythonJson(value) ? stored : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What an export gives for the stored text of a parsed column: content as
 * text unless it has the multimodal prefix, the JSON's value as `parse`
 * reads it (none: as if it were bad), and for bad JSON what a reader gives (`[]` for `tool_calls`, the
 * text for content).
 */
function exportedValueOf(
  column: string,
  text: string,
  parse: ((json: string) => unknown) | undefined,
): unknown {
  const fallback = column === "content" ? text : [];
  if (!parse || (column === "content" && !text.startsWith(MULTIMODAL_PREFIX))) return fallback;
  try {
    return parse(column === "content" ? text.slice(MULTIMODAL_PREFIX.length) : text);
  } catch {
    return fallback;
  }
}

/**
 * Whether the text an export carried for `content` or `tool_calls` under
 * `hermes_state_bytes` (the stored text, which writing the value again
 * would change) still reads as the record's value: when the value was
 * edited since (a redaction), the value is written, not the text.
 *
 * @param column `content` or `tool_calls`.
 * @param text The carried text.
 * @param value The record's value of the column.
 * @returns `true` when the text may be written.
 */
export function carriedTextReadsAs(column: string, text: string, value: unknown): boolean {
  const same = (read: unknown) => pythonJson(read) === pythonJson(value);
  try {
    // Nested too deep to carry as a value: the export gave what a reader of bad JSON gives.
    if (nestedDeeperThan(text, MAX_VALUE_DEPTH)) {
      return same(exportedValueOf(column, text, undefined));
    }
    // Read exactly (`export`), or with integers beyond 2^53 rounded (a record read in memory).
    return same(exportedValueOf(column, text, parseJsonExact)) ||
      same(exportedValueOf(column, text, parsePythonJson));
  } catch {
    return false;
  }
}

/** The columns whose stored text a copy writes again when their value is unchanged. */
const PARSED_COLUMNS = new Set(["content", "tool_calls"]);

/**
 * The value of one message column as the store keeps it: content as
 * {@linkcode contentImportValue} encodes it, `tool_calls` as Python's JSON
 * of its value, the other JSON columns as the JSON text the export carries
 * (a value that is not a string is encoded), the rest as
 * {@linkcode scalarValue}. For `content` and `tool_calls` of a message read
 * from another store (`copy`), the text that store held is written again
 * when the value was not changed since.
 *
 * @param column The column.
 * @param value The message's value.
 * @param field The field, for errors (`messages[3].token_count`).
 * @param message The message, for the stored text it may carry.
 * @returns What the column stores.
 * @throws {TypeError} For a number that is not finite.
 */
export function messageImportValue(
  column: string,
  value: unknown,
  field: string,
  message?: object,
): ImportValue {
  if (message !== undefined && PARSED_COLUMNS.has(column)) {
    const stored = storedTextOf(message, column);
    const kept = stored === undefined ? undefined : unchangedStoredText(column, value, stored);
    if (kept !== undefined) return kept;
  }
  if (column === "content") return contentImportValue(value, field);
  if (column === "tool_calls") return encodeJson(value);
  if (RAW_JSON_COLUMNS.has(column)) {
    if (typeof value === "string") return value === "" ? null : value;
    return encodeJson(value);
  }
  return scalarValue(field, value);
}

/** Counters a hand-written record may leave out: Python's rules (SPEC §5). */
function derivedCounters(messages: readonly Record<string, unknown>[]): Record<string, number> {
  let toolCalls = 0;
  for (const message of messages) {
    const calls = message.tool_calls;
    if (Array.isArray(calls)) toolCalls += calls.length;
    else if (calls !== null && calls !== undefined && calls !== "") toolCalls += 1;
  }
  return { message_count: messages.length, tool_call_count: toolCalls };
}

/**
 * The session columns an import writes and their values: every column of
 * the target (but `id`) the record carries, the parent as decided, and the
 * counters the record leaves out derived from its messages.
 *
 * @param record The checked record.
 * @param columns The target's `sessions` columns.
 * @param parent The parent to store (`null` when it is not present yet).
 * @returns The columns and their values, in the same order.
 * @throws {TypeError} For a number that is not finite.
 */
export function sessionImportValues(
  record: ImportRecord,
  columns: Iterable<string>,
  parent: string | null,
): { columns: string[]; values: ImportValue[] } {
  const derived = derivedCounters(record.messages);
  const out: { columns: string[]; values: ImportValue[] } = { columns: [], values: [] };
  for (const column of columns) {
    if (column === "id") continue;
    if (column === "parent_session_id") {
      out.columns.push(column);
      out.values.push(parent);
    } else if (column in record.row) {
      out.columns.push(column);
      out.values.push(scalarValue(column, record.row[column]));
    } else if (column in derived) {
      out.columns.push(column);
      out.values.push(derived[column]);
    }
  }
  return out;
}

/**
 * The original message ids, when every message carries a distinct positive
 * integer id (the engine then keeps them if no row uses one yet). An id
 * beyond 2^53 (a `bigint`, as an exact import reads it) counts only with
 * `exact`: an engine that cannot store it exactly gives new ids instead.
 *
 * @param messages The record's messages.
 * @param exact Whether ids beyond 2^53 (`bigint`) may be kept.
 * @returns The ids in order, or `undefined` when they cannot all be kept.
 */
export function originalMessageIds(
  messages: readonly Record<string, unknown>[],
): number[] | undefined;
export function originalMessageIds(
  messages: readonly Record<string, unknown>[],
  exact: true,
): (number | bigint)[] | undefined;
export function originalMessageIds(
  messages: readonly Record<string, unknown>[],
  exact = false,
): (number | bigint)[] | undefined {
  const seen = new Set<number | bigint>();
  for (const message of messages) {
    const id = message.id;
    const usable = typeof id === "number"
      ? Number.isSafeInteger(id) && id > 0
      : exact && typeof id === "bigint" && id > 0;
    if (!usable || seen.has(id as number | bigint)) return undefined;
    seen.add(id as number | bigint);
  }
  return [...seen];
}

/**
 * The order an engine writes a record's messages in, as indexes into it:
 * by original id when every message carries one
 * ({@linkcode originalMessageIds}), else the record's order. New ids follow
 * the write order, and Python replays a session by id: a record whose
 * messages get new ids (their own are taken) keeps the order of its
 * original ids even where the export's order (by timestamp) differs, as
 * after a clock stepped back.
 *
 * @param messages The record's messages.
 * @returns Their indexes, in write order.
 */
export function messageWriteOrder(messages: readonly Record<string, unknown>[]): number[] {
  const order = messages.map((_, index) => index);
  if (originalMessageIds(messages, true) === undefined) return order;
  return order.sort((a, b) => {
    const [x, y] = [messages[a].id as number | bigint, messages[b].id as number | bigint];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/**
 * The text a record's title is stored as, as the column's text affinity
 * stores it (`7` as `"7"`, `true` as `"1"`), for the check that no other
 * session holds it; `null` when it has none.
 *
 * @param record A checked record.
 * @returns The title's text, or `null`.
 */
export function storedTitle(record: ImportRecord): string | null {
  const title = record.row.title;
  if (title === null || title === undefined) return null;
  const value = scalarValue("title", title);
  return value === null ? null : String(value);
}

/**
 * The record with another title (one free in the target, when its own is taken).
 *
 * @param record The checked record.
 * @param title The title to store.
 * @returns A record that writes `title`; its messages are the same.
 */
export function withTitle(record: ImportRecord, title: string): ImportRecord {
  return { ...record, row: { ...record.row, title } };
}

/** The answer of an import that left an existing session as it was. */
export function skippedImport(id: string): ImportResult {
  return {
    outcome: "skipped",
    id,
    messages: 0,
    deferredParent: null,
    droppedColumns: [],
    relinked: false,
    renamedTo: null,
  };
}

/**
 * Checks the links given to `restoreParentLinks` before anything is read or
 * written (every engine calls this): an array of `{ id, parentId }` with
 * both ids strings. The drivers would otherwise bind a number as its own
 * text (a silent miss) or fail with an error naming neither the link nor
 * its value.
 *
 * @param links The links as given.
 * @throws {TypeError} When `links` is not an array, or a link is not an
 *   object with a string `id` and a string `parentId`, naming the link.
 *
 * @example
 * ```ts
 * import { checkParentLinks } from "./import_record.ts";
 * checkParentLinks([{ id: "child", parentId: "parent" }]);
 * ```
 */
export function checkParentLinks(links: unknown): void {
  if (!Array.isArray(links)) {
    throw new TypeError(
      `Cannot restore parent links: links must be an array of { id, parentId }: current value is ${
        quotedValue(links)
      }`,
    );
  }
  links.forEach((link: unknown, index) => {
    const { id, parentId } = (link ?? {}) as { id?: unknown; parentId?: unknown };
    if (typeof link !== "object" || typeof id !== "string" || typeof parentId !== "string") {
      throw new TypeError(
        `Cannot restore parent links: link ${index} must be { id, parentId } with both strings: ` +
          `current value is ${quotedValue(link)}`,
      );
    }
    // A session of its own parent leaves every listing (it is no root, and no root's child).
    if (id === parentId) {
      throw new TypeError(
        `Cannot restore parent links: link ${index} makes session ${
          quotedValue(id)
        } its own parent`,
      );
    }
  });
}
