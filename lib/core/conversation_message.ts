/**
 * A stored message as a turn of a conversation to replay, by the rules of
 * the Python Hermes, for every engine.
 *
 * @module
 */
import { decodeContent, isFalsyLikePython } from "./content.ts";
import { blobAsText } from "./blob_text.ts";
import { PYTHON_WHITESPACE, pythonStrip } from "./python_text.ts";
import type { ConversationMessage, JsonValue } from "./types.ts";

const WS = PYTHON_WHITESPACE;

/** Whether a text can hold any of the patterns below (a linear pre-check). */
const MAY_HOLD_MEMORY = /memory-context|\[system note:/iu;

/** A recalled-memory block the agent injected into a turn. */
const MEMORY_BLOCK = new RegExp(
  `<[${WS}]*memory-context[${WS}]*>[\\s\\S]*?</[${WS}]*memory-context[${WS}]*>`,
  "giu",
);
/** The system note that introduces recalled memory. */
const MEMORY_NOTE = new RegExp(
  `\\[System note:[${WS}]*The following is recalled memory context,[${WS}]*` +
    `NOT new user input\\.[${WS}]*Treat as (?:informational background data|` +
    `authoritative reference data[^\\]]*)\\.\\][${WS}]*`,
  "giu",
);
/** A stray opening or closing fence tag. */
const MEMORY_TAG = new RegExp(`</?[${WS}]*memory-context[${WS}]*>`, "giu");

/**
 * Removes leaked recalled-memory context from a turn (the blocks, the system
 * note, stray fence tags) and trims Python's whitespace, as the agent's
 * `sanitize_context(text).strip()` does.
 */
function withoutMemoryContext(text: string): string {
  if (!MAY_HOLD_MEMORY.test(text)) return pythonStrip(text);
  const cleaned = text
    .replace(MEMORY_BLOCK, "")
    .replace(MEMORY_NOTE, "")
    .replace(MEMORY_TAG, "");
  return pythonStrip(cleaned);
}

function parseOr(stored: unknown, fallback: JsonValue | null): JsonValue | null {
  // A BLOB is parsed as its UTF-8 text, as Python's json.loads reads bytes.
  const text = blobAsText(stored);
  if (typeof text !== "string") return fallback;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return fallback;
  }
}

/** The columns a conversation message takes as text, as they are stored. */
const TEXT_COLUMNS = [
  "role",
  "tool_call_id",
  "tool_name",
  "finish_reason",
  "reasoning",
  "reasoning_content",
] as const;

/** `row`, or a copy with each BLOB of {@linkcode TEXT_COLUMNS} read as text. */
function textColumns(row: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  if (!TEXT_COLUMNS.some((column) => row[column] instanceof Uint8Array)) return row;
  const copy = { ...row };
  for (const column of TEXT_COLUMNS) copy[column] = blobAsText(row[column]);
  return copy;
}

/**
 * One stored message in the OpenAI chat shape, as Python's
 * `get_messages_as_conversation` builds it (every engine reads its rows
 * through this): leaked memory context removed from user and assistant
 * text, empty fields left out, the reasoning fields on assistant turns only,
 * bad JSON read as `[]` (tool calls) or `null` (the others). A BLOB in a
 * column meant for text (Python's sqlite3 stores `bytes` so) is read as its
 * UTF-8 text (`blob_text.ts`), never as a `Uint8Array` nor lost.
 *
 * @param stored The message row's columns (`role`, `content`, `tool_calls`…).
 * @returns The conversation message.
 */
export function toConversationMessage(
  stored: Readonly<Record<string, unknown>>,
): ConversationMessage {
  const row = textColumns(stored);
  const role = row.role as string;
  let content = decodeContent(row.content);
  if ((role === "user" || role === "assistant") && typeof content === "string") {
    content = withoutMemoryContext(content);
  }
  const message: ConversationMessage = { role, content };
  if (!isFalsyLikePython(row.tool_call_id)) message.tool_call_id = row.tool_call_id as string;
  if (!isFalsyLikePython(row.tool_name)) message.tool_name = row.tool_name as string;
  if (!isFalsyLikePython(row.tool_calls)) {
    message.tool_calls = parseOr(row.tool_calls, []) as JsonValue;
  }
  if (role === "assistant") {
    if (!isFalsyLikePython(row.finish_reason)) message.finish_reason = row.finish_reason as string;
    if (!isFalsyLikePython(row.reasoning)) message.reasoning = row.reasoning as string;
    if (row.reasoning_content !== null && row.reasoning_content !== undefined) {
      message.reasoning_content = row.reasoning_content as string;
    }
    for (const key of ["reasoning_details", "codex_reasoning_items", "codex_message_items"]) {
      // Bad JSON keeps the key with `null`, as Python does.
      if (!isFalsyLikePython(row[key])) message[key] = parseOr(row[key], null);
    }
  }
  return message;
}
