/**
 * A session as one standalone HTML file (`export --format html`, the web
 * page's export): the transcript view with its CSS embedded, readable
 * without any script (tool calls and reasoning fold with `<details>`), and a
 * Content-Security-Policy that forbids scripts and every outside request.
 *
 * @module
 */
import { transcriptMarks } from "../core/message_row.ts";
import type {
  JsonValue,
  MessageContent,
  MessageRow,
  SessionExport,
  SessionRow,
} from "../core/types.ts";
import { partKind } from "../core/content.ts";
import { TRANSCRIPT_CSS } from "./assets/transcript_css.ts";
import { escapeHtml, safeHtml } from "./escape_html.ts";
import { shownExport } from "../render/shown_export.ts";
import { formatUtc } from "../render/format.ts";

/** Images shown inline: data URLs of raster formats only (no SVG, no network). */
const IMAGE_DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$/;

/** A UTC date and time (`formatUtc`), or nothing for a value that names no time. */
function utc(seconds: number | null): string {
  return formatUtc(seconds) ?? "";
}

/**
 * A count as text, only when it is one: SQLite keeps any text put in an
 * INTEGER column, and such text must never reach the page.
 */
function countText(value: unknown): string | undefined {
  if (typeof value === "bigint") return String(value);
  return typeof value === "number" && Number.isFinite(value) ? String(value) : undefined;
}

/** Stored text as safe HTML, whatever the column really held (a number, text). */
function storedHtml(value: unknown): string {
  return safeHtml(typeof value === "string" ? value : String(value));
}

function isRecord(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Inline code (`` `x` ``) and bold (`**x**`) on one line: the markup the web
 * page draws, and no more. The capture keeps them in `split`'s output.
 */
const INLINE = /(`[^`\n]+`|\*\*[^*\n]+\*\*)/;

/** Wrapped text with its inline code and bold drawn; every piece escaped on its own. */
function inlineHtml(text: string): string {
  return text.split(INLINE).map((piece, i) => {
    if (i % 2 === 0) return safeHtml(piece);
    if (piece.startsWith("`")) return `<code>${safeHtml(piece.slice(1, -1))}</code>`;
    return `<strong>${safeHtml(piece.slice(2, -2))}</strong>`;
  }).join("");
}

/** Plain text with fenced code blocks (```) as `<pre>` and the rest as wrapped text. */
function textHtml(text: string): string {
  const out: string[] = [];
  const fence = /```([^\n`]*)\n([\s\S]*?)```/g;
  let last = 0;
  for (const match of text.matchAll(fence)) {
    if (match.index > last) {
      out.push(`<div class="text">${inlineHtml(text.slice(last, match.index))}</div>`);
    }
    out.push(`<pre><code>${safeHtml(match[2])}</code></pre>`);
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(`<div class="text">${inlineHtml(text.slice(last))}</div>`);
  return out.join("");
}

function partHtml(part: JsonValue): string {
  if (typeof part === "string") return textHtml(part);
  if (!isRecord(part)) return `<span class="part-label">${safeHtml(JSON.stringify(part))}</span>`;
  if (typeof part.text === "string") return textHtml(part.text);
  const { type, url } = partKind(part);
  if (url !== undefined && IMAGE_DATA_URL.test(url)) {
    return `<img class="part-image" alt="${escapeHtml(type)}" src="${escapeHtml(url)}">`;
  }
  const label = url === undefined ? type : `${type}: ${url.slice(0, 120)}`;
  return `<span class="part-label">[${safeHtml(label)}]</span>`;
}

function contentHtml(content: MessageContent | null): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return textHtml(content);
  const parts = Array.isArray(content) ? content : [content];
  return parts.map(partHtml).join("");
}

/** Tool-call arguments pretty-printed (JSON text parsed when it is JSON). */
function prettyArguments(raw: JsonValue | undefined): string {
  if (raw === undefined || raw === null) return "";
  if (typeof raw !== "string") return JSON.stringify(raw, null, 2);
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/** What a message (or a tool result) without text shows, as the page shows it. */
const NO_TEXT = `<em class="no-text">(no text)</em>`;

/** Whether `content` shows anything: text other than blanks, or any part. */
function hasText(content: MessageContent | null): boolean {
  if (content === null || content === undefined) return false;
  if (typeof content === "string") return content.trim() !== "";
  return !Array.isArray(content) || content.length > 0;
}

/** A tool call's result: its content, or the note when it has no text. */
function resultBody(content: MessageContent | null): string {
  return hasText(content) ? contentHtml(content) : NO_TEXT;
}

/**
 * A message's HTML with a slot under each tool call that has an id, where
 * that call's result goes (see {@linkcode resultSlotHtml}): the message is
 * `texts[0] + slot 0 + texts[1] + … + texts[n]`.
 */
export interface MessageHtmlParts {
  /** The HTML around the slots: one more than `callIds`. */
  readonly texts: readonly string[];
  /** The id of the call each slot belongs to, in order. */
  readonly callIds: readonly string[];
}

/** The tool calls' HTML, parted at each call's result slot, appended to `texts`. */
function addToolCalls(toolCalls: JsonValue | null, texts: string[], callIds: string[]): void {
  if (toolCalls === null || toolCalls === undefined) return;
  const list = Array.isArray(toolCalls) ? toolCalls : [toolCalls];
  for (const call of list) {
    const record = isRecord(call) ? call : {};
    const fn = isRecord(record.function) ? record.function : record;
    const name = typeof fn.name === "string" ? fn.name : "?";
    texts[texts.length - 1] +=
      `<details class="call"><summary>→ ${safeHtml(name)}</summary><div class="call-grid">` +
      `<div><div class="figures">arguments</div><pre><code>${
        safeHtml(prettyArguments(fn.arguments ?? fn.input))
      }</code></pre></div>`;
    if (typeof record.id === "string") {
      callIds.push(record.id);
      texts.push("");
    }
    texts[texts.length - 1] += "</div></details>";
  }
}

/** Whether `toolCalls` holds at least one call (each is drawn). */
function hasCalls(toolCalls: JsonValue | null): boolean {
  if (toolCalls === null || toolCalls === undefined) return false;
  return !Array.isArray(toolCalls) || toolCalls.length > 0;
}

/**
 * The HTML of one message (an `<article>`), with a slot under each of its
 * tool calls for the call's result.
 *
 * @param message A message as its transcript shows it (`shownMessage`).
 * @returns Its HTML, parted at the result slots.
 */
export function messageHtmlParts(message: MessageRow): MessageHtmlParts {
  const role = storedHtml(message.role);
  const head = [`<span class="role">${role}</span>`];
  if (message.tool_name) head.push(`<span class="mono">${storedHtml(message.tool_name)}</span>`);
  head.push(`<time>${utc(message.timestamp)}</time>`);
  const tokens = countText(message.token_count);
  if (tokens !== undefined && tokens !== "0") head.push(`<span>${tokens} tokens</span>`);
  if (message.finish_reason && message.finish_reason !== "stop") {
    head.push(`<span>${storedHtml(message.finish_reason)}</span>`);
  }
  for (const mark of transcriptMarks(message)) {
    head.push(`<span class="mark">${escapeHtml(mark)}</span>`);
  }
  const body: string[] = [];
  const reasoning = [message.reasoning, message.reasoning_content]
    .filter((r): r is string => typeof r === "string" && r.trim() !== "").join("\n\n");
  if (reasoning !== "") {
    body.push(`<details><summary>Reasoning</summary>${textHtml(reasoning)}</details>`);
  }
  const content = contentHtml(message.content);
  if (message.role === "tool" && hasText(message.content)) {
    body.push(`<details><summary>Tool result</summary>${content}</details>`);
  } else if (
    !hasText(message.content) &&
    (message.role === "tool" || (reasoning === "" && !hasCalls(message.tool_calls)))
  ) {
    // Not an empty box (nor an empty tool result fold): the page says the same.
    body.push(NO_TEXT);
  } else body.push(content);
  const texts = [
    `<article class="msg role-${String(message.role).replace(/[^a-z_-]/gi, "")}" id="m-${
      countText(message.id) ?? ""
    }"><div class="msg-head">${head.join("")}</div>${body.join("")}`,
  ];
  const callIds: string[] = [];
  addToolCalls(message.tool_calls, texts, callIds);
  texts[texts.length - 1] += "</article>";
  return { texts, callIds };
}

/**
 * The id under which a message is a tool call's result, or `undefined`
 * when it is none: a `tool` message's `tool_call_id`, when set.
 *
 * @param message A message.
 * @returns The id it answers.
 */
export function resultIdOf(message: MessageRow): unknown {
  return message.role === "tool" && message.tool_call_id ? message.tool_call_id : undefined;
}

/**
 * What goes in a tool call's result slot: the result's content (or the
 * note that it has none) under a "result" label.
 *
 * @param result The call's result, as its transcript shows it.
 * @returns The HTML.
 */
export function resultSlotHtml(result: MessageRow): string {
  return `<div><div class="figures">result</div>${resultBody(result.content)}</div>`;
}

/**
 * A message's HTML with its slots filled.
 *
 * @param parts The message's parts.
 * @param slots What goes in each slot, in order (`""` for a call without result).
 * @returns The `<article>`.
 */
export function filledMessageHtml(parts: MessageHtmlParts, slots: readonly string[]): string {
  let html = parts.texts[0];
  for (let i = 0; i < parts.callIds.length; i++) html += slots[i] + parts.texts[i + 1];
  return html;
}

function cost(value: number | null | undefined): string {
  return typeof value === "number" && Number.isFinite(value) ? `$${value.toFixed(4)}` : "";
}

/**
 * The start of one session's HTML: its title and details, before its first
 * message.
 *
 * @param row The session's row, as its transcript shows it (`shownExport`).
 * @param messageCount The "Messages" row's text when the row's
 *   `message_count` is not a count (the number of messages); `undefined`
 *   leaves that row out then.
 * @returns The HTML: a `<section>` left open, closed by {@linkcode SESSION_HTML_END}.
 */
export function sessionHtmlHead(row: SessionRow, messageCount: string | undefined): string {
  const rows: [string, string][] = [
    ["ID", `<span class="mono">${storedHtml(row.id)}</span>`],
    ["Source", storedHtml(row.source)],
  ];
  if (row.model) rows.push(["Model", storedHtml(row.model)]);
  rows.push(["Started", utc(row.started_at)]);
  if (row.ended_at !== null && row.ended_at !== undefined) {
    rows.push([
      "Ended",
      `${utc(row.ended_at)}${row.end_reason ? ` (${storedHtml(row.end_reason)})` : ""}`,
    ]);
  }
  if (row.parent_session_id) {
    rows.push(["Parent", `<span class="mono">${storedHtml(row.parent_session_id)}</span>`]);
  }
  const count = storedMessageCount(row) ?? messageCount;
  if (count !== undefined) rows.push(["Messages", count]);
  const tokensIn = countText(row.input_tokens) ?? "0";
  rows.push(["Tokens", `${tokensIn} in · ${countText(row.output_tokens) ?? "0"} out`]);
  const costs = [cost(row.estimated_cost_usd), cost(row.actual_cost_usd)];
  if (costs[0] !== "" || costs[1] !== "") {
    rows.push(["Cost", `${costs[0] || "—"} estimated${costs[1] ? ` · ${costs[1]} actual` : ""}`]);
  }
  return `<section class="session"><h1 class="bidi">${storedHtml(row.title || row.id)}</h1>` +
    `<dl class="details-list">${detailsHtml(rows)}</dl>`;
}

/** A details list's rows. */
function detailsHtml(rows: readonly (readonly [string, string])[]): string {
  return rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("");
}

/**
 * The session's `message_count` as the "Messages" row shows it, or
 * `undefined` when it is not a count (text in the INTEGER column, `null`).
 *
 * @param row A session's row.
 * @returns The count's text.
 */
export function storedMessageCount(row: SessionRow): string | undefined {
  return countText(row.message_count);
}

/**
 * A "Messages" row of its own, for a session whose head was written without
 * it (see {@linkcode sessionHtmlHead}).
 *
 * @param count The number of messages.
 * @returns The HTML: a details list of that one row.
 */
export function messageCountHtml(count: number): string {
  return `<dl class="details-list">${detailsHtml([["Messages", String(count)]])}</dl>`;
}

/** The end of a session's HTML, after its last message. */
export const SESSION_HTML_END = "</section>\n";

/**
 * The HTML of one session: its details and every message, each tool call
 * with its result (the `tool` message of the call's id, anywhere in the
 * session; the last of them when several share it).
 *
 * @param exported An `exportSession` record (a BLOB it carries as bytes shown as its text).
 * @returns An HTML fragment (a `<section>`).
 *
 * @example
 * ```ts
 * import { renderSessionHtml } from "./html_transcript.ts";
 * const html = renderSessionHtml({
 *   id: "s1", source: "cli", title: "<b>hi</b>", started_at: 0, messages: [],
 * } as never);
 * console.assert(html.includes("&lt;b&gt;hi&lt;/b&gt;"));
 * ```
 */
export function renderSessionHtml(exported: SessionExport): string {
  // The BLOBs an export carries as bytes (Python stores `bytes` so), shown as their text.
  const { messages, ...session } = shownExport(exported);
  const results = new Map<unknown, MessageRow>();
  for (const message of messages) {
    const id = resultIdOf(message);
    if (id !== undefined) results.set(id, message);
  }
  const articles = messages.map((message) => {
    const parts = messageHtmlParts(message);
    return filledMessageHtml(
      parts,
      parts.callIds.map((id) => {
        const result = results.get(id);
        return result === undefined ? "" : resultSlotHtml(result);
      }),
    );
  });
  return sessionHtmlHead(session, String(messages.length)) + articles.join("\n") +
    SESSION_HTML_END;
}

/** The policy of an exported file: its own inline CSS and data-URL images, nothing else. */
const EXPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/**
 * The start of a standalone HTML document, up to and including `<main>`.
 *
 * @param title The document title (escaped here).
 * @returns The HTML.
 *
 * @example
 * ```ts
 * import { htmlDocumentEnd, htmlDocumentStart } from "./html_transcript.ts";
 * const page = htmlDocumentStart("a & b") + htmlDocumentEnd();
 * console.assert(page.includes("<title>a &amp; b</title>") && !page.includes("<script"));
 * ```
 */
export function htmlDocumentStart(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${EXPORT_CSP}">
<title>${safeHtml(String(title))}</title>
<style>${TRANSCRIPT_CSS}
main { max-width: 960px; margin: 0 auto; padding: 16px; }
section.session + section.session { border-top: 2px solid var(--line); margin-top: 32px; }
</style></head><body><main>
`;
}

/**
 * The end of the document {@linkcode htmlDocumentStart} began.
 *
 * @returns The HTML.
 */
export function htmlDocumentEnd(): string {
  return "</main></body></html>\n";
}

/**
 * One session as a whole standalone HTML file.
 *
 * @param session An `exportSession` record.
 * @returns The document.
 *
 * @example
 * ```ts ignore
 * await Deno.writeTextFile("t.html", renderHtmlDocument((await store.exportSession(id))!));
 * ```
 */
export function renderHtmlDocument(session: SessionExport): string {
  return htmlDocumentStart(session.title || session.id) + renderSessionHtml(session) +
    htmlDocumentEnd();
}
