/**
 * What SQLite's FTS5 sees of a text and a query, computed in TypeScript: the
 * tokens of its `unicode61` tokenizer (the words table) and of its
 * `trigram` tokenizer (the CJK table), and the tree of an FTS5 MATCH
 * expression. The PostgreSQL engine indexes and queries with them, and
 * `fts5_snippet.ts` cuts FTS5's snippets with them.
 *
 * @module
 */

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
export const TOKEN: RegExp = new RegExp(
  "[\\p{L}\\p{N}\\p{Co}\\p{Cn}\\u0300-\\u036f\\u{1AB0}-\\u{1AFF}\\u{1F321}-\\u{1F32C}\\u{1F336}" +
    "\\u{1F37D}\\u{1F394}-\\u{1F39F}\\u{1F3CB}-\\u{1F3CE}\\u{1F3D4}-\\u{1F3DF}\\u{1F3F1}-\\u{1F3FF}" +
    "\\u{1F43F}\\u{1F441}\\u{1F4F8}\\u{1F4FD}-\\u{1F4FF}\\u{1F53E}-\\u{1F53F}\\u{1F544}-\\u{1F54F}" +
    "\\u{1F568}-\\u{1F5FA}\\u{1F641}-\\u{1F644}\\u{1F650}-\\u{1F67F}\\u{1F6C6}-\\u{1F6FF}" +
    "\\u{1F774}-\\u{1F77F}\\u{1F780}-\\u{1FAFF}]+",
  "gu",
);
/** Noncharacters SQLite treats as separators although JavaScript calls them unassigned. */
export const NONCHARACTER: RegExp = /[\uFFFE\uFFFF]/g;
// deno-lint-ignore no-control-regex -- the ASCII range is the point
export const NON_ASCII: RegExp = /[^\x00-\x7f]/;
/** The same tokens in ASCII text: letters and digits. */
export const ASCII_TOKEN: RegExp = /[a-z0-9]+/gi;
/**
 * Longest term, in UTF-16 units: a longer token is indexed and queried by
 * its first 200 units (PostgreSQL refuses lexemes over 2046 bytes).
 */
export const MAX_TOKEN = 200;

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
 * Told each token of a text, in order: its folded term and where it is
 * (`start`, `end` as in {@linkcode Token}). Returning `false` stops the walk.
 */
export type TokenVisitor = (term: string, start: number, end: number) => boolean | void;

/**
 * Walks the tokens of `text` as FTS5's `unicode61` tokenizer splits it,
 * without keeping them: a long text (a tool's log of millions of words) is
 * read in memory of the size of one token.
 *
 * @param text Any text.
 * @param visit Told each token in order; `false` stops the walk.
 */
export function eachToken(text: string, visit: TokenVisitor): void {
  if (!NON_ASCII.test(text)) {
    // ASCII: the tokens are the runs of letters and digits, lower-cased.
    const words = new RegExp(ASCII_TOKEN);
    for (let match = words.exec(text); match !== null; match = words.exec(text)) {
      const word = match[0];
      const term = word.length > MAX_TOKEN ? word.slice(0, MAX_TOKEN) : word;
      if (visit(term.toLowerCase(), match.index, match.index + word.length) === false) return;
    }
    return;
  }
  const source = text.replace(NONCHARACTER, " ");
  const words = new RegExp(TOKEN);
  for (let match = words.exec(source); match !== null; match = words.exec(source)) {
    const term = foldToken(match[0]);
    if (term === "") continue;
    if (visit(term, match.index, match.index + match[0].length) === false) return;
  }
}

/**
 * The tokens of `text` as FTS5's `unicode61` tokenizer splits it.
 *
 * @param text Any text.
 * @returns The tokens in order.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  eachToken(text, (term, start, end) => void tokens.push({ term, start, end }));
  return tokens;
}

/**
 * Walks the tokens of `text` as FTS5's `trigram` tokenizer splits it (the
 * SQLite engine's CJK table), without keeping them: one for each character
 * that begins three, lower-cased, diacritics kept. A U+0000 is skipped as
 * that tokenizer skips it, and a trigram ends where the character after it
 * begins (or at the end).
 *
 * @param text Any text.
 * @param visit Told each trigram in order; `false` stops the walk.
 */
export function eachTrigram(text: string, visit: TokenVisitor): void {
  // Lower case of the whole text where that keeps every character's length (nearly always),
  // else character by character, keeping those whose lower case is longer.
  const whole = text.toLowerCase();
  const folded = whole.length === text.length ? whole : foldEach(text);
  const hasNul = text.includes("\u0000");
  const emit = (start: number, end: number) => {
    let term = folded.slice(start, end);
    if (hasNul && term.includes("\u0000")) term = term.replaceAll("\u0000", "");
    return visit(term, start, end);
  };
  // The starts of the last characters (not U+0000) read: a trigram is known when the
  // character after it begins.
  const recent: number[] = [];
  for (let at = 0; at < text.length;) {
    const unit = text.charCodeAt(at);
    if (unit !== 0) {
      recent.push(at);
      if (recent.length === 4) {
        if (emit(recent[0], recent[3]) === false) return;
        recent.shift();
      }
    }
    at += unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length ? 2 : 1;
  }
  if (recent.length === 3) emit(recent[0], text.length);
}

/**
 * The tokens of `text` as FTS5's `trigram` tokenizer splits it (see
 * {@linkcode eachTrigram}).
 *
 * @param text Any text.
 * @returns The trigrams in order; none for a text of fewer than three characters.
 */
export function trigramTokens(text: string): Token[] {
  const tokens: Token[] = [];
  eachTrigram(text, (term, start, end) => void tokens.push({ term, start, end }));
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

// ---------------------------------------------------------------------------
// FTS5 query syntax → an expression tree
// ---------------------------------------------------------------------------

/**
 * A parsed FTS5 query. A phrase is its text (a bareword, or a quoted
 * string unquoted), its prefix mark, and where it is written in the query
 * (`from`, up to `to`, its `*` included).
 */
export type QueryNode =
  | PhraseNode
  | { readonly kind: "and" | "or"; readonly items: readonly QueryNode[] }
  | { readonly kind: "seq"; readonly items: readonly QueryNode[] }
  | { readonly kind: "not"; readonly left: QueryNode; readonly right: QueryNode };

/** A phrase of a {@linkcode QueryNode}, as the lexer reads it. */
export interface PhraseNode {
  readonly kind: "phrase";
  readonly text: string;
  readonly prefix: boolean;
  readonly from: number;
  readonly to: number;
}

type Lexed = { readonly kind: "op"; readonly op: "AND" | "OR" | "NOT" } | PhraseNode;

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
      const from = i;
      i = j + 1;
      const prefix = query[i] === "*";
      if (prefix) i++;
      out.push({ kind: "phrase", text, prefix, from, to: i });
      continue;
    }
    let j = i;
    while (j < query.length && !SPACE.test(query[j]) && query[j] !== '"') {
      // A `*` ends a bareword in FTS5 (`here*docker` is `here* docker`).
      if (query[j++] === "*") break;
    }
    let word = query.slice(i, j);
    const from = i;
    i = j;
    if (word === "AND" || word === "OR" || word === "NOT") {
      out.push({ kind: "op", op: word });
      continue;
    }
    const prefix = word.endsWith("*");
    if (prefix) word = word.slice(0, -1);
    if (!BAREWORD.test(word)) throw new QuerySyntaxError(`syntax error near "${word}"`);
    out.push({ kind: "phrase", text: word, prefix, from, to: i });
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

/** Tokens a snippet shows, as the SQLite engine asks of FTS5 (`fts5_snippet.ts`). */
export const SNIPPET_TOKENS = 40;
