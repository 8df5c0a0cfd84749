/**
 * An export record as a transcript (Markdown, HTML) shows it: what the
 * record carries as a BLOB's bytes (`hermes_state_bytes`, the column itself
 * `null`) read as its UTF-8 text, and BLOB tool calls parsed.
 *
 * @module
 */
import type { MessageRow, SessionExport } from "../core/types.ts";
import { decodeJson } from "../core/content.ts";
import { recordWithBlobText } from "../core/blob_text.ts";

/**
 * A message of an export as its transcript shows it.
 *
 * @param exported A message of an `exportSession` record.
 * @returns `exported` when it carries no BLOB, else a copy with their text.
 */
export function shownMessage(exported: MessageRow): MessageRow {
  const message = recordWithBlobText(exported);
  if (typeof message.tool_calls === "string" && exported.tool_calls === null) {
    message.tool_calls = decodeJson(message.tool_calls, []);
  }
  return message;
}

/**
 * A session of an export, with its messages, as its transcript shows it.
 *
 * @param exported An `exportSession` record.
 * @returns The record with each BLOB it carries read as text (a copy when it carries any).
 *
 * @example
 * ```ts
 * import { shownExport } from "./shown_export.ts";
 * const record = {
 *   id: "s", title: null, messages: [], hermes_state_bytes: { title: { blob: "aGk=" } },
 * };
 * console.assert(shownExport(record as never).title === "hi");
 * ```
 */
export function shownExport(exported: SessionExport): SessionExport {
  const session = recordWithBlobText(exported);
  const messages = exported.messages.map(shownMessage);
  return messages.every((message, i) => message === exported.messages[i]) && session === exported
    ? exported
    : { ...session, messages };
}
