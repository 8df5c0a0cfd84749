/**
 * Messages in the OpenAI chat shape, for replay.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ConversationMessage } from "./types.ts";
import { todo } from "./_todo.ts";

/** Options of `getMessagesAsConversation`. */
export interface ConversationOptions {
  /** Prepend the transcripts of the ancestors (compression chain). @default {false} */
  includeAncestors?: boolean;
}

export function getMessagesAsConversation(
  _store: Store,
  _sessionId: string,
  _options: ConversationOptions,
): ConversationMessage[] {
  return todo("getMessagesAsConversation");
}
