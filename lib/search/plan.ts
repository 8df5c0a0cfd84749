/**
 * Deciding how a query is searched: the unicode61 index ranked by bm25, the
 * trigram index for CJK text, or substring `LIKE` matching. Pure: no SQL runs
 * here, so every routing rule is unit-testable.
 *
 * The routing is Python's (SPEC §5), plus the documented improvements of
 * `docs/search_improvements.md`, each of which only changes a case where the
 * Python Hermes returns nothing.
 *
 * @module
 */
import { countCjk } from "./cjk.ts";
import { sanitizeFts5Query } from "./sanitize.ts";
import {
  codePointLength,
  PYTHON_WHITESPACE,
  pythonSplit,
  pythonStrip,
  pythonStripChar,
} from "../python_text.ts";

/** How one query is searched. */
export type SearchPlan =
  | { readonly kind: "nothing" }
  | {
    readonly kind: "ranked";
    /** Which FTS5 table. */
    readonly table: "messages_fts" | "messages_fts_trigram";
    /** The MATCH expression. */
    readonly match: string;
    /** A MATCH expression to try when FTS5 rejects `match`, if any. */
    readonly retry: string | undefined;
    /** Substrings every hit must also contain (content, tool name or tool calls). */
    readonly required: readonly string[];
  }
  | {
    readonly kind: "substring";
    /** A hit contains at least one of these (content, tool name or tool calls). */
    readonly terms: readonly string[];
    /** When true, a hit must contain every term. */
    readonly all: boolean;
  };

const OPERATORS = new Set(["AND", "OR", "NOT"]);
const SPACE = new RegExp(`[${PYTHON_WHITESPACE}]`, "u");
/** What the unicode61 tokenizer keeps as part of a word (letters, numbers, private use, marks). */
const WORD_CHARACTER = /[\p{L}\p{N}\p{Co}\p{Mn}]/u;
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

/** Python's test: the token is AND, OR or NOT in any case. */
function isOperator(word: string): boolean {
  return OPERATORS.has(word.toUpperCase());
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

function quotePhrase(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
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

/** True when no word holds a letter or digit, and some word is not ASCII. */
function onlySymbols(words: readonly string[]): boolean {
  return words.some((w) => NON_ASCII.test(w)) && !words.some((w) => WORD_CHARACTER.test(w));
}

/** The words of a CJK query and whether the quote-aware reading replaced Python's. */
function cjkWords(query: string, raw: string): { words: string[]; operators: boolean[] } {
  const python = pythonSplit(raw);
  if (!python.some((w) => w.includes('"'))) {
    return { words: python, operators: python.map(isOperator) };
  }
  // Improvement: Python's split leaves the quotes of `"chat-send"` inside the
  // words, where the trigram index reads them as literal characters. An
  // empty phrase `""` would match everything by substring: it is dropped.
  const tokens = quoteAwareTokens(query).filter((t) => t.text !== "");
  return {
    words: tokens.map((t) => t.text),
    operators: tokens.map((t) => !t.quoted && isOperator(t.text)),
  };
}

function planCjk(query: string): SearchPlan {
  const raw = pythonStrip(pythonStripChar(query, '"'));
  const { words, operators } = cjkWords(query, raw);
  const terms = words.filter((_, i) => !operators[i]);
  const likeTerms = terms.length > 0 ? terms : [raw];
  if (countCjk(raw) < 3) return { kind: "substring", terms: likeTerms, all: false };
  const match = words.map((w, i) => operators[i] ? w : quotePhrase(w)).join(" ");
  const short = terms.filter((t) => codePointLength(t) < 3);
  if (short.length === 0) {
    return { kind: "ranked", table: "messages_fts_trigram", match, retry: undefined, required: [] };
  }
  // Improvement: the trigram index cannot see words shorter than three
  // characters, so Python drops them from an AND and finds nothing for an
  // OR of them. Without OR/NOT, every word must be present: ranked by the
  // longer words, the short ones checked by substring. With OR/NOT, any word
  // will do, by substring, as Python matches below three CJK characters.
  const conjunction = !words.some((w, i) => operators[i] && w.toUpperCase() !== "AND");
  if (conjunction && short.length < terms.length) {
    return {
      kind: "ranked",
      table: "messages_fts_trigram",
      match,
      retry: undefined,
      required: short,
    };
  }
  return { kind: "substring", terms: likeTerms, all: conjunction };
}

/**
 * Decides how `query` is searched.
 *
 * @param query What the user typed.
 * @returns The plan; `{ kind: "nothing" }` when no search can match.
 */
export function planSearch(query: string): SearchPlan {
  if (typeof query !== "string" || pythonStrip(query) === "") return { kind: "nothing" };
  const sanitized = sanitizeFts5Query(query);
  if (sanitized === "") return { kind: "nothing" };
  if (countCjk(sanitized) > 0) return planCjk(sanitized);
  const tokens = quoteAwareTokens(sanitized);
  const words = nonOperatorWords(tokens);
  if (onlySymbols(words)) {
    // Improvement: unicode61 drops emoji and other symbols entirely.
    return { kind: "substring", terms: words.filter((w) => w !== ""), all: false };
  }
  const retry = quotedFtsQuery(tokens);
  return {
    kind: "ranked",
    table: "messages_fts",
    match: sanitized,
    retry: retry === sanitized ? undefined : retry,
    required: [],
  };
}
