/**
 * An export record made ready for exact JSON: the parsed columns of its
 * messages (multimodal `content`, `tool_calls`) parsed again from the text
 * the store held, with integers beyond 2^53 as `bigint`, when that text
 * holds a number long enough to have been rounded.
 *
 * @module
 */
import { MULTIMODAL_PREFIX } from "./content.ts";
import { mayHoldLongInteger, parseJsonExact } from "./exact_json.ts";
import { storedTextOf, withStoredTextOf } from "./stored_text.ts";
import type { MessageRow, SessionExport } from "./types.ts";

/** The columns a read parses, whose stored text a message keeps. */
const PARSED = ["content", "tool_calls"] as const;

/** The message with its parsed columns read exactly, or itself when nothing could be rounded. */
function exactMessage(message: MessageRow): MessageRow {
  let exact: Record<string, unknown> | undefined;
  for (const column of PARSED) {
    const stored = storedTextOf(message, column);
    if (stored === undefined || !mayHoldLongInteger(stored)) continue;
    const json = column === "content" ? stored.slice(MULTIMODAL_PREFIX.length) : stored;
    try {
      (exact ??= withStoredTextOf(message, { ...message }))[column] = parseJsonExact(json);
    } catch {
      // Bad JSON: the read left it as it was, and so does this.
    }
  }
  return (exact ?? message) as MessageRow;
}

/**
 * The record with every integer inside its messages' multimodal content
 * and `tool_calls` exact (a `bigint` beyond 2^53), for a JSON Lines export
 * that writes every digit. A record read from no store (without the stored
 * text) is given back as it is.
 *
 * @param record A record of `exportSession` / `iterateExport`.
 * @returns The record, or a copy with those messages replaced.
 */
export function exactRecord(record: SessionExport): SessionExport {
  const messages = record.messages.map(exactMessage);
  return messages.some((message, i) => message !== record.messages[i])
    ? { ...record, messages }
    : record;
}
