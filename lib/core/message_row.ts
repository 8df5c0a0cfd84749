/**
 * A stored message row as `getMessages` returns it, for every engine.
 *
 * @module
 */
import { decodeContent, MULTIMODAL_PREFIX } from "./content.ts";
import { keepStoredText } from "./stored_text.ts";
import { withBlobsAsText } from "./blob_text.ts";
import { parsePythonJson } from "./python_json_parse.ts";
import type { JsonValue, MessageRow } from "./types.ts";

/**
 * `tool_calls` as Python's `get_messages` returns it: parsed when non-empty,
 * `[]` when the JSON is bad, anything falsy as it is.
 */
function parseToolCalls(stored: unknown): JsonValue | null {
  if (stored === null || stored === undefined || stored === "" || stored === 0) {
    return (stored ?? null) as JsonValue | null;
  }
  if (typeof stored !== "string") return [];
  try {
    return parsePythonJson(stored) as JsonValue;
  } catch {
    return [];
  }
}

/**
 * Turns a raw `messages` row into a {@linkcode MessageRow}: content decoded,
 * `tool_calls` parsed (bad JSON → `[]`). The other JSON columns stay JSON
 * text, as Python returns them. Never throws on bad data. The stored text
 * of a column parsed is kept on the message ({@linkcode keepStoredText}),
 * for a copy to write the same bytes. A BLOB in a column meant for text
 * (Python's sqlite3 stores `bytes` so) is read as its UTF-8 text
 * (`blob_text.ts`); an export reads BLOBs exactly, before this.
 *
 * Every engine reads its message rows through this.
 *
 * @param row A `SELECT *` row of `messages`.
 * @returns The message, keeping every column (including unknown ones).
 */
export function messageFromRow(row: Record<string, unknown>): MessageRow {
  // A BLOB's content is text, never parts: decoded before the row's BLOBs are read as text.
  const { content } = row;
  const message = withBlobsAsText(row) as MessageRow;
  const { tool_calls: toolCalls } = row;
  if ("content" in row) {
    message.content = decodeContent(content);
    if (
      typeof content === "string" && content.startsWith(MULTIMODAL_PREFIX) &&
      message.content !== content
    ) {
      keepStoredText(message, "content", content);
    }
  }
  if ("tool_calls" in row) {
    message.tool_calls = parseToolCalls(toolCalls);
    if (typeof toolCalls === "string" && toolCalls !== "") {
      keepStoredText(message, "tool_calls", toolCalls);
    }
  }
  return message;
}

/**
 * Whether a transcript shows `message`. A newer Hermes marks the
 * scaffolding it never shows the person (the placeholder of an interrupted
 * reply, a muted diagnostic) `display_kind = 'hidden'`; its history and
 * previews skip those rows, and so do `show` and the session browser
 * (`show --all` marks them `[hidden]`).
 *
 * @param message A stored message.
 * @returns False for a hidden row.
 */
export function isShownInTranscript(message: MessageRow): boolean {
  return message.display_kind !== "hidden";
}

/**
 * The marks a transcript puts on a row that a newer Hermes neither replays
 * nor shows: `[compacted]` (folded into a summary), `[rewound]` (taken back),
 * `[hidden]` (scaffolding, see {@linkcode isShownInTranscript}). `[]` for
 * every other row, and for every row of an older file.
 *
 * @param message A stored message.
 * @returns The marks, in that order.
 */
export function transcriptMarks(message: MessageRow): string[] {
  const marks: string[] = [];
  if (message.active === 0) marks.push(message.compacted ? "[compacted]" : "[rewound]");
  if (!isShownInTranscript(message)) marks.push("[hidden]");
  return marks;
}

/**
 * The newest (greatest) message id of a list: what a reader that follows a
 * session asks for rows after.
 *
 * @param messages Stored messages, in any order.
 * @param floor What to return when none is newer (0: none read yet).
 * @returns The greatest id, at least `floor`.
 */
export function newestMessageId(messages: readonly MessageRow[], floor = 0): number {
  let newest = floor;
  for (const message of messages) if (message.id > newest) newest = message.id;
  return newest;
}
