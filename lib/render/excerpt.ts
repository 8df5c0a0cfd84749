/**
 * The matching message of a search hit, as the CLI and the session browser
 * show it: which entry of the hit's context is the hit itself, and where a
 * substring match's excerpt was cut from its message.
 *
 * @module
 */
import type { SearchHit } from "../core/types.ts";

/** Code points of a substring hit's snippet: `substr(content, instr - 40, 120)`, as Python's. */
const WINDOW_LENGTH = 120;
/** Code points of a context entry's content at most (a longer one is cut there). */
const CONTEXT_LENGTH = 200;

/**
 * Which entry of a hit's context is the hit itself: the context is the
 * previous, the matching and the next message of the session, fewer at its
 * ends, so with two entries the snippet and the role tell which.
 *
 * @param hit A search hit.
 * @returns The index of the hit's own entry (0 when there is no context).
 *
 * @example
 * ```ts
 * import { hitEntryIndex } from "./excerpt.ts";
 * const hit = {
 *   id: 2, session_id: "s", role: "user", snippet: "the >>>docker<<< host", timestamp: 1,
 *   tool_name: null, source: "cli", model: null, session_started: 0,
 *   context: [{ role: "assistant", content: "hello" }, { role: "user", content: "the docker host" }],
 * };
 * console.assert(hitEntryIndex(hit) === 1);
 * ```
 */
export function hitEntryIndex(hit: SearchHit): number {
  const context = hit.context ?? [];
  if (context.length === 3) return 1;
  if (context.length <= 1) return 0;
  const probe = (hit.snippet ?? "").replace(/>>>|<<<|^\.\.\.|\.\.\.$/g, "").trim().slice(0, 20);
  const first = context[0];
  if (first.role === hit.role && probe !== "" && String(first.content).includes(probe)) return 0;
  if (context[1].role !== hit.role) return 0;
  return 1;
}

/**
 * A substring hit's snippet is a bare window of its message (no marks, no
 * ellipses: FTS5's snippets have both), so it may begin and end inside a
 * word; "…" shows where it was cut. The hit's own context entry holds the
 * start of the same message, which tells both ends apart.
 *
 * @param snippet The hit's snippet, as the store returns it.
 * @param content The content of the hit's own context entry, when there is one.
 * @returns The snippet, with "…" where the message goes on.
 *
 * @example
 * ```ts
 * import { showWindowCuts } from "./excerpt.ts";
 * const message = "Plan: canary 10%, then 50%, then 100% with docker images pinned.";
 * console.assert(showWindowCuts(message.slice(3), message) === "…" + message.slice(3));
 * console.assert(showWindowCuts(message, message) === message);
 * console.assert(showWindowCuts("...a >>>docker<<< b...", message) === "...a >>>docker<<< b...");
 * ```
 */
export function showWindowCuts(snippet: string, content: unknown): string {
  if (typeof content !== "string" || snippet === "" || /^\.\.\.|>>>|\.\.\.$/.test(snippet)) {
    return snippet; // FTS5's own, or nothing to tell by
  }
  const chars = [...snippet];
  // Cut at the start when the message does not begin with it (a window 40 before the word).
  const head = content.startsWith(chars.slice(0, 20).join("")) ? "" : "…";
  // A window shorter than its 120 ran to the end; a full one did when the whole message ends so.
  const whole = [...content].length < CONTEXT_LENGTH;
  const tail = chars.length < WINDOW_LENGTH || (whole && content.endsWith(snippet)) ? "" : "…";
  return `${head}${snippet}${tail}`;
}

/**
 * The start of one tool call in the JSON that `tool_calls` holds (OpenAI's
 * shape, as Python writes it or compact): the call's other keys with their
 * plain values (`"id": "call_1"`, `"response_item_id": null`), then its
 * function's name and the opening quote of its `arguments` string; group 1
 * is the name. A `[` or the `, ` between two calls goes with it.
 */
const CALL_HEAD =
  /(?:\[\s*|,\s*)?\{(?:"[A-Za-z_]+":\s*(?:"[^"]*"|null|true|false|-?\d+(?:\.\d+)?),\s*)*"function":\s*\{\s*"name":\s*"([^"]*)",\s*"arguments":\s*"/g;
/** One-character JSON escapes. */
const ESCAPED: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
};

/**
 * Reads a JSON string's body from `start` to its closing quote (or to the
 * end of a snippet cut inside it).
 *
 * @returns The decoded text and the index after the closing quote (the
 *   text's length when it was cut).
 */
function jsonStringBody(text: string, start: number): { value: string; end: number } {
  let value = "";
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') return { value, end: i + 1 };
    if (c !== "\\" || i + 1 === text.length) {
      value += c;
      continue;
    }
    const next = text[++i];
    const hex = next === "u" ? /^[0-9a-fA-F]{4}/.exec(text.slice(i + 1, i + 5)) : null;
    if (hex) {
      value += String.fromCharCode(parseInt(hex[0], 16));
      i += 4;
    } else {
      value += ESCAPED[next] ?? `\\${next}`;
    }
  }
  return { value, end: text.length };
}

/**
 * Where a call ends after its arguments string: past the function's `}`,
 * the call's other members (Gemini's `extra_content`…) and its own `}`, and
 * the list's `]` when it closes there; the text's length when it was cut.
 */
function callEnd(text: string, from: number): number {
  const close = /\s*\}/y;
  close.lastIndex = from;
  if (close.exec(text) === null) return from;
  let depth = 0;
  for (let i = close.lastIndex; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = jsonStringBody(text, i + 1).end - 1;
    else if (c === "{" || c === "[") depth++;
    else if (depth > 0 && (c === "}" || c === "]")) depth--;
    else if (c === "}") {
      const list = /\s*\]/y;
      list.lastIndex = i + 1;
      return list.exec(text) === null ? i + 1 : list.lastIndex;
    }
  }
  return text.length;
}

/**
 * A hit's snippet as the CLI and the session browser show it: where a bare
 * window was cut ({@linkcode showWindowCuts}); each tool call as `→ name
 * arguments` instead of its JSON (the full-text index holds a message's
 * content, tool name and `tool_calls` JSON together, so a hit in a command
 * line came as `[{"id": "call_…", "type": "function", …`); and without the
 * tool name the index appends to a tool's result, which the hit names
 * already (unless the match is in it). The marks `>>>…<<<` are kept.
 *
 * @param hit A search hit.
 * @returns The snippet to show, or `null` when the hit has none.
 *
 * @example
 * ```ts
 * import { displaySnippet } from "./excerpt.ts";
 * const snippet = 'Checking. [{"id": "call_1", "type": "function", "function": ' +
 *   '{"name": "terminal", "arguments": "{\\"command\\": \\">>>docker<<< ps\\"}"}}]';
 * const hit = {
 *   id: 1, session_id: "s", role: "assistant", snippet, timestamp: 1, tool_name: null,
 *   source: "cli", model: null, session_started: 0, context: [],
 * };
 * console.assert(
 *   displaySnippet(hit) === 'Checking. → terminal {"command": ">>>docker<<< ps"}',
 * );
 * ```
 */
export function displaySnippet(hit: SearchHit): string | null {
  if (hit.snippet === null) return null;
  let text = showWindowCuts(hit.snippet, hit.context?.[hitEntryIndex(hit)]?.content);
  // Only the index's snippets (marked) hold the tool name; a substring match's window is content.
  const name = hit.tool_name;
  const trimmed = text.trimEnd();
  if (
    name && text.includes(">>>") && trimmed.endsWith(name) &&
    /\s$/.test(trimmed.slice(0, -name.length))
  ) {
    text = trimmed.slice(0, -name.length).trimEnd();
  }
  if (hit.role !== "assistant") return withoutLongStretches(text); // only an assistant's holds calls
  let shown = "";
  let at = 0;
  CALL_HEAD.lastIndex = 0;
  for (let head = CALL_HEAD.exec(text); head !== null; head = CALL_HEAD.exec(text)) {
    const args = jsonStringBody(text, CALL_HEAD.lastIndex);
    const end = callEnd(text, args.end);
    CALL_HEAD.lastIndex = end;
    // A match in what the rewrite leaves out (the call's id…): the call stays as it is.
    const left = head[0].replace(`"${head[1]}"`, "") + text.slice(args.end, end);
    if (left.includes(">>>")) continue;
    // The index joins content, tool name and calls with spaces: one space before each call.
    shown = (shown + text.slice(at, head.index)).trimEnd();
    if (shown !== "") shown += " ";
    shown += `→ ${head[1]} ${args.value}`;
    at = end;
  }
  return withoutLongStretches(shown + text.slice(at));
}

/** The most characters of unmarked text a shown snippet keeps in one stretch. */
const LONG_STRETCH = 400;
/** What it keeps of a longer one next to a match. */
const STRETCH_KEPT = 150;

/**
 * `snippet` with each stretch of text between its matches longer than
 * {@linkcode LONG_STRETCH} characters cut to the {@linkcode STRETCH_KEPT}
 * next to the matches, a `…` where text went: FTS5's snippet takes whole
 * tokens, and one token can be a long line without a space (a minified
 * file, a base64 blob), which put the match a screen away or further.
 */
function withoutLongStretches(snippet: string): string {
  if (snippet.length <= LONG_STRETCH) return snippet;
  const parts = snippet.split(/(>>>|<<<)/);
  const marked = parts.length > 1;
  return parts.map((part, i) => {
    const chars = [...part];
    if (part === ">>>" || part === "<<<" || chars.length <= LONG_STRETCH) return part;
    const first = i === 0;
    const last = i === parts.length - 1;
    if (!marked) return `${chars.slice(0, LONG_STRETCH).join("")}…`;
    if (first) return `…${chars.slice(-STRETCH_KEPT).join("")}`;
    if (last) return `${chars.slice(0, STRETCH_KEPT).join("")}…`;
    return `${chars.slice(0, STRETCH_KEPT).join("")}…${chars.slice(-STRETCH_KEPT).join("")}`;
  }).join("");
}
