/**
 * A session as a Markdown transcript (`export --format md`): a title, a list
 * of details, then one section per message; tool calls and tool results in
 * code fences; reasoning folded in `<details>`. Times are UTC, so the file
 * reads the same everywhere. Control characters and bidirectional
 * overrides are made visible, as `show` shows them.
 *
 * @module
 */
import type { MessageRow, SessionExport, SessionRow } from "../core/types.ts";
import { formatCost, formatCount, formatUtc } from "./format.ts";
import { toolCallViews, visibleControls, visibleInline } from "./transcript.ts";
import { contentText } from "../core/content.ts";
import { transcriptMarks } from "../core/message_row.ts";
import { shownExport, shownMessage } from "./shown_export.ts";

/**
 * A UTC date and time, `YYYY-MM-DD HH:MM:SS UTC`; `?` for a value that names
 * no time (a file may hold text in a time column: the export stopped with
 * "Invalid time value").
 *
 * @param seconds Unix seconds.
 * @returns The text.
 */
function utc(seconds: number): string {
  return formatUtc(seconds) ?? "?";
}

/** The longest run of backticks in `text` (0 when it has none): a code delimiter must be longer. */
function longestBacktickRun(text: string): number {
  return Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
}

/**
 * `text` as an inline code span that no backtick inside it can end, its
 * control characters, line breaks and bidi overrides shown as marks
 * (`visibleInline`): an id or a tool's name as stored, which another writer
 * may have filled with anything.
 *
 * @param text The text.
 * @returns The code span.
 *
 * @example
 * ```ts
 * import { inlineCode } from "./markdown.ts";
 * const tick = "\x60";
 * console.assert(inlineCode("a") === `${tick}a${tick}`);
 * console.assert(inlineCode(`a${tick}b`) === `${tick}${tick}a${tick}b${tick}${tick}`);
 * console.assert(inlineCode("x\u202Ey") === `${tick}x⟨U+202E⟩y${tick}`);
 * ```
 */
export function inlineCode(text: string): string {
  const shown = visibleInline(text);
  const ticks = "`".repeat(longestBacktickRun(shown) + 1);
  // A span that starts or ends with a backtick, or with a space at both ends (one of which
  // Markdown takes away), is padded with a space inside each end.
  const pad = /^`|`$/.test(shown) || /^ [^]* $/.test(shown) ? " " : "";
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

/**
 * A code fence that no backtick run inside `text` can close.
 *
 * @param text The fenced text.
 * @param info The info string (language).
 * @returns The fenced block.
 *
 * @example
 * ```ts
 * import { fenced } from "./markdown.ts";
 * const tick = "\x60";
 * console.assert(fenced(`a ${tick.repeat(3)} b`).startsWith(tick.repeat(4)));
 * ```
 */
export function fenced(text: string, info = ""): string {
  const fence = "`".repeat(Math.max(2, longestBacktickRun(text)) + 1);
  return `${fence}${info}\n${text}\n${fence}`;
}

function messageSection(message: MessageRow): string {
  const head = [visibleControls(message.role)];
  if (message.tool_name) head.push(inlineCode(message.tool_name));
  head.push(utc(message.timestamp), ...transcriptMarks(message));
  const parts = [`## ${head.join(" · ")}`];
  const reasoning = [message.reasoning, message.reasoning_content]
    .filter((r): r is string => typeof r === "string" && r.trim() !== "").join("\n\n");
  if (reasoning !== "") {
    parts.push(
      `<details><summary>Reasoning</summary>\n\n${
        fenced(visibleControls(reasoning))
      }\n\n</details>`,
    );
  }
  const text = visibleControls(contentText(message.content, { parts: "transcript" })).trimEnd();
  if (text !== "") parts.push(message.role === "tool" ? fenced(text) : text);
  for (const call of toolCallViews(message.tool_calls)) {
    parts.push(
      `**Tool call** ${inlineCode(call.name)}\n\n${fenced(visibleControls(call.args), "json")}`,
    );
  }
  return parts.join("\n\n");
}

/**
 * The title and details of an exported session's Markdown, before its
 * messages (a BLOB in a column meant for text shown as its UTF-8 text).
 *
 * @param exported The session's row (its messages are not read).
 * @returns The Markdown, without a newline at the end.
 */
export function markdownHead(exported: SessionExport | SessionRow): string {
  // The BLOBs an export carries as bytes, shown as their text.
  const session = shownExport({ ...exported, messages: [] });
  const details = [
    `- **ID:** ${inlineCode(session.id)}`,
    `- **Source:** ${visibleControls(session.source)}`,
  ];
  if (session.model) details.push(`- **Model:** ${visibleControls(session.model)}`);
  details.push(`- **Started:** ${utc(session.started_at)}`);
  if (session.ended_at !== null) {
    details.push(
      `- **Ended:** ${utc(session.ended_at)}${
        session.end_reason ? ` (${visibleControls(session.end_reason)})` : ""
      }`,
    );
  }
  if (session.parent_session_id) {
    details.push(`- **Parent:** ${inlineCode(session.parent_session_id)}`);
  }
  details.push(
    `- **Messages:** ${formatCount(session.message_count)} · **Tool calls:** ${
      formatCount(session.tool_call_count)
    }`,
  );
  details.push(
    `- **Tokens:** ${formatCount(session.input_tokens)} in · ${
      formatCount(session.output_tokens)
    } out`,
  );
  if (session.estimated_cost_usd !== null || session.actual_cost_usd !== null) {
    const cost = [`${formatCost(session.estimated_cost_usd)} estimated`];
    if (session.actual_cost_usd !== null) {
      cost.push(`${formatCost(session.actual_cost_usd)} actual`);
    }
    details.push(`- **Cost:** ${cost.join(" · ")}`);
  }
  return [`# ${visibleControls(session.title || session.id)}`, details.join("\n")].join("\n\n");
}

/**
 * One message of an exported session as its Markdown section (a BLOB shown
 * as its UTF-8 text), without the blank line that goes before it.
 *
 * @param message A message of an `exportSession` record.
 * @returns The Markdown.
 */
export function markdownMessage(message: MessageRow): string {
  return messageSection(shownMessage(message));
}

/**
 * Renders one exported session as Markdown (a BLOB in a column meant for
 * text, which the record carries as bytes, shown as its UTF-8 text).
 *
 * @param exported The session with its messages (an `exportSession` record).
 * @returns The Markdown, ending with a newline.
 *
 * @example
 * ```ts ignore
 * io.stdout(renderMarkdown(db.exportSession(id)!));
 * ```
 */
export function renderMarkdown(exported: SessionExport): string {
  const sections = [markdownHead(exported), ...exported.messages.map(markdownMessage)];
  return sections.join("\n\n") + "\n";
}
