/**
 * Deciding how a query is searched, for every engine: by the word index
 * (ranked), by the trigram index (CJK text), or by substring. Pure and
 * engine-neutral: the plan names an index, not a table, and each engine
 * compiles it (the SQLite engine to an FTS5 `MATCH` on its table, the
 * PostgreSQL engine to a `tsquery` or a trigram query), so every routing
 * rule is unit-testable without a database.
 *
 * The routing is Python's (SPEC §5), plus the documented improvements of
 * `docs/search_improvements.md`, each of which only changes a case where the
 * Python Hermes returns nothing.
 *
 * @module
 */
import { countSubstringScript } from "./cjk.ts";
import {
  type Condition,
  isConjunction,
  parseCondition,
  positiveWords,
  type QueryWord,
  quotePhrase,
  trigramMatchable,
  trigramSuperset,
} from "./condition.ts";
import { sanitizeFts5Query } from "./sanitize.ts";
import { withoutRepeatedPhrases } from "./repeated_phrases.ts";
import { PYTHON_WHITESPACE, pythonSplit, pythonStrip, pythonStripChar } from "../python_text.ts";

/** The index a ranked search reads: words (unicode61) or trigrams (CJK text). */
export type SearchIndex = "words" | "trigram";

/** A plan that matches by substring (content, tool name or tool calls). */
export type SubstringPlan = Extract<SearchPlan, { readonly kind: "substring" }>;

/** How one query is searched. */
export type SearchPlan =
  | { readonly kind: "nothing" }
  | {
    readonly kind: "ranked";
    /** Which index answers: the word index (unicode61 words) or the trigram index. */
    readonly index: SearchIndex;
    /**
     * What the index is asked, in the search syntax the user types (the
     * sanitized query, less the phrases it repeats under AND or OR): words,
     * `"…"` phrases, a trailing `*` for a prefix, upper-case `AND`/`OR`/`NOT`. The SQLite engine hands it to FTS5's
     * `MATCH`, whose syntax it is; the PostgreSQL engine reads it into its own query.
     */
    readonly expression: string;
    /** The same query with every word quoted as a phrase, to try when `expression` is rejected, if any. */
    readonly retry: string | undefined;
    /**
     * What every hit must also satisfy by substring (content, tool name or
     * tool calls), when the index alone cannot tell; `null` when it can.
     */
    readonly check: Condition | null;
  }
  | {
    readonly kind: "substring";
    /** What a hit contains (content, tool name or tool calls). */
    readonly condition: Condition;
  };

const OPERATORS = new Set(["AND", "OR", "NOT"]);
const SPACE = new RegExp(`[${PYTHON_WHITESPACE}]`, "u");
/**
 * Letters, numbers and private use, and the combining marks the unicode61
 * tokenizer keeps in a word (fts5_text.ts's TOKEN): other marks, the emoji
 * variation selector U+FE0F among them, separate words there, so `❤️` is a
 * word of symbols only.
 */
const WORD_CHARACTER = /[\p{L}\p{N}\p{Co}\u0300-\u036f\u{1AB0}-\u{1AFF}]/u;
// deno-lint-ignore no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;

/** One word of a sanitized query. */
interface Token {
  /** The text, quotes removed. */
  readonly text: string;
  /** True when some of it was inside `"…"`. */
  readonly quoted: boolean;
  /** True when its last part was outside quotes and ended in `*`. */
  readonly prefix: boolean;
}

/**
 * Whether the token is an operator: in a query with CJK text, AND, OR or
 * NOT in any case (Python's test there); elsewhere in upper case only, as
 * FTS5 reads them (`not working` is two words).
 */
function isOperator(word: string, anyCase: boolean): boolean {
  return OPERATORS.has(anyCase ? word.toUpperCase() : word);
}

/**
 * The words of a sanitized query, where a `"…"` phrase stays one word (the
 * sanitizer's output has balanced quotes) and adjacent pieces join.
 */
function quoteAwareTokens(query: string): Token[] {
  const tokens: Token[] = [];
  let text = "";
  let quoted = false;
  let prefix = false;
  let started = false;
  const flush = () => {
    if (started) tokens.push({ text, quoted, prefix });
    text = "";
    quoted = false;
    prefix = false;
    started = false;
  };
  let i = 0;
  while (i < query.length) {
    const ch = query[i];
    if (ch === '"') {
      const end = query.indexOf('"', i + 1);
      const stop = end === -1 ? query.length : end;
      text += query.slice(i + 1, stop);
      quoted = true;
      prefix = false;
      started = true;
      i = stop + 1;
    } else if (SPACE.test(ch)) {
      flush();
      i++;
    } else {
      text += ch;
      prefix = ch === "*";
      started = true;
      i++;
    }
  }
  flush();
  return tokens;
}

/**
 * The unicode61 query with every word quoted as a phrase, FTS5's own
 * (upper-case) operators kept, and a trailing `*` kept as a prefix marker:
 * `foo:bar` → `"foo:bar"`, `"e.g".` → `"e.g."`.
 */
function quotedFtsQuery(tokens: readonly Token[]): string {
  return tokens.map((token) => {
    if (!token.quoted && OPERATORS.has(token.text)) return token.text;
    if (token.prefix) return `${quotePhrase(token.text.replace(/\*+$/, ""))}*`;
    return quotePhrase(token.text);
  }).join(" ");
}

/** The words of a query that are not FTS5 operators. */
function nonOperatorWords(tokens: readonly Token[]): string[] {
  return tokens.filter((t) => t.quoted || !OPERATORS.has(t.text)).map((t) => t.text);
}

/**
 * The marks of an emoji written with a letter or digit: the emoji variation
 * selector, and the keycap that makes `1️⃣` of `1` (unicode61 drops both, so
 * the word index reads `1️⃣` as `1`).
 */
const EMOJI_MARK = /[\uFE0F\u20E3]/u;

/**
 * True when the word is not ASCII and holds no letter or digit (an emoji,
 * an arrow), or is written as an emoji (`1️⃣`, `#️⃣`).
 */
function isSymbolWord(word: string): boolean {
  return NON_ASCII.test(word) && (!WORD_CHARACTER.test(word) || EMOJI_MARK.test(word));
}

/** A word for substring matching: a prefix star says nothing more than a substring does. */
function substringWord(text: string, prefix: boolean): string {
  return prefix ? text.replace(/\*+$/, "") : text;
}

/**
 * The words of a query read quote by quote. An empty phrase `""` would
 * match everything by substring: it is dropped with the operator that joins
 * it (`记忆 OR "" OR 断裂` reads as `记忆 OR 断裂`).
 */
function tokenWords(query: string, cjk: boolean): QueryWord[] {
  const words: (QueryWord | undefined)[] = quoteAwareTokens(query).map((t) => {
    const operator = !t.quoted && isOperator(t.text, cjk);
    const text = operator ? t.text.toUpperCase() : substringWord(t.text, t.prefix);
    return text === "" ? undefined : { text, operator };
  });
  const out: QueryWord[] = [];
  for (const [i, word] of words.entries()) {
    if (word !== undefined) out.push(word);
    else if (out.at(-1)?.operator) out.pop();
    else if (words[i + 1]?.operator) words[i + 1] = undefined;
  }
  return out;
}

/** The words of a CJK query, with their operators in upper case. */
function cjkWords(query: string, raw: string): QueryWord[] {
  if (query.includes('"')) {
    // Improvement: Python strips the outer quotes and splits the rest, so
    // `"记忆 docker"` is two words, and the quotes of `"chat-send" 記録`
    // stay inside the words, where the trigram index reads them as literal
    // characters. Here a phrase is one word, as on the other paths.
    return tokenWords(query, true);
  }
  return pythonSplit(raw).flatMap((word): QueryWord[] => {
    if (isOperator(word, true)) return [{ text: word.toUpperCase(), operator: true }];
    const text = substringWord(word, true);
    return text === "" ? [] : [{ text, operator: false }];
  });
}

function trigramPlan(expression: string, check: Condition | null): SearchPlan {
  return {
    kind: "ranked",
    index: "trigram",
    expression: withoutRepeatedPhrases(expression, "trigram"),
    retry: undefined,
    check,
  };
}

function planCjk(query: string): SearchPlan {
  const raw = pythonStrip(pythonStripChar(query, '"'));
  const words = cjkWords(query, raw);
  const condition = parseCondition(words);
  if (condition === undefined) return { kind: "nothing" };
  // Improvement: Python matches any one word below three CJK characters;
  // here the operators mean what they mean on every other path.
  if (countSubstringScript(raw) < 3) return { kind: "substring", condition };
  const terms = words.filter((w) => !w.operator).map((w) => w.text);
  if (terms.every(trigramMatchable)) {
    return trigramPlan(words.map((w) => w.operator ? w.text : quotePhrase(w.text)).join(" "), null);
  }
  // Improvement: the trigram index cannot see words shorter than three
  // characters (Python drops them from an AND, and finds nothing for an OR
  // of them). Hits are ranked by the longer words and checked by substring;
  // where some alternative has no longer word, the search is by substring.
  const superset = trigramSuperset(condition);
  if (superset === undefined) return { kind: "substring", condition };
  if (isConjunction(condition)) {
    const short = condition[0].all.filter((w) => !trigramMatchable(w));
    return trigramPlan(superset, [{ all: short, none: [] }]);
  }
  return trigramPlan(superset, condition);
}

/** Which indexes the store has (an older SQLite file read as it is may lack one). */
export interface SearchTables {
  /**
   * The word index exists.
   * @default {true}
   */
  readonly fts?: boolean;
  /**
   * The trigram index exists (a SQLite file older than v10 lacks it).
   * @default {true}
   */
  readonly trigram?: boolean;
}

/**
 * The substring plan of a query, for a file without the index its plan
 * needs (`cjk`: the query has CJK text, its operators read in any case).
 */
function substringFallback(query: string, cjk: boolean): SearchPlan {
  const condition = parseCondition(tokenWords(query, cjk));
  return condition === undefined ? { kind: "nothing" } : { kind: "substring", condition };
}

/**
 * Decides how `query` is searched.
 *
 * @param query What the user typed.
 * @param tables Which full-text tables exist; a query whose index is
 *   missing is searched by substring instead, its words and operators read
 *   the same way.
 * @returns The plan; `{ kind: "nothing" }` when no search can match.
 */
export function planSearch(query: string, tables: SearchTables = {}): SearchPlan {
  if (typeof query !== "string") return { kind: "nothing" };
  // Improvement: FTS5 and LIKE read a query up to its first NUL, so `\0数据` matched every
  // message and `docker\0compose` every docker. A NUL separates words, as in a text.
  const text = query.includes("\u0000") ? query.replaceAll("\u0000", " ") : query;
  if (pythonStrip(text) === "") return { kind: "nothing" };
  const sanitized = sanitizeFts5Query(text);
  if (sanitized === "") return { kind: "nothing" };
  if (countSubstringScript(sanitized) > 0) {
    const plan = planCjk(sanitized);
    if (plan.kind !== "ranked" || tables.trigram !== false) return plan;
    return substringFallback(sanitized, true);
  }
  if (tables.fts === false) return substringFallback(sanitized, false);
  const tokens = quoteAwareTokens(sanitized);
  if (nonOperatorWords(tokens).some((word) => pythonSplit(word).some(isSymbolWord))) {
    // Improvement: unicode61 drops emoji and other symbols entirely, so
    // `🚀` finds nothing and `docker 🚀` finds every docker. Such a query is
    // matched by substring, every word as it is written.
    const condition = parseCondition(tokenWords(sanitized, false));
    return condition === undefined ? { kind: "nothing" } : { kind: "substring", condition };
  }
  // A phrase repeated under AND or OR matches what it matches once, and costs FTS5's snippet()
  // the square of the repeats (repeated_phrases.ts).
  const expression = withoutRepeatedPhrases(sanitized, "words");
  const retry = withoutRepeatedPhrases(quotedFtsQuery(tokens), "words");
  return {
    kind: "ranked",
    index: "words",
    expression,
    retry: retry === expression ? undefined : retry,
    check: null,
  };
}

/**
 * What a words query is searched by when the word index finds nothing for
 * it: the same words by substring, read as on every substring path. The
 * word index keeps a message's words as the unicode61 tokenizer cuts them,
 * so a Latin word written against CJK text (`用docker部署`,
 * `kubernetesのクラスタ`) or inside a longer word (`Datenbank` in
 * `Datenbankverbindung`) is no word of it, and Python finds nothing; here
 * such a query still finds those messages. Only where every alternative has
 * a word of three or more characters, which the trigram index can find
 * without reading every message, and for at most
 * {@linkcode FALLBACK_WORDS_MAX} words.
 *
 * @param query What the user typed.
 * @returns The substring plan, or `undefined` when the query is not a words
 *   query or some alternative has only shorter words.
 *
 * @example
 * ```ts
 * import { wordsFallback } from "./plan.ts";
 * console.assert(wordsFallback("docker")?.kind === "substring");
 * console.assert(wordsFallback("go") === undefined);
 * console.assert(wordsFallback("部署") === undefined);
 * const pasted = Array.from({ length: 65 }, (_, i) => `word${i}`).join(" ");
 * console.assert(wordsFallback(pasted) === undefined);
 * ```
 */
export function wordsFallback(query: string): SubstringPlan | undefined {
  const plan = planSearch(query);
  if (plan.kind !== "ranked" || plan.index !== "words") return undefined;
  const substring = planSearch(query, { fts: false, trigram: false });
  if (substring.kind !== "substring") return undefined;
  const words = substring.condition.flatMap((clause) => [...clause.all, ...clause.none.flat()]);
  if (words.length > FALLBACK_WORDS_MAX) return undefined;
  return trigramSuperset(substring.condition) === undefined ? undefined : substring;
}

/**
 * The most words {@linkcode wordsFallback} searches again: a query of
 * thousands of words (pasted text) that the word index answers with nothing
 * costs a substring search seconds to minutes on PostgreSQL, and finds
 * nothing more.
 */
export const FALLBACK_WORDS_MAX = 64;

/**
 * The words a hit of `query` may be found by that its snippet does not
 * mark with `>>>…<<<` (substring matches), for a caller that highlights
 * them itself.
 *
 * @param query What the user typed.
 * @param tables Which indexes the search could use: without them, every
 *   positive word is matched by substring (a stale or missing index).
 * @returns The words, in query order; empty when the index marks every match.
 *
 * @example
 * ```ts
 * import { unmarkedWords } from "./plan.ts";
 * console.assert(unmarkedWords("记忆 OR docker").join() === "记忆,docker");
 * console.assert(unmarkedWords("docker").length === 0);
 * console.assert(unmarkedWords("docker", { fts: false }).join() === "docker");
 * ```
 */
export function unmarkedWords(query: string, tables: SearchTables = {}): string[] {
  const plan = planSearch(query, tables);
  if (plan.kind === "substring") return positiveWords(plan.condition);
  if (plan.kind === "ranked" && plan.check !== null) return positiveWords(plan.check);
  return [];
}
