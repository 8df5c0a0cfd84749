/**
 * Message history: append, replace, clear, read, count.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { ConversationMessage, MessageRow, NewMessage } from "./types.ts";
import { todo } from "./_todo.ts";

export function appendMessage(_store: Store, _sessionId: string, _message: NewMessage): number {
  return todo("appendMessage");
}

export function appendMessages(
  _store: Store,
  _sessionId: string,
  _messages: readonly NewMessage[],
): number[] {
  return todo("appendMessages");
}

export function replaceMessages(
  _store: Store,
  _sessionId: string,
  _messages: readonly ConversationMessage[],
): void {
  todo("replaceMessages");
}

export function clearMessages(_store: Store, _sessionId: string): void {
  todo("clearMessages");
}

export function getMessages(_store: Store, _sessionId: string): MessageRow[] {
  return todo("getMessages");
}

export function messageCount(_store: Store, _sessionId?: string): number {
  return todo("messageCount");
}
