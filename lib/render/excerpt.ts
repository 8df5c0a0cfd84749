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
