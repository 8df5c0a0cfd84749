/**
 * Messages in the OpenAI chat shape, for replay.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ConversationMessage } from "../core/types.ts";
import { toConversationMessage } from "../core/conversation_message.ts";
import { isReplayedPrompt } from "../core/replayed_prompt.ts";
import { ACTIVE_ONLY } from "./messages.ts";
import { checkKeyText, type ConversationOptions } from "../core/session_options.ts";

/** How far up the parent chain `includeAncestors` walks. */
const MAX_LINEAGE = 100;

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

/** Implements `SessionDB.getMessagesAsConversation`: the OpenAI chat shape, ancestors optional. */
export function getMessagesAsConversation(
  store: Store,
  sessionId: string,
  options: ConversationOptions = {},
): ConversationMessage[] {
  checkKeyText("read conversation", "sessionId", sessionId);
  const includeAncestors = options?.includeAncestors ?? false;
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
