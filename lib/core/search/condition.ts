/**
 * A query's boolean meaning for substring matching: which words a hit must
 * contain and which it must not, read with FTS5's own precedence, so that
 * substring search (and the check next to the trigram index) answers what
 * the full-text index would.
 *
 * FTS5 binds, from tightest to loosest: words side by side (an implicit
 * AND), `NOT`, `AND`, `OR`; each is left-associative. Without parentheses
 * (the sanitizer drops them) every query therefore reads as an OR of
 * clauses, and each clause as "all of these words, and none of these
 * groups": `a b NOT c d AND e OR f` is `(a ∧ b ∧ e ∧ ¬(c ∧ d)) ∨ f`. Pure:
 * no SQL here.
 *
 * @module
 */
import { codePointLength } from "../python_text.ts";

/** One word of a query, or one of its operators. */
export interface QueryWord {
  /** The word, without quotes or a trailing `*`; for an operator, `AND`, `OR` or `NOT`. */
  readonly text: string;
  /** True for `AND`, `OR` and `NOT` outside quotes. */
  readonly operator: boolean;
}

/** Hits of one clause contain every word of `all` and not every word of any group of `none`. */
export interface Clause {
  /** Words a hit contains, each somewhere in its text. */
  readonly all: readonly string[];
  /** Groups a hit must not contain in full (`a NOT b c` excludes hits with both b and c). */
  readonly none: readonly (readonly string[])[];
}

/** A hit satisfies at least one clause. */
export type Condition = readonly Clause[];

function splitOn(words: readonly QueryWord[], operator: string): QueryWord[][] {
  const parts: QueryWord[][] = [[]];
  for (const word of words) {
    if (word.operator && word.text === operator) parts.push([]);
    else parts[parts.length - 1].push(word);
  }
  return parts;
}

function unique(words: readonly string[]): string[] {
  return [...new Set(words)];
}

/**
 * Reads the words of a query as a {@linkcode Condition}, with FTS5's
 * precedence.
 *
 * @param words The words and operators in order; operator text is upper case.
 * @returns The condition, or `undefined` when the operators do not separate
 *   words (`a AND OR b`, a lone `NOT`), which FTS5 rejects as well.
 *
 * @example Precedence as in FTS5
 * ```ts
 * import { parseCondition } from "./condition.ts";
 * const w = (text: string) => ({ text, operator: ["AND", "OR", "NOT"].includes(text) });
 * const condition = parseCondition("a NOT b c OR d".split(" ").map(w));
 * console.assert(JSON.stringify(condition) ===
 *   '[{"all":["a"],"none":[["b","c"]]},{"all":["d"],"none":[]}]');
 * ```
 */
export function parseCondition(words: readonly QueryWord[]): Condition | undefined {
  const clauses: Clause[] = [];
  for (const alternative of splitOn(words, "OR")) {
    const all: string[] = [];
    const none: string[][] = [];
    for (const factor of splitOn(alternative, "AND")) {
      const groups = splitOn(factor, "NOT");
      for (const [i, group] of groups.entries()) {
        if (group.length === 0 || group.some((w) => w.operator)) return undefined;
        const texts = group.map((w) => w.text);
        if (i === 0) all.push(...texts);
        else none.push(unique(texts));
      }
    }
    clauses.push({ all: unique(all), none });
  }
  return clauses;
}

/**
 * Every word a hit may be found by (the words of every clause's `all`, in
 * query order, each once): what to highlight in a substring hit.
 *
 * @param condition The condition.
 * @returns The words.
 */
export function positiveWords(condition: Condition): string[] {
  return unique(condition.flatMap((clause) => clause.all));
}

/** Whether the condition is one clause with no exclusions: every word must be present. */
export function isConjunction(condition: Condition): boolean {
  return condition.length === 1 && condition[0].none.length === 0;
}

/** Whether the condition is a plain OR of single words: any word will do. */
export function isDisjunction(condition: Condition): boolean {
  return condition.every((clause) => clause.all.length === 1 && clause.none.length === 0);
}

/** True when the trigram index can match the word itself (three characters or more). */
export function trigramMatchable(word: string): boolean {
  return codePointLength(word) >= 3;
}

/** The phrase syntax of FTS5: the word in double quotes, inner quotes doubled. */
export function quotePhrase(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/**
 * A trigram MATCH expression that every hit of `condition` satisfies (a
 * superset to rank by): for each clause, its words of three or more
 * characters; the exclusions are left to the substring check.
 *
 * @param condition The condition.
 * @returns The expression, or `undefined` when some clause has no word the
 *   trigram index can match (only a scan can find its hits).
 */
export function trigramSuperset(condition: Condition): string | undefined {
  const parts: string[] = [];
  for (const clause of condition) {
    const long = clause.all.filter(trigramMatchable);
    if (long.length === 0) return undefined;
    parts.push(long.map(quotePhrase).join(" "));
  }
  return parts.join(" OR ");
}

/**
 * Words such that every hit of `condition` contains at least one of them:
 * one word of each clause, chosen by `usable` (the longest usable one).
 *
 * @param condition The condition.
 * @param usable Which words can name candidates.
 * @returns The words, or `undefined` when some clause has no usable word.
 */
export function coveringWords(
  condition: Condition,
  usable: (word: string) => boolean,
): string[] | undefined {
  const cover: string[] = [];
  for (const clause of condition) {
    const candidates = clause.all.filter(usable);
    if (candidates.length === 0) return undefined;
    cover.push(
      candidates.reduce((a, b) => (codePointLength(b) > codePointLength(a) ? b : a)),
    );
  }
  return unique(cover);
}
