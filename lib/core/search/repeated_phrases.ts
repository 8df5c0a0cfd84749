/**
 * Dropping what a query repeats where the repeat changes nothing: a phrase
 * ANDed (or ORed) with itself matches the rows the phrase matches, and FTS5
 * marks the same places in them. FTS5's `snippet()` and our cut of it
 * (`fts5_snippet.ts`) score windows over every instance of every phrase,
 * so a word written 16 times costs them 256 times the work of the word
 * written once (7 s for one 14 KB message in SQLite): a pasted query must
 * not cost that.
 *
 * @module
 */
import {
  MAX_TOKEN,
  parseFtsQuery,
  type PhraseNode,
  type QueryNode,
  tokenize,
  trigramTokens,
} from "./fts5_text.ts";

/**
 * Text whose case and diacritics our tokenizers fold as SQLite's (Unicode
 * 6.1) tables do: Latin letters and the combining diacritics. Elsewhere
 * two phrases are the same only when written the same (a case pair newer
 * than SQLite's tables would fold together here and not there).
 */
// deno-lint-ignore no-control-regex -- the range is the point
const FOLDS_AS_SQLITE = /^[\u0001-\u036f]*$/;
/** White space FTS5 itself reads as such; the parser here reads any (`\s`), so other kinds are left alone. */
const OTHER_SPACE = /[^\S \t\n\r]/;

/**
 * What a phrase is, as FTS5 matches it: its tokens and prefix mark where
 * they are known to be SQLite's, else its text as written.
 */
function phraseKey(
  node: PhraseNode,
  index: "words" | "trigram",
): string {
  const star = node.prefix ? "*" : "";
  if (FOLDS_AS_SQLITE.test(node.text)) {
    const terms = (index === "words" ? tokenize : trigramTokens)(node.text).map((t) => t.term);
    // A phrase without a token, or with a term cut short, is itself only.
    if (terms.length > 0 && terms.every((term) => term.length < MAX_TOKEN)) {
      return `t${star}${JSON.stringify(terms)}`;
    }
  }
  return `r${star}${JSON.stringify(node.text)}`;
}

/** Where a node ends in the query. */
function endOf(node: QueryNode): number {
  if (node.kind === "phrase") return node.to;
  if (node.kind === "not") return endOf(node.right);
  return endOf(node.items[node.items.length - 1]);
}

/**
 * Prunes `node`: of the items of an AND, an OR or a run of phrases, those
 * equal to an earlier one are cut (each with what joins it to the item
 * before: `[end of that item, end of this one)`). A NOT is kept whole (`a
 * NOT a` is not `a`), its sides pruned.
 *
 * @returns The node's key: equal keys match the same rows.
 */
function prune(
  node: QueryNode,
  index: "words" | "trigram",
  cuts: Array<[number, number]>,
): string {
  if (node.kind === "phrase") return phraseKey(node, index);
  if (node.kind === "not") {
    return `not(${prune(node.left, index, cuts)},${prune(node.right, index, cuts)})`;
  }
  const seen = new Set<string>();
  for (const [i, item] of node.items.entries()) {
    const inner: Array<[number, number]> = [];
    const key = prune(item, index, inner);
    if (seen.has(key)) {
      cuts.push([endOf(node.items[i - 1]), endOf(item)]);
      continue;
    }
    seen.add(key);
    cuts.push(...inner);
  }
  // AND, OR and a run are each the same in any order; a run of one is its item.
  const keys = [...seen].sort();
  return keys.length === 1 ? keys[0] : `${node.kind}(${keys.join(",")})`;
}

/**
 * `expression` without the phrases and groups it repeats under an AND (said
 * or implied) or an OR: `docker docker` → `docker`, `Docker AND "docker"` →
 * `Docker`, `a b OR b a` → `a b`. Phrases are the same when FTS5 reads the
 * same tokens in them (case and Latin diacritics folded), with the same
 * prefix mark (`dock*` is not `dock`). The rest of the text stays as it is
 * written; a query the parser cannot read is returned unchanged.
 *
 * @param expression An FTS5 MATCH expression (a plan's `expression` or `retry`).
 * @param index The index it is asked of: the words (`unicode61`) or the trigrams.
 * @returns The expression, matching the same rows with the same snippets.
 *
 * @example
 * ```ts
 * import { withoutRepeatedPhrases } from "./repeated_phrases.ts";
 * console.assert(withoutRepeatedPhrases("docker Docker DOCKER", "words") === "docker");
 * console.assert(withoutRepeatedPhrases("dock* dock", "words") === "dock* dock");
 * console.assert(withoutRepeatedPhrases("a NOT a", "words") === "a NOT a");
 * ```
 */
export function withoutRepeatedPhrases(expression: string, index: "words" | "trigram"): string {
  // FTS5 reads a query up to a NUL; and it reads only ASCII white space as white space.
  if (expression.includes("\u0000") || OTHER_SPACE.test(expression)) return expression;
  const tree = parseFtsQuery(expression);
  if (tree === undefined) return expression;
  const cuts: Array<[number, number]> = [];
  prune(tree, index, cuts);
  if (cuts.length === 0) return expression;
  cuts.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [from, to] of cuts) {
    out += expression.slice(at, from);
    at = to;
  }
  return out + expression.slice(at);
}

/**
 * How many phrases FTS5 reads in `expression` (each one written, repeats
 * included), or `undefined` when the parser cannot read it.
 *
 * @param expression An FTS5 MATCH expression.
 * @returns The count.
 */
export function phraseCount(expression: string): number | undefined {
  const tree = parseFtsQuery(expression);
  if (tree === undefined) return undefined;
  const count = (node: QueryNode): number => {
    if (node.kind === "phrase") return 1;
    if (node.kind === "not") return count(node.left) + count(node.right);
    return node.items.reduce((sum, item) => sum + count(item), 0);
  };
  return count(tree);
}
