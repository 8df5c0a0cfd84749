/**
 * A query that starts with `NOT` finds the very words it means to leave
 * out (FTS5 drops a leading NOT), so the faces refuse it, in the same
 * words.
 *
 * @module
 */
import { countSubstringScript } from "./cjk.ts";
import { quotedValue } from "../shown_value.ts";

/**
 * Why `query` is refused, or `null` when it does not start with NOT.
 *
 * @param query The user's query.
 * @returns The reason, naming the query.
 *
 * @example
 * ```ts
 * import { leadingNotProblem } from "./leading_not.ts";
 * console.assert(leadingNotProblem("docker NOT compose") === null);
 * console.assert(leadingNotProblem(" NOT docker")!.startsWith("a query cannot start with NOT"));
 * console.assert(leadingNotProblem("not working") === null); // a word, as FTS5 reads it
 * ```
 */
export function leadingNotProblem(query: string): string | null {
  const first = query.trim().split(/\s+/u)[0] ?? "";
  // FTS5 knows only an upper-case NOT; in a query with CJK text every case is the operator.
  const operator = first === "NOT" ||
    (first.toUpperCase() === "NOT" && countSubstringScript(query) > 0);
  if (!operator) return null;
  return `a query cannot start with NOT (it would find the words it means to leave out): ` +
    `put a word first, as in "docker NOT compose", got ${quotedValue(query)}`;
}
