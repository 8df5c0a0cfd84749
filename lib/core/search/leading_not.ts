/**
 * A query that starts with `NOT` finds the very words it means to leave
 * out (FTS5 drops a leading NOT), so the faces refuse it, in the same
 * words.
 *
 * @module
 */

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
 * console.assert(leadingNotProblem(" not docker")!.startsWith("a query cannot start with NOT"));
 * ```
 */
export function leadingNotProblem(query: string): string | null {
  const first = query.trim().split(/\s+/u)[0] ?? "";
  if (first.toUpperCase() !== "NOT") return null;
  return `a query cannot start with NOT (it would find the words it means to leave out): ` +
    `put a word first, as in "docker NOT compose", got ${JSON.stringify(query)}`;
}
