/**
 * Highlighting the matched words of a search hit: FTS5 marks its matches
 * `>>>like this<<<`; substring matches (CJK, emoji, short words) come
 * unmarked, so the words the search plan matched by substring are marked
 * here, the same way. Then the markers stay (piped output) or become colour
 * (a terminal).
 *
 * @module
 */
import type { Style } from "./style.ts";

/** A `>>>…<<<` marked match. */
const MARKED = />>>([\s\S]*?)<<</g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Marks every occurrence of `words` (case-insensitive, longest word first)
 * with `>>>…<<<`, outside the matches already marked.
 *
 * @param snippet The snippet, perhaps with markers.
 * @param words The words to mark.
 * @returns The snippet with every match marked.
 *
 * @example
 * ```ts
 * import { markWords } from "./highlight.ts";
 * console.assert(markWords("记忆 and >>>docker<<<", ["记忆"]) === ">>>记忆<<< and >>>docker<<<");
 * ```
 */
export function markWords(snippet: string, words: readonly string[]): string {
  const wanted = words.filter((w) => w !== "").sort((a, b) => b.length - a.length);
  if (wanted.length === 0) return snippet;
  const pattern = new RegExp(wanted.map(escapeRegExp).join("|"), "giu");
  let out = "";
  let last = 0;
  for (const match of snippet.matchAll(MARKED)) {
    out += snippet.slice(last, match.index).replace(pattern, (w) => `>>>${w}<<<`) + match[0];
    last = match.index + match[0].length;
  }
  return out + snippet.slice(last).replace(pattern, (w) => `>>>${w}<<<`);
}

/**
 * The marked matches shown in colour when the style has colour, else left
 * as `>>>…<<<` markers.
 *
 * @param snippet A marked snippet.
 * @param style The output style.
 * @returns The text to print.
 *
 * @example
 * ```ts
 * import { showMarks } from "./highlight.ts";
 * import { createStyle } from "./style.ts";
 * console.assert(showMarks("a >>>b<<<", createStyle(false)) === "a >>>b<<<");
 * ```
 */
export function showMarks(snippet: string, style: Style): string {
  if (!style.enabled) return snippet;
  return snippet.replace(MARKED, (_, word: string) => style.highlight(word));
}
