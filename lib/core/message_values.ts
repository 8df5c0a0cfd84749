/**
 * The stored values of a new message, for every engine: one table of the
 * `messages` columns a write fills from a message, each with the field it is
 * read from and how that field is checked and encoded. An engine takes its
 * INSERT column list and its parameters from the same table, so the two can
 * never disagree; the session id and the timestamp are the engine's to add.
 *
 * @module
 */
import { encodeContent, encodeJson } from "./content.ts";
import { describeValue, quotedValue } from "./shown_value.ts";
import type { ConversationMessage, NewMessage } from "./types.ts";

/** A value a message column stores: text, a number, or NULL. */
export type StoredValue = string | number | bigint | null;

/** How one column reads its field: checked (the error names `field`) and encoded. */
type ReadField = (value: unknown, field: string, action: string) => StoredValue;

/** One `messages` column a write fills from a message. */
export interface MessageColumn {
  /** The column, which is also the field of a conversation message (`tool_call_id`). */
  readonly name: string;
  /** The field of an appended message (`toolCallId`). */
  readonly field: keyof NewMessage;
  /** Checks and encodes the field's value. */
  readonly read: ReadField;
  /** In a conversation (`replaceMessages`), only an assistant turn keeps it, as in Python. */
  readonly assistantOnly: boolean;
}

/**
 * A text column value: a string, else NULL; a number as Python would bind
 * it, the same on every runtime: a whole number as an int's text (`5`;
 * node:sqlite binds every number as a float, which the column stores as
 * `5.0`), any other as a float, which the column turns into text itself.
 * Used for every free-text value a write stores (message fields, a
 * session's model, prompt and end reason, a meta value).
 *
 * @param value The value given.
 * @param field Its name, for the error.
 * @param action What the caller does, for the error ("end session").
 * @returns What the column stores.
 * @throws {TypeError} When it is neither absent, `null`, a string, a
 *   bigint nor a finite number, naming the value.
 *
 * @example
 * ```ts
 * import { textValue } from "./message_values.ts";
 * console.assert(textValue(5, "model", "create session") === "5");
 * ```
 */
export function textValue(value: unknown, field: string, action: string): StoredValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  if (typeof value === "bigint") return String(value);
  if (typeof value === "number" && Number.isFinite(value)) {
    if (!Number.isInteger(value)) return value;
    // Every digit, as Python writes an int (String() writes 1e21 on).
    return Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString();
  }
  throw new TypeError(
    `Cannot ${action}: ${field} must be a string: current value is ${describeValue(value)}`,
  );
}

/** An integer column value: a finite number or a bigint of 64 bits (SQLite's), else NULL. */
function integerValue(value: unknown, field: string, action: string): StoredValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "bigint" && BigInt.asIntN(64, value) === value) return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw new TypeError(
    `Cannot ${action}: ${field} must be a number: current value is ${quotedValue(value)}`,
  );
}

/**
 * Runs the JSON encoding of one field, naming the field when its value
 * cannot be written (it holds a circular reference), where the encoder's
 * own message named no field.
 */
function encodedAsJson(encode: () => StoredValue, field: string, action: string): StoredValue {
  try {
    return encode();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    const reason = error.message.replace(/^Cannot serialize JSON: /, "");
    throw new TypeError(`Cannot ${action}: ${field} cannot be written as JSON: ${reason}`, {
      cause: error,
    });
  }
}

/** The content column: text as it is, multimodal parts behind the JSON prefix. */
function contentValue(value: unknown, field: string, action: string): StoredValue {
  return encodedAsJson(() => encodeContent(value as NewMessage["content"]), field, action);
}

/** A JSON column: Python's JSON text, NULL when empty. */
function jsonValue(value: unknown, field: string, action: string): StoredValue {
  return encodedAsJson(() => encodeJson(value as NewMessage["toolCalls"]), field, action);
}

/** The columns after `role`, in the order of the file's `messages` table (`timestamp` left out). */
export const MESSAGE_VALUE_COLUMNS: readonly MessageColumn[] = [
  { name: "content", field: "content", read: contentValue, assistantOnly: false },
  { name: "tool_call_id", field: "toolCallId", read: textValue, assistantOnly: false },
  { name: "tool_calls", field: "toolCalls", read: jsonValue, assistantOnly: false },
  { name: "tool_name", field: "toolName", read: textValue, assistantOnly: false },
  { name: "token_count", field: "tokenCount", read: integerValue, assistantOnly: false },
  { name: "finish_reason", field: "finishReason", read: textValue, assistantOnly: false },
  { name: "reasoning", field: "reasoning", read: textValue, assistantOnly: true },
  { name: "reasoning_content", field: "reasoningContent", read: textValue, assistantOnly: true },
  { name: "reasoning_details", field: "reasoningDetails", read: jsonValue, assistantOnly: true },
  {
    name: "codex_reasoning_items",
    field: "codexReasoningItems",
    read: jsonValue,
    assistantOnly: true,
  },
  { name: "codex_message_items", field: "codexMessageItems", read: jsonValue, assistantOnly: true },
];

/** The column names of {@linkcode messageValues}: `role`, then {@linkcode MESSAGE_VALUE_COLUMNS}. */
export const MESSAGE_VALUE_NAMES: readonly string[] = [
  "role",
  ...MESSAGE_VALUE_COLUMNS.map((column) => column.name),
];

function checkObject(message: unknown, action: string): void {
  if (message === null || typeof message !== "object") {
    throw new TypeError(
      `Cannot ${action}: a message must be an object ({ role, content, … }): current value is ${
        describeValue(message)
      }`,
    );
  }
}

/**
 * The stored values of an appended message, in {@linkcode MESSAGE_VALUE_NAMES} order.
 *
 * @param message The new message (camelCase fields).
 * @param action What the caller does, for errors ("append message").
 * @returns `role`, then one value per column of {@linkcode MESSAGE_VALUE_COLUMNS}.
 * @throws {TypeError} When the message is not an object, its role not a
 *   string, or a field of the wrong type (the error names it).
 */
export function messageValues(message: NewMessage, action: string): StoredValue[] {
  checkObject(message, action);
  if (typeof message.role !== "string") {
    throw new TypeError(
      `Cannot ${action}: role must be a string: current value is ${describeValue(message.role)}`,
    );
  }
  const values = new Array<StoredValue>(MESSAGE_VALUE_COLUMNS.length + 1);
  values[0] = message.role;
  for (let i = 0; i < MESSAGE_VALUE_COLUMNS.length; i++) {
    const column = MESSAGE_VALUE_COLUMNS[i];
    const value = message[column.field];
    if (value === undefined) checkNotMisnamed(message, column.name, column.field, action);
    values[i + 1] = column.read(value, column.field, action);
  }
  return values;
}

/**
 * Refuses a message that holds a column's value under the other spelling
 * (`tool_calls` given to `appendMessage`, which reads `toolCalls`; or the
 * reverse to `replaceMessages`): read by its own spelling only, the value
 * would be dropped without a word.
 */
function checkNotMisnamed(message: object, misnamed: string, field: string, action: string): void {
  if (misnamed === field) return;
  const value = (message as Record<string, unknown>)[misnamed];
  if (value === undefined || value === null) return;
  throw new TypeError(
    `Cannot ${action}: ${misnamed} is not read here, give it as ${field}: current value is ` +
      describeValue(value),
  );
}

/**
 * The stored values of one turn of a conversation (`replaceMessages`), in
 * {@linkcode MESSAGE_VALUE_NAMES} order: a missing role is `unknown`, and the
 * reasoning columns are kept for an assistant turn only, as in Python.
 *
 * @param message The turn (snake_case fields, as the columns are named).
 * @param action What the caller does, for errors ("replace messages").
 * @returns `role`, then one value per column of {@linkcode MESSAGE_VALUE_COLUMNS}.
 * @throws {TypeError} When the turn is not an object or a field has the wrong type.
 */
export function conversationValues(message: ConversationMessage, action: string): StoredValue[] {
  checkObject(message, action);
  const role = textValue(message.role ?? "unknown", "role", action);
  const assistant = role === "assistant";
  const values: StoredValue[] = [role];
  for (const column of MESSAGE_VALUE_COLUMNS) {
    const value = message[column.name];
    if (value === undefined) checkNotMisnamed(message, column.field, column.name, action);
    values.push(
      column.assistantOnly && !assistant ? null : column.read(value, column.name, action),
    );
  }
  return values;
}

/**
 * What one message adds to `tool_call_count`: an array's length, 1 for any
 * other value, 0 for none (as Python counts them, whatever the role).
 *
 * @param toolCalls The message's tool calls.
 * @returns The count.
 */
export function toolCallsAdded(toolCalls: unknown): number {
  if (toolCalls === undefined || toolCalls === null) return 0;
  return Array.isArray(toolCalls) ? toolCalls.length : 1;
}
