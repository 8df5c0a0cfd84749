/**
 * A stored message as a turn of a conversation to replay, by the rules of
 * the Python Hermes, for every engine.
 *
 * @module
 */
import { decodeContent, isFalsyLikePython } from "./content.ts";
import { blobAsText } from "./blob_text.ts";
import { parsePythonJson } from "./python_json_parse.ts";
import { PYTHON_WHITESPACE, pythonStrip } from "./python_text.ts";
import type { ConversationMessage, JsonValue } from "./types.ts";

const WS = PYTHON_WHITESPACE;

/** Whether a text can hold any of the patterns below (a linear pre-check). */
const MAY_HOLD_MEMORY = /memory-context|\[system note:/iu;

/**
 * The fences of a recalled-memory block the agent injected into a turn,
 * Python's `<memory-context>[\s\S]*?</memory-context>` (whitespace allowed
 * inside the tags), matched by {@linkcode withoutMemoryBlocks}.
 */
const MEMORY_OPEN = new RegExp(`<[${WS}]*memory-context[${WS}]*>`, "giu");
const MEMORY_CLOSE = new RegExp(`</[${WS}]*memory-context[${WS}]*>`, "giu");
/**
 * The system note that introduces recalled memory, up to the data it
 * announces (group 1 for background data); the rest of Python's pattern,
 * `.]` (for reference data: any text without `]`, then `.]`) and the
 * whitespace after, is matched by {@linkcode withoutMemoryNotes}.
 */
const MEMORY_NOTE_HEAD = new RegExp(
  `\\[System note:[${WS}]*The following is recalled memory context,[${WS}]*` +
    `NOT new user input\\.[${WS}]*Treat as (?:(informational background data)|` +
    `authoritative reference data)`,
  "giu",
);
/** The whitespace after a note, from where it is put. */
const WHITESPACE_RUN = new RegExp(`[${WS}]*`, "uy");
/** A stray opening or closing fence tag. */
const MEMORY_TAG = new RegExp(`</?[${WS}]*memory-context[${WS}]*>`, "giu");

/**
 * `text` without its recalled-memory blocks, each an opening fence up to the
 * first closing fence after it: what Python's `re.sub` of the block pattern
 * leaves, found in one pass. The pattern itself (`[\s\S]*?` between the
 * fences) scans to the end of the text from every opening fence that no
 * closing one follows, which took seconds on a message of many opening
 * tags; once one has no closing fence after it, no later one has either.
 */
function withoutMemoryBlocks(text: string): string {
  let kept = "";
  let at = 0;
  for (;;) {
    MEMORY_OPEN.lastIndex = at;
    const open = MEMORY_OPEN.exec(text);
    if (open === null) break;
    MEMORY_CLOSE.lastIndex = open.index + open[0].length;
    const close = MEMORY_CLOSE.exec(text);
    if (close === null) break;
    kept += text.slice(at, open.index);
    at = close.index + close[0].length;
  }
  return at === 0 ? text : kept + text.slice(at);
}

/**
 * `text` without the system notes that introduce recalled memory: what
 * Python's `re.sub` of the note pattern leaves, found in one pass. The
 * pattern (`reference data[^\]]*\.\]`) scans from every note of reference
 * data to the next `]`, so many such notes before it took seconds; here
 * that `]` is looked for once for them all.
 */
function withoutMemoryNotes(text: string): string {
  let kept = "";
  let at = 0;
  let from = 0;
  // The first `]` at or after the end of the last note of reference data: -1 when none.
  let bracket = -2;
  for (;;) {
    MEMORY_NOTE_HEAD.lastIndex = from;
    const head = MEMORY_NOTE_HEAD.exec(text);
    if (head === null) break;
    const after = head.index + head[0].length;
    let end = -1;
    if (head[1] !== undefined) {
      if (text.startsWith(".]", after)) end = after + 2;
    } else {
      if (bracket !== -1 && bracket < after) bracket = text.indexOf("]", after);
      if (bracket > after && text[bracket - 1] === ".") end = bracket + 1;
    }
    if (end === -1) {
      from = head.index + 1;
      continue;
    }
    WHITESPACE_RUN.lastIndex = end;
    WHITESPACE_RUN.exec(text);
    kept += text.slice(at, head.index);
    at = from = WHITESPACE_RUN.lastIndex;
  }
  return at === 0 ? text : kept + text.slice(at);
}

/**
 * Removes leaked recalled-memory context from a turn (the blocks, the system
 * note, stray fence tags) and trims Python's whitespace, as the agent's
 * `sanitize_context(text).strip()` does.
 */
function withoutMemoryContext(text: string): string {
  if (!MAY_HOLD_MEMORY.test(text)) return pythonStrip(text);
  const cleaned = withoutMemoryNotes(withoutMemoryBlocks(text)).replace(MEMORY_TAG, "");
  return pythonStrip(cleaned);
}

function parseOr(stored: unknown, fallback: JsonValue | null): JsonValue | null {
  // A BLOB is parsed as its UTF-8 text, as Python's json.loads reads bytes.
  const text = blobAsText(stored);
  if (typeof text !== "string") return fallback;
  try {
    return parsePythonJson(text) as JsonValue;
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
