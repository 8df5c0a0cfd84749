/**
 * Full-text search terms for PostgreSQL, computed in TypeScript so they
 * match what SQLite's FTS5 sees:
 *
 * - words: the tokens of FTS5's `unicode61` tokenizer (runs of letters,
 *   digits and private-use characters, lower-cased, Latin diacritics
 *   removed), written as a `tsvector` literal with positions, queried with a
 *   `tsquery` built from the FTS5 query (phrases become `<->` chains,
 *   `word*` a `:*` prefix, AND/OR/NOT keep FTS5's precedence);
 * - CJK grams: every CJK character and every overlapping pair of each CJK
 *   run, so a CJK substring of any length is found through a GIN index (and
 *   then confirmed by an exact substring test).
 *
 * @module
 */
import { isCjkCodePoint } from "../core/search/cjk.ts";

// ---------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------

/**
 * Token characters of `unicode61` (measured against SQLite's tokenizer):
 * letters, digits, private use, the combining diacritics U+0300–U+036F
 * (then removed), and the code points SQLite's Unicode tables (of Unicode
 * 6.1) do not know: unassigned ones, and those assigned since that matter in
 * chat text — emoji and pictographs of Unicode 7 and later (skin tones, 🧑,
 * 🤔, 🛑…) and the extended combining marks. Other combining marks
 * (Devanagari vowel signs, variation selectors…) separate tokens, as there.
 */
const TOKEN = new RegExp(
  "[\\p{L}\\p{N}\\p{Co}\\p{Cn}\\u0300-\\u036f\\u{1AB0}-\\u{1AFF}\\u{1F321}-\\u{1F32C}\\u{1F336}" +
    "\\u{1F37D}\\u{1F394}-\\u{1F39F}\\u{1F3CB}-\\u{1F3CE}\\u{1F3D4}-\\u{1F3DF}\\u{1F3F1}-\\u{1F3FF}" +
    "\\u{1F43F}\\u{1F441}\\u{1F4F8}\\u{1F4FD}-\\u{1F4FF}\\u{1F53E}-\\u{1F53F}\\u{1F544}-\\u{1F54F}" +
    "\\u{1F568}-\\u{1F5FA}\\u{1F641}-\\u{1F644}\\u{1F650}-\\u{1F67F}\\u{1F6C6}-\\u{1F6FF}" +
    "\\u{1F774}-\\u{1F77F}\\u{1F780}-\\u{1FAFF}]+",
  "gu",
);
/** Noncharacters SQLite treats as separators although JavaScript calls them unassigned. */
const NONCHARACTER = /[\uFFFE\uFFFF]/g;
/** A quick test before the exact one: no character in the CJK blocks of `isCjkCodePoint`. */
const MAY_HOLD_CJK = /[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\ud840-\ud869]/;
/** The same tokens in ASCII text: letters and digits. */
const ASCII_TOKEN = /[a-z0-9]+/gi;
// deno-lint-ignore no-control-regex -- the ASCII range is the point
const NON_ASCII = /[^\x00-\x7f]/;
/**
 * Longest lexeme, in UTF-16 units (PostgreSQL refuses lexemes over 2046
 * bytes): a longer token is indexed and queried by its first 200 units.
 */
const MAX_TOKEN = 200;
/** PostgreSQL keeps positions up to 16383 and at most 256 per lexeme. */
const MAX_POSITION = 16383;
const MAX_POSITIONS = 256;
/** Stay clear of PostgreSQL's 1 MB tsvector limit. */
const MAX_VECTOR_CHARS = 600_000;

/** One token of a text: its folded form and where it is. */
export interface Token {
  /** Lower-cased, diacritics removed. */
  readonly term: string;
  /** Offset of its first UTF-16 unit. */
  readonly start: number;
  /** Offset just past it. */
  readonly end: number;
}

/**
 * Folds a token as `unicode61` does: lower case, Latin diacritics removed.
 *
 * @param text A token.
 * @returns Its folded form.
 */
export function foldToken(text: string): string {
  const lower = text.toLowerCase();
  let folded = lower;
  if (NON_ASCII.test(lower)) {
    // remove_diacritics=1: a Latin letter with one diacritic becomes the letter; a letter
    // with two (ǖ, ệ), or of another script (й, ά), stays; a lone diacritic goes.
    folded = "";
    for (const ch of lower) {
      const cp = ch.codePointAt(0)!;
      if (cp >= 0x300 && cp <= 0x36f) continue;
      if (cp < 0x80) {
        folded += ch;
        continue;
      }
      const parts = ch.normalize("NFD");
      const mark = parts.length === 2 ? parts.charCodeAt(1) : 0;
      folded += parts.length === 2 && parts.charCodeAt(0) < 0x80 && mark >= 0x300 && mark <= 0x36f
        ? parts[0]
        : ch;
    }
  }
  return folded.length > MAX_TOKEN ? folded.slice(0, MAX_TOKEN) : folded;
}

/**
 * The tokens of `text` as FTS5's `unicode61` tokenizer splits it.
 *
 * @param text Any text.
 * @returns The tokens in order.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const source = NON_ASCII.test(text) ? text.replace(NONCHARACTER, " ") : text;
  for (const match of source.matchAll(TOKEN)) {
    const term = foldToken(match[0]);
    if (term === "") continue;
    tokens.push({ term, start: match.index!, end: match.index! + match[0].length });
  }
  return tokens;
}

/**
 * The tokens of `text` as FTS5's `trigram` tokenizer splits it (the SQLite
 * engine's CJK table): one for each character that begins three, lower-cased,
 * diacritics kept. A U+0000 is skipped as that tokenizer skips it, and a
 * trigram ends where the character after it begins (or at the end).
 *
 * @param text Any text.
 * @returns The trigrams in order; none for a text of fewer than three characters.
 */
export function trigramTokens(text: string): Token[] {
  // Lower case of the whole text where that keeps every character's length (nearly always),
  // else character by character, keeping those whose lower case is longer.
  const whole = text.toLowerCase();
  const folded = whole.length === text.length ? whole : foldEach(text);
  const starts: number[] = [];
  for (let at = 0; at < text.length;) {
    const unit = text.charCodeAt(at);
    if (unit !== 0) starts.push(at);
    at += unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length ? 2 : 1;
  }
  const tokens: Token[] = [];
  const hasNul = starts.length < text.length && text.includes("\u0000");
  for (let k = 0; k + 2 < starts.length; k++) {
    const end = k + 3 < starts.length ? starts[k + 3] : text.length;
    let term = folded.slice(starts[k], end);
    if (hasNul && term.includes("\u0000")) term = term.replaceAll("\u0000", "");
    tokens.push({ term, start: starts[k], end });
  }
  return tokens;
}

/** `text` lower-cased character by character, each one that would change length kept as it is. */
function foldEach(text: string): string {
  let out = "";
  for (const ch of text) {
    const lower = ch.toLowerCase();
    out += lower.length === ch.length ? lower : ch;
  }
  return out;
}

/**
 * Quotes a lexeme for a `tsvector` or `tsquery` literal.
 *
 * @param lexeme The lexeme.
 * @returns `'lexeme'` with `'` and `\` escaped.
 */
export function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/**
 * The `tsvector` literal of the words of `text`, with positions.
 *
 * @param text The searchable text of a message.
 * @returns The literal, to bind as `$n::tsvector`.
 */
export function wordsVector(text: string): string {
  // Tokens hold only letters, digits and marks: a lexeme never needs quote escaping.
  const ascii = !NON_ASCII.test(text);
  const lower = ascii ? text.toLowerCase() : text.replace(NONCHARACTER, " ");
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const token of lower.match(ascii ? ASCII_TOKEN : TOKEN) ?? []) {
    position++;
    let term = token;
    if (!ascii) term = foldToken(term);
    else if (term.length > MAX_TOKEN) term = term.slice(0, MAX_TOKEN);
    if (term === "") continue;
    const list = positions.get(term);
    const at = position > MAX_POSITION ? MAX_POSITION : position;
    if (list === undefined) positions.set(term, [at]);
    else if (list.length < MAX_POSITIONS && list[list.length - 1] !== at) list.push(at);
  }
  let out = "";
  for (const [term, list] of positions) {
    const part = `'${term}':${list.join(",")}`;
    if (out.length + part.length + 1 > MAX_VECTOR_CHARS) break;
    out += out === "" ? part : " " + part;
  }
  return out;
}

/**
 * The CJK grams of `text`: each CJK character and each overlapping pair
 * within a run of CJK characters.
 *
 * @param text Any text.
 * @returns The distinct grams.
 */
export function cjkGrams(text: string): string[] {
  if (!MAY_HOLD_CJK.test(text)) return [];
  const grams = new Set<string>();
  let previous = "";
  for (const ch of text) {
    if (isCjkCodePoint(ch.codePointAt(0)!)) {
      grams.add(ch);
      if (previous !== "") grams.add(previous + ch);
      previous = ch;
    } else {
      previous = "";
    }
  }
  return [...grams];
}

/**
 * The `tsvector` literal of the CJK grams of `text`.
 *
 * @param text The searchable text of a message.
 * @returns The literal, to bind as `$n::tsvector`.
 */
export function gramsVector(text: string): string {
  const parts: string[] = [];
  let size = 0;
  for (const gram of cjkGrams(text)) {
    const part = quoteLexeme(gram);
    size += part.length + 1;
    if (size > MAX_VECTOR_CHARS) break;
    parts.push(part);
  }
  return parts.join(" ");
}

/**
 * The text the search sees for one message, as SQLite's FTS triggers build it.
 *
 * @param content Stored content.
 * @param toolName Stored tool name.
 * @param toolCalls Stored tool calls (JSON text).
 * @returns `content ‖ ' ' ‖ tool_name ‖ ' ' ‖ tool_calls`, NULLs as empty.
 */
export function searchDocument(
  content: string | null,
  toolName: string | null,
  toolCalls: string | null,
): string {
  return `${content ?? ""} ${toolName ?? ""} ${toolCalls ?? ""}`;
}

// ---------------------------------------------------------------------------
// FTS5 query syntax → an expression tree
// ---------------------------------------------------------------------------

/** A parsed FTS5 query. A phrase is a list of raw pieces (each a bareword or quoted string). */
export type QueryNode =
  | { readonly kind: "phrase"; readonly text: string; readonly prefix: boolean }
  | { readonly kind: "and" | "or"; readonly items: readonly QueryNode[] }
  | { readonly kind: "seq"; readonly items: readonly QueryNode[] }
  | { readonly kind: "not"; readonly left: QueryNode; readonly right: QueryNode };

type Lexed =
  | { readonly kind: "op"; readonly op: "AND" | "OR" | "NOT" }
  | { readonly kind: "phrase"; readonly text: string; readonly prefix: boolean };

const SPACE = /\s/u;
// deno-lint-ignore no-control-regex -- FTS5 allows U+001A in barewords
const BAREWORD = /^[\p{L}\p{N}_\u001a\u0080-\u{10ffff}]+$/u;

/** Thrown (internally) where FTS5 reports a syntax error. */
class QuerySyntaxError extends Error {}

function lex(query: string): Lexed[] {
  const out: Lexed[] = [];
  let i = 0;
  while (i < query.length) {
    const ch = query[i];
    if (SPACE.test(ch)) {
      i++;
      continue;
    }
    if (ch === '"') {
      let text = "";
      let j = i + 1;
      for (;;) {
        if (j >= query.length) throw new QuerySyntaxError("unterminated string");
        if (query[j] === '"') {
          if (query[j + 1] === '"') {
            text += '"';
            j += 2;
            continue;
          }
          break;
        }
        text += query[j++];
      }
      i = j + 1;
      const prefix = query[i] === "*";
      if (prefix) i++;
      out.push({ kind: "phrase", text, prefix });
      continue;
    }
    let j = i;
    while (j < query.length && !SPACE.test(query[j]) && query[j] !== '"') j++;
    let word = query.slice(i, j);
    i = j;
    if (word === "AND" || word === "OR" || word === "NOT") {
      out.push({ kind: "op", op: word });
      continue;
    }
    const prefix = word.endsWith("*");
    if (prefix) word = word.slice(0, -1);
    if (!BAREWORD.test(word)) throw new QuerySyntaxError(`syntax error near "${word}"`);
    out.push({ kind: "phrase", text: word, prefix });
  }
  return out;
}

/**
 * Parses an FTS5 query with FTS5's precedence: juxtaposition, then NOT,
 * then AND, then OR.
 *
 * @param query An FTS5 MATCH expression (already sanitized).
 * @returns The tree, or `undefined` where FTS5 reports a syntax error.
 */
export function parseFtsQuery(query: string): QueryNode | undefined {
  let items: Lexed[];
  try {
    items = lex(query);
  } catch (error) {
    if (error instanceof QuerySyntaxError) return undefined;
    throw error;
  }
  let at = 0;
  const peekOp = () => {
    const item = items[at];
    return item?.kind === "op" ? item.op : undefined;
  };
  const seq = (): QueryNode => {
    const phrases: QueryNode[] = [];
    while (at < items.length && items[at].kind === "phrase") {
      phrases.push(items[at++] as QueryNode);
    }
    if (phrases.length === 0) throw new QuerySyntaxError("expected a phrase");
    return phrases.length === 1 ? phrases[0] : { kind: "seq", items: phrases };
  };
  const not = (): QueryNode => {
    let left = seq();
    while (peekOp() === "NOT") {
      at++;
      left = { kind: "not", left, right: seq() };
    }
    return left;
  };
  const and = (): QueryNode => {
    const list = [not()];
    while (peekOp() === "AND") {
      at++;
      list.push(not());
    }
    return list.length === 1 ? list[0] : { kind: "and", items: list };
  };
  const or = (): QueryNode => {
    const list = [and()];
    while (peekOp() === "OR") {
      at++;
      list.push(and());
    }
    return list.length === 1 ? list[0] : { kind: "or", items: list };
  };
  try {
    const tree = or();
    if (at !== items.length) return undefined;
    return tree;
  } catch (error) {
    if (error instanceof QuerySyntaxError) return undefined;
    throw error;
  }
}

/** An expression that is nothing (matches no row). */
const NONE = Symbol("none");
/** An expression that is dropped (an empty phrase beside others). */
const DROPPED = Symbol("dropped");
type Built = string | typeof NONE | typeof DROPPED;

function combine(
  node: QueryNode,
  leaf: (phrase: { text: string; prefix: boolean }) => Built,
  ops: { and: string; or: string; not: (l: string, r: string) => string },
): Built {
  switch (node.kind) {
    case "phrase":
      return leaf(node);
    case "seq": {
      const parts = node.items.map((item) => combine(item, leaf, ops));
      if (parts.includes(NONE)) return NONE;
      const kept = parts.filter((p): p is string => typeof p === "string");
      if (kept.length === 0) return NONE;
      return kept.length === 1 ? kept[0] : `(${kept.join(ops.and)})`;
    }
    case "and": {
      const parts = node.items.map((item) => combine(item, leaf, ops));
      if (parts.some((p) => p === NONE || p === DROPPED)) return NONE;
      return `(${(parts as string[]).join(ops.and)})`;
    }
    case "or": {
      const kept = node.items.map((item) => combine(item, leaf, ops))
        .filter((p): p is string => typeof p === "string");
      if (kept.length === 0) return NONE;
      return kept.length === 1 ? kept[0] : `(${kept.join(ops.or)})`;
    }
    case "not": {
      const left = combine(node.left, leaf, ops);
      if (typeof left !== "string") return NONE;
      const right = combine(node.right, leaf, ops);
      if (typeof right !== "string") return left;
      return ops.not(left, right);
    }
  }
}

/**
 * The `tsquery` literal of an FTS5 word query (for the `search_words` vector).
 *
 * @param query A sanitized FTS5 query.
 * @returns The literal; `null` when it matches nothing; `undefined` when FTS5 would reject it.
 */
export function wordsQuery(query: string): string | null | undefined {
  const tree = parseFtsQuery(query);
  if (tree === undefined) return undefined;
  const built = combine(tree, (phrase) => {
    const terms = tokenize(phrase.text).map((t) => t.term);
    if (terms.length === 0) return DROPPED;
    const quoted = terms.map(quoteLexeme);
    if (phrase.prefix) quoted[quoted.length - 1] += ":*";
    return quoted.length === 1 ? quoted[0] : `(${quoted.join(" <-> ")})`;
  }, { and: " & ", or: " | ", not: (l, r) => `(${l} & !${r})` });
  return typeof built === "string" ? built : null;
}

/** A substring condition for the trigram query: SQL with `$n` markers and its parameters. */
export interface SubstringSql {
  /** A boolean SQL expression. */
  readonly sql: string;
  /** Its parameters, starting at the `first` given. */
  readonly params: string[];
}

/**
 * The searchable text of a message as SQLite's FTS triggers build it: the
 * columns joined by a space, a NULL one as empty.
 *
 * @param columns The SQL of the columns.
 * @returns The SQL of the joined text.
 */
export function documentOf(columns: readonly string[]): string {
  return `(${columns.map((column) => `coalesce(${column}, '')`).join(" || ' ' || ")})`;
}

/**
 * Translates an FTS5 query of the trigram table into SQL: each phrase is a
 * case-insensitive substring of the searchable text (one shorter than three
 * characters matches nothing, as in FTS5:
 * dropped beside other phrases, false under AND), with the phrase's CJK grams as an
 * indexed pre-filter.
 *
 * @param query The FTS5 query of the trigram table.
 * @param first Number of the first `$n` parameter.
 * @param columns The SQL of the searchable columns, in the order the document joins them.
 * @param pattern Turns a phrase into its LIKE pattern.
 * @returns The SQL; `null` when it matches nothing; `undefined` when FTS5 would reject it.
 */
export function trigramSql(
  query: string,
  first: number,
  columns: readonly string[],
  pattern: (text: string) => string,
): SubstringSql | null | undefined {
  const tree = parseFtsQuery(query);
  if (tree === undefined) return undefined;
  const params: string[] = [];
  const built = combine(tree, (phrase) => {
    if ([...phrase.text].length < 3) return DROPPED;
    return substringCondition(phrase.text, first, columns, pattern, params);
  }, { and: " AND ", or: " OR ", not: (l, r) => `(${l} AND NOT ${r})` });
  return typeof built === "string" ? { sql: built, params } : null;
}

/**
 * One "contains `text`" condition, with its CJK grams (when it has any) as
 * an indexed pre-filter.
 *
 * @param text The substring.
 * @param first Number of the first `$n` parameter.
 * @param columns The SQL of the columns to look in, in the order the document joins them.
 * @param pattern Turns the text into its LIKE pattern.
 * @param params Where the condition's parameters are appended.
 * @returns The SQL.
 */
export function substringCondition(
  text: string,
  first: number,
  columns: readonly string[],
  pattern: (text: string) => string,
  params: string[],
): string {
  // A text without cased letters (CJK, digits, symbols) matches exactly what it matches
  // case-insensitively: strpos, much cheaper than ILIKE on multibyte text.
  const uncased = text.toLowerCase() === text && text.toUpperCase() === text;
  params.push(uncased ? text : pattern(text));
  const at = `$${first + params.length - 1}`;
  const contains = (haystack: string) =>
    uncased ? `strpos(${haystack}, ${at}) > 0` : `${haystack} ILIKE ${at}`;
  // Without a space the text cannot straddle two columns: each is searched where it lies,
  // without building the joined document (a NULL column contains nothing).
  const like = text.includes(" ")
    ? contains(documentOf(columns))
    : `coalesce(${columns.map(contains).join(" OR ")}, false)`;
  const grams = gramsQuery(text);
  if (grams === undefined) return like;
  params.push(grams);
  return `(m.search_grams @@ $${first + params.length - 1}::tsquery AND ${like})`;
}

/**
 * The `tsquery` of the CJK grams every text containing `text` has: its
 * bigrams, or its characters when it has no two CJK characters in a row.
 *
 * @param text A substring.
 * @returns The query, or `undefined` when `text` has no CJK character.
 */
export function gramsQuery(text: string): string | undefined {
  const grams = cjkGrams(text);
  const pairs = grams.filter((g) => [...g].length === 2);
  const lexemes = pairs.length > 0 ? pairs : grams;
  return lexemes.length === 0 ? undefined : lexemes.map(quoteLexeme).join(" & ");
}

// ---------------------------------------------------------------------------
// Snippets
// ---------------------------------------------------------------------------

/** Tokens a snippet shows, as the SQLite engine asks of FTS5 (`fts_snippet.ts`). */
export const SNIPPET_TOKENS = 40;
