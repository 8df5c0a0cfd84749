/**
 * What SQLite's FTS5 sees of a text and a query, computed in TypeScript: the
 * tokens of its `unicode61` tokenizer (the words table) and of its
 * `trigram` tokenizer (the CJK table), and the tree of an FTS5 MATCH
 * expression. The PostgreSQL engine indexes and queries with them, and
 * `fts5_snippet.ts` cuts FTS5's snippets with them.
 *
 * @module
 */
import { TRIGRAM_FOLDS, WORD_CHARACTERS, WORD_FOLDS } from "./_unicode61_data.ts";

// ---------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------

/**
 * Token characters of `unicode61`, as Hermes's `messages_fts` is made
 * (`remove_diacritics 1`): measured on SQLite's own tokenizer for every
 * code point (`_unicode61_data.ts`, written by `scripts/unicode61_data.ts`).
 * They are the letters, digits and private use of SQLite's Unicode tables
 * (of Unicode 6.1), the diacritics it removes (25 of U+0300–U+0331, not
 * U+0305 or U+0332…: within a token only, never its first character), and
 * every code point those tables do not know:
 * unassigned ones, and those assigned since (emoji of Unicode 7 and later,
 * ₽, ⏴…). Other marks and symbols (variation selectors, ❤, ₿ aside…)
 * separate tokens, as there; so do lone surrogates.
 */
export const TOKEN: RegExp = new RegExp(
  `[${wordCharacterClass(removedDiacritics())}][${wordCharacterClass()}]*`,
  "gu",
);
/**
 * Noncharacters SQLite treats as separators although JavaScript calls them
 * unassigned ({@linkcode TOKEN} leaves them out too).
 */
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
  /**
   * Folded as the tokenizer folds it: case folded (Unicode 6.1's simple
   * case folding: `Σ` and `ς` to `σ`, `µ` to `μ`, `ſ` to `s`), and for
   * `unicode61` a diacritic removed (`é` to `e`, a lone U+0301 to nothing).
   */
  readonly term: string;
  /** Offset of its first UTF-16 unit. */
  readonly start: number;
  /** Offset just past it. */
  readonly end: number;
}

/**
 * Folds a token as `unicode61` (`remove_diacritics 1`) does, code point by
 * code point from SQLite's measured tables: case folded as Unicode 6.1's
 * simple case folding (`Σ`, `ς` → `σ`; `µ` → `μ`; `ſ` → `s`), a Latin
 * letter's diacritic removed (`é` → `e`; `ǖ`, `й` stay), a lone removable
 * diacritic dropped; cut to {@linkcode MAX_TOKEN} units.
 *
 * @param text A token.
 * @returns Its folded form.
 */
export function foldToken(text: string): string {
  const folded = foldEach(text, wordFolds());
  return folded.length > MAX_TOKEN ? folded.slice(0, MAX_TOKEN) : folded;
}

/**
 * Folds a text as the `trigram` tokenizer (case-insensitive, as Hermes's
 * `messages_fts_trigram` is made) folds each of its characters: case folded
 * as Unicode 6.1's simple case folding, in SQLite's measured tables
 * (`Ⓐ` → `ⓐ`, `ς` → `σ`), diacritics kept. Each character keeps its
 * length, so offsets in the text are offsets in the folded text.
 *
 * @param text Any text.
 * @returns The folded text.
 */
export function foldTrigram(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  const { table } = trigramFolds();
  return text.length < 256 ? foldEach(text, table) : foldUnits(text, table);
}

/**
 * Each character the `trigram` tokenizer folds to another
 * ({@linkcode foldTrigram}), with what it folds to.
 *
 * @returns The characters, in code point order.
 */
export function trigramFoldPairs(): ReadonlyMap<string, string> {
  const folds = trigramFolds();
  if (folds.pairs === undefined) {
    const pairs = new Map<string, string>();
    for (const [from, to] of decodeFolds(TRIGRAM_FOLDS)) {
      pairs.set(String.fromCodePoint(from), String.fromCodePoint(to));
    }
    folds.pairs = pairs;
  }
  return folds.pairs;
}

/** A fold: each BMP unit's fold (0: removed), and the folds of other code points that change. */
interface FoldTable {
  readonly bmp: Uint16Array;
  readonly astral: Map<number, number>;
}

/**
 * The character class (without brackets) of the measured token
 * characters, those in `left` left out.
 */
function wordCharacterClass(left: ReadonlySet<number> = new Set()): string {
  const escape = (cp: number) => `\\u{${cp.toString(16)}}`;
  const range = (first: number, last: number) =>
    first > last ? "" : first === last ? escape(first) : `${escape(first)}-${escape(last)}`;
  let out = "";
  let end = 0;
  for (const item of WORD_CHARACTERS.split(/\s+/)) {
    if (item === "") continue;
    const [gap, length] = item.split("+").map((n) => parseInt(n, 36));
    let first = end + gap;
    end = first + length;
    for (const point of [...left].filter((p) => p >= first && p < end).sort((a, b) => a - b)) {
      out += range(first, point - 1);
      first = point + 1;
    }
    out += range(first, end - 1);
  }
  return out;
}

/**
 * The diacritics `unicode61` removes (U+0300 to U+0331, 25 of them): a
 * token goes on through them but never begins with one (a lone one, or one
 * after a separator, separates), as FTS5 reads them.
 */
function removedDiacritics(): Set<number> {
  return new Set(decodeFolds(WORD_FOLDS).filter(([, to]) => to === 0).map(([from]) => from));
}

/**
 * The `[from, to]` pairs of fold runs (`gap:count:stride` then `+delta`,
 * `-delta` or `=target`, base 36; `_unicode61_data.ts`).
 */
function decodeFolds(runs: string): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  let start = 0;
  for (const item of runs.split(/\s+/)) {
    if (item === "") continue;
    const match = /^([0-9a-z]+)(?::([0-9a-z]+):([0-9a-z]+))?([-+=])([0-9a-z]+)$/.exec(item);
    if (match === null) throw new RangeError(`Cannot decode a fold run: current value is ${item}`);
    start += parseInt(match[1], 36);
    const count = match[2] === undefined ? 1 : parseInt(match[2], 36);
    const stride = match[3] === undefined ? 1 : parseInt(match[3], 36);
    const value = parseInt(match[5], 36);
    for (let i = 0; i < count; i++) {
      const from = start + i * stride;
      const to = match[4] === "=" ? value : match[4] === "+" ? from + value : from - value;
      pairs.push([from, to]);
    }
  }
  return pairs;
}

/** A fold table: every code point itself but those of `pairs`. */
function foldTable(pairs: Iterable<readonly [number, number]>, base?: FoldTable): FoldTable {
  const bmp = base === undefined ? new Uint16Array(0x10000) : base.bmp.slice();
  if (base === undefined) { for (let unit = 0; unit < 0x10000; unit++) bmp[unit] = unit; }
  const astral = new Map(base?.astral);
  for (const [from, to] of pairs) {
    if (from < 0x10000) bmp[from] = to;
    else astral.set(from, to);
  }
  return { bmp, astral };
}

let trigramTable: { table: FoldTable; pairs?: Map<string, string> } | undefined;
let wordTable: FoldTable | undefined;

/** The trigram fold, decoded on first use. */
function trigramFolds(): { table: FoldTable; pairs?: Map<string, string> } {
  return trigramTable ??= { table: foldTable(decodeFolds(TRIGRAM_FOLDS)) };
}

/** The unicode61 fold (trigram's, with the diacritics removed), decoded on first use. */
function wordFolds(): FoldTable {
  return wordTable ??= foldTable(decodeFolds(WORD_FOLDS), trigramFolds().table);
}

/**
 * `text` with each code point folded by `table`, which removes none, unit
 * by unit into an array: a long text of many cased letters in a few
 * milliseconds a megabyte, where {@linkcode foldEach} joins a slice for
 * each letter.
 */
function foldUnits(text: string, table: FoldTable): string {
  const { bmp, astral } = table;
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        const folded = astral.get(((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000);
        units[i] = folded === undefined ? unit : 0xd800 + ((folded - 0x10000) >> 10);
        units[++i] = folded === undefined ? low : 0xdc00 + ((folded - 0x10000) & 0x3ff);
        continue;
      }
    }
    units[i] = bmp[unit];
  }
  let out = "";
  for (let at = 0; at < units.length; at += 8192) {
    // `apply` takes the typed array as it is (a spread copies it into arguments: 10 times slower).
    out += String.fromCharCode.apply(null, units.subarray(at, at + 8192) as unknown as number[]);
  }
  return out;
}

/** `text` with each code point folded by `table` (0: removed); itself when nothing changes. */
function foldEach(text: string, table: FoldTable): string {
  const { bmp, astral } = table;
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        const folded = astral.get(((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000);
        if (folded !== undefined) {
          out += text.slice(from, i) + (folded === 0 ? "" : String.fromCodePoint(folded));
          from = i + 2;
        }
        i++;
        continue;
      }
    }
    const folded = bmp[unit];
    if (folded === unit) continue;
    out += text.slice(from, i) + (folded === 0 ? "" : String.fromCharCode(folded));
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
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
 * that begins three, case folded as that tokenizer folds it
 * ({@linkcode foldTrigram}), diacritics kept. A U+0000 is skipped as
 * that tokenizer skips it, and a trigram ends where the character after it
 * begins (or at the end).
 *
 * @param text Any text.
 * @param visit Told each trigram in order; `false` stops the walk.
 */
export function eachTrigram(text: string, visit: TokenVisitor): void {
  // Each character keeps its length: the folded text's offsets are the text's.
  const folded = foldTrigram(text);
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
