/**
 * Where a session's messages end, read from the end through the store
 * seam: what a follower of a long session starts from without reading it
 * whole.
 *
 * @module
 */
import type { SessionStore } from "./session_store.ts";
import type { MessagesOptions } from "./session_options.ts";
import type { MessageRow } from "./types.ts";
import { newestMessageId } from "./message_row.ts";

/** The end of a session's messages: {@linkcode newestOf}. */
export interface NewestMessage {
  /** The last message in transcript order (`timestamp, id`); `undefined` for none. */
  readonly last: MessageRow | undefined;
  /**
   * The greatest id among the messages (0 for none), as `newestMessageId`
   * gives it of all of them: the last one's, or a greater one written later
   * with an earlier timestamp (a clock stepped back).
   */
  readonly newest: number;
  /** The timestamp of the message of `newest` (`null` for none). */
  readonly newestAt: number | null;
}

/**
 * The end of session `sessionId`'s messages as `getMessages(sessionId,
 * options)` gives them, in two small reads: the last one, then any with a
 * greater id.
 *
 * @param store The store.
 * @param sessionId The session.
 * @param options Which messages count (`includeInactive`, `excludeHidden`).
 * @returns The last message and the newest id.
 */
export async function newestOf(
  store: SessionStore,
  sessionId: string,
  options: MessagesOptions = {},
): Promise<NewestMessage> {
  const [last] = await store.getMessages(sessionId, { ...options, last: 1 });
  if (last === undefined) return { last, newest: 0, newestAt: null };
  const later = await store.getMessages(sessionId, { ...options, afterId: last.id });
  const newest = newestMessageId([last, ...later]);
  const row = [last, ...later].find((message) => message.id === newest);
  // A number, as a page sends it back (a file's timestamp may hold text).
  const newestAt = typeof row?.timestamp === "number" ? row.timestamp : null;
  return { last, newest, newestAt };
}
