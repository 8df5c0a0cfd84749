/**
 * A search hit's snippet for the page as unambiguous parts: the search marks
 * its matches `>>>like this<<<`, and a message may hold `>>>` or `<<<`
 * itself (a Python REPL, a shell here-string), so the page cannot split on
 * them. The markers the search added are told from the message's own by
 * where FTS5 puts them (an opening marker right before a matched token, a
 * closing one right after it, in pairs); the message's own are kept as
 * text.
 *
 * @module
 */
import type { SearchHit } from "../core/types.ts";
import { displaySnippet } from "../render/excerpt.ts";
import { markWords } from "../render/highlight.ts";

const OPEN = ">>>";
const CLOSE = "<<<";

/** Two characters of the private use area that `text` does not hold, to stand for `>>>` and `<<<`. */
function placeholders(text: string): [string, string] {
  const free: string[] = [];
  for (let code = 0xe000; code <= 0xf8ff && free.length < 2; code++) {
    const c = String.fromCharCode(code);
    if (!text.includes(c)) free.push(c);
  }
  return [free[0], free[1]];
}

/**
 * Where the search's own markers are in a marked snippet: the last `>>>` of
 * a run of `>` followed by a non-space, and the first `<<<` of a run of `<`
 * after a non-space, an opening one paired with the next closing one.
 *
 * @returns The start of each marker the search added.
 */
function markerStarts(snippet: string): Set<number> {
  const starts = new Set<number>();
  let open = -1;
  const runs = /(>{3,})|(<{3,})/g;
  for (let run = runs.exec(snippet); run !== null; run = runs.exec(snippet)) {
    const end = run.index + run[0].length;
    if (run[1] !== undefined) {
      if (end < snippet.length && /\S/u.test(snippet[end])) open = end - OPEN.length;
    } else if (open >= 0 && run.index > 0 && /\S/u.test(snippet[run.index - 1])) {
      starts.add(open);
      starts.add(run.index);
      open = -1;
    }
  }
  return starts;
}

/**
 * A hit's snippet as the page shows it ({@linkcode displaySnippet}, the
 * substring matches marked as the CLI marks them), split into parts: the
 * even ones are text, the odd ones are matches. A `>>>` or `<<<` of the
 * message stays in the text.
 *
 * @param hit A search hit.
 * @param words The words the search matched by substring (`unmarkedWords(query)`).
 * @returns The parts, or `null` when the hit has no snippet.
 *
 * @example Content holding the markers itself
 * ```ts
 * import { snippetParts } from "./snippet_parts.ts";
 * const hit = {
 *   id: 1, session_id: "s", role: "user", timestamp: 1, tool_name: null, source: "cli",
 *   model: null, session_started: 0, context: [],
 *   snippet: "REPL: >>> import >>>kraken<<< then tr a-z <<< done",
 * };
 * const parts = snippetParts(hit, [])!;
 * console.assert(parts.join("|") === "REPL: >>> import |kraken| then tr a-z <<< done");
 * ```
 */
export function snippetParts(hit: SearchHit, words: readonly string[]): string[] | null {
  if (hit.snippet === null) return null;
  const raw = hit.snippet;
  const [open, close] = placeholders(raw);
  const starts = markerStarts(raw);
  // The message's own markers become placeholders while the snippet is shaped.
  let neutral = "";
  for (let i = 0; i < raw.length;) {
    const three = raw.slice(i, i + 3);
    if (three === OPEN || three === CLOSE) {
      neutral += starts.has(i) ? three : three === OPEN ? open : close;
      i += 3;
    } else {
      neutral += raw[i++];
    }
  }
  const shaped = markWords(displaySnippet({ ...hit, snippet: neutral })!, words);
  return shaped.split(/>>>|<<</).map((part) =>
    part.replaceAll(open, OPEN).replaceAll(close, CLOSE)
  );
}
