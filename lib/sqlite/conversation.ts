/**
 * Messages in the OpenAI chat shape, for replay.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ConversationMessage, JsonValue } from "../core/types.ts";
import { decodeContent, isFalsyLikePython } from "../core/content.ts";
import { PYTHON_WHITESPACE, pythonStrip } from "../core/python_text.ts";
import { isReplayedPrompt } from "../core/replayed_prompt.ts";
import { ACTIVE_ONLY } from "./messages.ts";
import type { ConversationOptions } from "../core/session_options.ts";

/** How far up the parent chain `includeAncestors` walks. */
const MAX_LINEAGE = 100;

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
  if (typeof stored !== "string") return fallback;
  try {
    return JSON.parse(stored) as JsonValue;
  } catch {
    return fallback;
  }
}

/** The session's ancestors and itself, root first (any kind of parent; cycle safe). */
function lineageRootToTip(store: Store, sessionId: string): string[] {
  if (!sessionId) return [sessionId];
  const parentOf = store.statement("SELECT parent_session_id FROM sessions WHERE id = ?");
  const chain: string[] = [];
  const seen = new Set<string>();
  let current: unknown = sessionId;
  for (let step = 0; step < MAX_LINEAGE; step++) {
    if (typeof current !== "string" || current === "" || seen.has(current)) break;
    seen.add(current);
    chain.push(current);
    const row = parentOf.get(current);
    if (row === undefined) break;
    current = row.parent_session_id;
  }
  return chain.reverse();
}

function toConversationMessage(row: Record<string, unknown>): ConversationMessage {
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

/** Implements `SessionDB.getMessagesAsConversation`: the OpenAI chat shape, ancestors optional. */
export function getMessagesAsConversation(
  store: Store,
  sessionId: string,
  options: ConversationOptions = {},
): ConversationMessage[] {
  const includeAncestors = options.includeAncestors ?? false;
  const ids = includeAncestors ? lineageRootToTip(store, sessionId) : [sessionId];
  const placeholders = ids.map(() => "?").join(", ");
  const live = store.columns("messages").has("active") ? ACTIVE_ONLY : "";
  const rows = store
    .statement(
      `SELECT role, content, tool_call_id, tool_calls, tool_name, finish_reason, reasoning,
        reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items
        FROM messages WHERE session_id IN (${placeholders})${live} ORDER BY timestamp, id`,
    )
    .all(...ids);
  const conversation: ConversationMessage[] = [];
  for (const row of rows) {
    const message = toConversationMessage(row);
    if (includeAncestors && isReplayedPrompt(conversation, message)) continue;
    conversation.push(message);
  }
  return conversation;
}
