/**
 * A session of an export written in pieces, as JSON Lines or Markdown: its
 * row's text, then its messages' a chunk at a time, then the end. Joined,
 * the pieces are byte for byte the text of the whole record (`jsonLine` of
 * `exactRecord`, `renderMarkdown`), but no piece holds more than one chunk
 * of messages.
 *
 * @module
 */
import { exactRecord } from "../core/exact_record.ts";
import type { MessageRow, SessionRow } from "../core/types.ts";
import { jsonText } from "./json_line.ts";
import { markdownHead, markdownMessage } from "./markdown.ts";

/** The texts of one session, in the order they are asked for: head, each chunk, tail. */
export interface SessionTexts {
  /** The text before the messages. */
  head(session: SessionRow): string;
  /** The text of the session's next messages. */
  messages(messages: readonly MessageRow[]): string;
  /** The text after the last message. */
  tail(): string;
}

/** The key a JSON Lines record carries its messages under. */
const MESSAGES_KEY = '"messages":[]';

/**
 * The JSON Lines record of a session in pieces: what `jsonLine(exactRecord(record))`
 * writes (`hermes-state export`'s line: integers inside multimodal content
 * and `tool_calls` exact, beyond 2^53 too).
 *
 * @returns The session's texts.
 *
 * @example
 * ```ts
 * import { jsonLineTexts } from "./export_texts.ts";
 * const texts = jsonLineTexts();
 * const line = texts.head({ id: "s" } as never) + texts.messages([]) + texts.tail();
 * console.assert(line === '{"id":"s","messages":[]}\n');
 * ```
 */
export function jsonLineTexts(): SessionTexts {
  let after = "";
  let written = false;
  return {
    head(session) {
      written = false;
      // The record's text with no message, cut where the messages go: the row's own
      // columns keep their order, and `messages` comes where the record puts it.
      const text = jsonText({ ...session, messages: [] });
      const at = text.lastIndexOf(MESSAGES_KEY) + MESSAGES_KEY.length - 1;
      after = text.slice(at);
      return text.slice(0, at);
    },
    messages(messages) {
      if (messages.length === 0) return "";
      const exact = exactRecord({ messages } as never).messages;
      const text = exact.map((message) => jsonText(message)).join(",");
      const comma = written ? "," : "";
      written = true;
      return comma + text;
    },
    tail() {
      return `${after}\n`;
    },
  };
}

/**
 * The Markdown transcript of a session in pieces: what `renderMarkdown`
 * writes.
 *
 * @returns The session's texts.
 */
export function markdownTexts(): SessionTexts {
  return {
    head: markdownHead,
    messages(messages) {
      return messages.map((message) => `\n\n${markdownMessage(message)}`).join("");
    },
    tail() {
      return "\n";
    },
  };
}
