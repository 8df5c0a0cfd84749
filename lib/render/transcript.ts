/**
 * A transcript readable in a terminal: one block per message with its role
 * and time, tool calls with their arguments, tool results folded when long,
 * reasoning on request.
 *
 * @module
 */
import type { JsonValue, MessageRow } from "../core/types.ts";
import { contentText } from "../core/content.ts";
import { transcriptMarks } from "../core/message_row.ts";
import { formatDateTime } from "./format.ts";
import { storedText } from "./stored_text.ts";
import type { Style } from "./style.ts";
import { truncate } from "./width.ts";

/** Options of {@linkcode renderTranscript}. */
export interface TranscriptOptions {
  /** Show `reasoning` / `reasoning_content`. */
  readonly reasoning?: boolean;
  /** Never fold long tool results or arguments. */
  readonly full?: boolean;
  /** Colours. */
  readonly style: Style;
}

/** Lines of a tool result shown before folding. */
const FOLD_LINES = 10;
/** Characters of a tool-call argument list shown before cutting. */
const ARGS_CHARS = 300;
/** Characters of one shown line of a folded block. */
const LINE_CHARS = 240;

/**
 * Bidirectional formatting characters, which can make text read other than
 * it is stored, and the C1 controls (U+0080–U+009F: U+009B is a terminal's
 * CSI), all shown by their code point.
 */
const BIDI_CONTROLS = /[\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Control characters made visible (`␀`, `␛`…) so stored text can never
 * drive the terminal, and bidirectional overrides and isolates shown as
 * `⟨U+202E⟩` so that text reads as it is stored; newlines and tabs stay.
 *
 * @param text The text (a BLOB: its bytes read as UTF-8, `stored_text.ts`).
 * @returns The safe text.
 *
 * @example
 * ```ts
 * import { visibleControls } from "./transcript.ts";
 * console.assert(visibleControls("a\u0000b\u001b") === "a␀b␛");
 * console.assert(visibleControls("x\u202Ey") === "x⟨U+202E⟩y");
 * ```
 */
export function visibleControls(text: string | Uint8Array): string {
  return storedText(text).replace(
    // deno-lint-ignore no-control-regex -- matching control characters is the point
    /[\u0000-\u0008\u000b-\u001f\u007f]/g,
    (c) => String.fromCodePoint(c === "\u007f" ? 0x2421 : 0x2400 + c.charCodeAt(0)),
  ).replace(
    BIDI_CONTROLS,
    (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}

/**
 * {@linkcode visibleControls} for a value shown on one line (an id, a
 * source, a model): newlines and tabs shown as `␊` and `␉` too, so a stored
 * value cannot break a table's row or a question.
 *
 * @param text The value.
 * @returns The safe, one-line text.
 *
 * @example
 * ```ts
 * import { visibleInline } from "./transcript.ts";
 * console.assert(visibleInline("a\nb\tc\u009b") === "a␊b␉c⟨U+009B⟩");
 * ```
 */
export function visibleInline(text: string | Uint8Array): string {
  return visibleControls(text).replaceAll("\n", "␊").replaceAll("\t", "␉");
}

/** The name and argument text of one tool call. */
export interface ToolCallView {
  /** The function name. */
  name: string;
  /** The arguments as compact JSON (or the raw text when it is not JSON). */
  args: string;
}

/**
 * Names and arguments of the tool calls of a message (OpenAI shape:
 * `[{ function: { name, arguments } }]`, arguments as JSON text).
 *
 * @param toolCalls The `tool_calls` column, parsed.
 * @returns One view per call.
 *
 * @example
 * ```ts
 * import { toolCallViews } from "./transcript.ts";
 * const calls = [{ function: { name: "terminal", arguments: '{"command": "ls"}' } }];
 * console.assert(toolCallViews(calls)[0].args === '{"command":"ls"}');
 * ```
 */
export function toolCallViews(toolCalls: JsonValue | null): ToolCallView[] {
  if (toolCalls === null || toolCalls === undefined) return [];
  const list = Array.isArray(toolCalls) ? toolCalls : [toolCalls];
  return list.map((call) => {
    const record = call && typeof call === "object" && !Array.isArray(call) ? call : {};
    const fn = record.function && typeof record.function === "object" &&
        !Array.isArray(record.function)
      ? record.function
      : record;
    const name = typeof fn.name === "string" ? fn.name : "?";
    const raw = fn.arguments ?? fn.input ?? null;
    let args: string;
    if (typeof raw === "string") {
      try {
        args = JSON.stringify(JSON.parse(raw));
      } catch {
        args = raw;
      }
    } else {
      args = raw === null ? "" : JSON.stringify(raw);
    }
    return { name, args };
  });
}

function fold(text: string, options: TranscriptOptions): string[] {
  const lines = text.split("\n");
  if (options.full || lines.length <= FOLD_LINES + 2) {
    return options.full ? lines : lines.map((line) => truncate(line, LINE_CHARS));
  }
  const shown = lines.slice(0, FOLD_LINES).map((line) => truncate(line, LINE_CHARS));
  const hidden = lines.length - FOLD_LINES;
  return [...shown, options.style.dim(`… ${hidden} more lines (--full shows everything)`)];
}

function header(message: MessageRow, style: Style): string {
  // Each a stored value another writer may have filled with anything: a role holding
  // `ESC [2J` cleared the screen, a tool name holding a newline broke the header in two.
  const parts = [style.bold(style.cyan(visibleInline(message.role)))];
  if (message.tool_name) parts.push(style.magenta(visibleInline(message.tool_name)));
  parts.push(formatDateTime(message.timestamp));
  if (message.finish_reason && message.finish_reason !== "stop") {
    parts.push(visibleInline(message.finish_reason));
  }
  // Rows a newer Hermes took back or hides (shown only by `show --all`).
  for (const mark of transcriptMarks(message)) parts.push(style.yellow(mark));
  const text = `── ${parts.join(" · ")} `;
  return text + style.dim("─".repeat(Math.max(4, 72 - text.length)));
}

function reasoningText(message: MessageRow): string {
  return [message.reasoning as unknown, message.reasoning_content as unknown]
    .map((r) => r instanceof Uint8Array ? storedText(r) : r)
    .filter((r): r is string => typeof r === "string" && r.trim() !== "")
    .join("\n");
}

/**
 * Renders messages as a readable transcript.
 *
 * @param messages The messages, in order.
 * @param options Reasoning, folding and colour.
 * @returns The text, ending with a newline (empty for no messages).
 *
 * @example
 * ```ts ignore
 * io.stdout(renderTranscript(db.getMessages(id), { style }));
 * ```
 */
export function renderTranscript(
  messages: readonly MessageRow[],
  options: TranscriptOptions,
): string {
  const { style } = options;
  const out: string[] = [];
  for (const message of messages) {
    out.push(header(message, style));
    const reasoning = reasoningText(message);
    if (reasoning !== "") {
      if (options.reasoning) {
        for (const line of fold(visibleControls(reasoning), options)) {
          out.push(style.dim(`  ┊ ${line}`));
        }
      } else {
        out.push(style.dim("  ┊ (reasoning hidden: --reasoning shows it)"));
      }
    }
    const text = visibleControls(contentText(message.content, { parts: "transcript" })).trimEnd();
    if (text !== "") {
      out.push(
        ...(message.role === "tool" || message.role === "system"
          ? fold(text, options)
          : text.split("\n")),
      );
    }
    for (const call of toolCallViews(message.tool_calls)) {
      const args = options.full ? call.args : truncate(call.args, ARGS_CHARS);
      out.push(`${style.magenta(`→ ${visibleInline(call.name)}`)} ${visibleControls(args)}`);
    }
    out.push("");
  }
  return out.length === 0 ? "" : out.join("\n");
}
