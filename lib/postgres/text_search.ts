/**
 * Full-text search terms for PostgreSQL, computed in TypeScript so they
 * match what SQLite's FTS5 sees (its tokens and query tree:
 * `../core/search/fts5_text.ts`):
 *
 * - words: the tokens of FTS5's `unicode61` tokenizer (runs of letters,
 *   digits and private-use characters, case folded, Latin diacritics
 *   removed, as SQLite's own tables do it), written as a `tsvector`
 *   literal with positions, queried with a `tsquery` built from the FTS5 query (phrases become `<->` chains,
 *   `word*` a `:*` prefix, AND/OR/NOT keep FTS5's precedence);
 * - substring grams: every character of CJK and of the scripts written
 *   without spaces (Thai, Lao, Myanmar, Khmer), and every overlapping pair
 *   of each run of them, so such a substring of any length is found
 *   through a GIN index (and then confirmed by an exact substring test).
 *
 * @module
 */
import { isSubstringScriptCodePoint, MAY_HOLD_SUBSTRING_SCRIPT } from "../core/search/cjk.ts";
import {
  ASCII_TOKEN,
  foldToken,
  foldTrigram,
  MAX_TOKEN,
  NON_ASCII,
  NONCHARACTER,
  parseFtsQuery,
  type QueryNode,
  TOKEN,
  tokenize,
  trigramFoldPairs,
} from "../core/search/fts5_text.ts";

/** PostgreSQL keeps positions up to 16383 and at most 256 per lexeme. */
const MAX_POSITION = 16383;
const MAX_POSITIONS = 256;
/** Stay clear of PostgreSQL's 1 MB tsvector limit. */
const MAX_VECTOR_CHARS = 600_000;

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
 * The grams of `text` that substring search finds it by: each character of
 * the scripts searched by substring (CJK, and Thai, Lao, Myanmar and Khmer,
 * written without spaces: `isSubstringScriptCodePoint`) and each
 * overlapping pair within a run of them.
 *
 * @param text Any text.
 * @returns The distinct grams, in order of first sight.
 */
export function substringGrams(text: string): string[] {
  if (!MAY_HOLD_SUBSTRING_SCRIPT.test(text)) return [];
  const grams = new Set<string>();
  let previous = "";
  for (const ch of text) {
    if (isSubstringScriptCodePoint(ch.codePointAt(0)!)) {
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
 * The `tsvector` literal of the substring grams of `text` ({@linkcode substringGrams}).
 *
 * @param text The searchable text of a message.
 * @returns The literal, to bind as `$n::tsvector`.
 */
export function gramsVector(text: string): string {
  const parts: string[] = [];
  let size = 0;
  for (const gram of substringGrams(text)) {
    const part = quoteLexeme(gram);
    size += part.length + 1;
    if (size > MAX_VECTOR_CHARS) break;
    parts.push(part);
  }
  return parts.join(" ");
}

/** Mixes the bits of a 32-bit hash (MurmurHash3's finalizer). */
function mix(hash: number): number {
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

/**
 * A digest of a vector's text that its entries' order does not change:
 * how many entries, and two sums of 32-bit hashes of each (FNV-1a and
 * another multiplier, each mixed), read in one pass without splitting.
 */
function entriesDigest(vector: string): string {
  let count = 0;
  let sum1 = 0;
  let sum2 = 0;
  let hash1 = 0x811c9dc5;
  let hash2 = 0x9747b28c;
  for (let i = 0; i <= vector.length; i++) {
    const unit = i < vector.length ? vector.charCodeAt(i) : 0x20;
    if (unit === 0x20) {
      count++;
      sum1 = (sum1 + mix(hash1)) | 0;
      sum2 = (sum2 + mix(hash2)) | 0;
      hash1 = 0x811c9dc5;
      hash2 = 0x9747b28c;
    } else {
      hash1 = Math.imul(hash1 ^ unit, 0x01000193);
      hash2 = Math.imul(hash2 ^ unit, 0x5bd1e995);
    }
  }
  return `${count}:${sum1}:${sum2}`;
}

/**
 * Whether PostgreSQL's text of a vector (`::text`) is the vector of a
 * literal of {@linkcode wordsVector} or {@linkcode gramsVector}, without
 * sending the literal to the server. PostgreSQL prints the same entries
 * (`'lexeme'`, `'lexeme':1,2`), ordered by lexeme: their lexemes are
 * distinct and hold no space, quote or backslash, and their positions are
 * ascending and distinct, so parsing changes nothing else. So the two are
 * the same vector when they have the same length and the same entries in
 * any order, told here by an order-blind digest of 64 bits (two different
 * vectors pass for one with a chance of about 2⁻⁶⁴): a few microseconds a
 * message, where sorting the entries took 26.
 *
 * @param literal A literal of `wordsVector` or `gramsVector`.
 * @param printed A stored vector's text.
 * @returns Whether `literal::tsvector` equals the stored vector.
 */
export function vectorPrintedAs(literal: string, printed: string): boolean {
  // The same entries make the same total length: most differences end here.
  if (literal.length !== printed.length) return false;
  return literal === printed || entriesDigest(literal) === entriesDigest(printed);
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

/** An expression that is nothing (matches no row). */
const NONE = Symbol("none");
/** An expression that is dropped (an empty phrase beside others). */
const DROPPED = Symbol("dropped");
type Built = string | typeof NONE | typeof DROPPED;

/**
 * Operands a `tsquery` joins with one operator in a flat list, at most: a
 * longer list is nested in groups of this many. PostgreSQL recurses once per
 * operator of a list, and overflowed its stack (`stack depth limit
 * exceeded`) on a pasted text of some 16,000 words in quotes, or 50,000
 * without; nested, the depth grows with the logarithm of the length.
 * `(a <-> b) <-> (c <-> d)` is the phrase `a b c d`, as `&` and `|` group
 * freely too.
 */
const FLAT_OPERANDS = 32;

/**
 * Bytes PostgreSQL lets a `tsquery`'s words add up to (`MAXSTRPOS`): past
 * them it refuses the query ("value is too big in tsquery").
 */
const MAX_QUERY_BYTES = (1 << 20) - 1;

/** Whether PostgreSQL takes the `tsquery` literal `literal` (its size alone bounds its words'). */
function fitsTsquery(literal: string): boolean {
  // Each UTF-16 unit is at most 3 bytes of UTF-8: most queries need no count.
  if (literal.length * 3 <= MAX_QUERY_BYTES) return true;
  return new TextEncoder().encode(literal).length <= MAX_QUERY_BYTES;
}

/**
 * `parts` joined by `op` in parentheses, nested in groups of
 * {@linkcode FLAT_OPERANDS} when there are more.
 */
function joinNested(parts: readonly string[], op: string): string {
  if (parts.length <= FLAT_OPERANDS) return `(${parts.join(op)})`;
  const groups: string[] = [];
  for (let i = 0; i < parts.length; i += FLAT_OPERANDS) {
    const group = parts.slice(i, i + FLAT_OPERANDS);
    groups.push(group.length === 1 ? group[0] : joinNested(group, op));
  }
  return joinNested(groups, op);
}

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
      return kept.length === 1 ? kept[0] : joinNested(kept, ops.and);
    }
    case "and": {
      const parts = node.items.map((item) => combine(item, leaf, ops));
      if (parts.some((p) => p === NONE || p === DROPPED)) return NONE;
      return joinNested(parts as string[], ops.and);
    }
    case "or": {
      const kept = node.items.map((item) => combine(item, leaf, ops))
        .filter((p): p is string => typeof p === "string");
      if (kept.length === 0) return NONE;
      return kept.length === 1 ? kept[0] : joinNested(kept, ops.or);
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

// deno-lint-ignore no-control-regex -- FTS5 allows U+001A in barewords
const BAREWORD_UNIT = /[A-Za-z0-9_\u001a\u0080-\uffff]/;
const SPACE_UNIT = /\s/u;

/**
 * A phrase that matches nothing: a string of one NUL, which no query holds
 * (FTS5 reads a query up to its first NUL, and so does this engine).
 */
const NO_MATCH = '"\u0000"';

/**
 * `query` without its FTS5 column filters that name the one column of
 * SQLite's full-text tables, `content` (`content:docker`, `CONTENT : dock*`,
 * `"content":docker`): that column holds the whole searchable text, as the
 * vectors here do, so such a filter changes nothing there. The phrase of a
 * filter that excludes it (`-content:docker`) matches nothing: it becomes
 * {@linkcode NO_MATCH}. A filter naming another column, or without a
 * phrase after it, is left as it is, for the parser to reject as FTS5 does.
 *
 * @param query An FTS5 query, cut at its first NUL.
 * @returns The query, each such `content:` replaced by a space.
 */
export function withoutContentFilter(query: string): string {
  if (!query.includes(":")) return query;
  let out = "";
  let i = 0;
  while (i < query.length) {
    const ch = query[i];
    let end = i + 1;
    let name: string | undefined;
    if (ch === '"') {
      // A string: `""` is a quote inside it.
      let text = "";
      for (; end < query.length; end++) {
        if (query[end] !== '"') text += query[end];
        else if (query[end + 1] === '"') text += query[end++];
        else break;
      }
      end = Math.min(end + 1, query.length);
      name = text;
    } else if (BAREWORD_UNIT.test(ch)) {
      while (end < query.length && BAREWORD_UNIT.test(query[end])) end++;
      name = query.slice(i, end);
    }
    if (name !== undefined && name.toLowerCase() === "content") {
      // A filter: the name, spaces, a colon, spaces, then something to filter.
      let colon = end;
      while (colon < query.length && SPACE_UNIT.test(query[colon])) colon++;
      let next = colon + 1;
      while (next < query.length && SPACE_UNIT.test(query[next])) next++;
      const excluded = out.trimEnd().endsWith("-");
      const phrase = query[next] === '"' || BAREWORD_UNIT.test(query[next] ?? "");
      if (query[colon] === ":" && phrase) {
        if (!excluded) {
          out += " ";
          i = next;
          continue;
        }
        // `-content:` and the phrase after it (a string or a bareword, then `*`).
        let after = next + 1;
        if (query[next] === '"') {
          while (after < query.length && (query[after] !== '"' || query[after + 1] === '"')) {
            after += query[after] === '"' ? 2 : 1;
          }
          after++;
        } else {
          while (after < query.length && BAREWORD_UNIT.test(query[after])) after++;
        }
        if (query[after] === "*") after++;
        out = `${out.trimEnd().slice(0, -1)} ${NO_MATCH} `;
        i = after;
        continue;
      }
    }
    out += query.slice(i, end);
    i = end;
  }
  return out;
}

/**
 * The `tsquery` literal of an FTS5 word query (for the `search_words` vector).
 *
 * @param query A sanitized FTS5 query.
 * @returns The literal; `null` when it matches nothing (or its words add up to more than
 *   PostgreSQL takes); `undefined` when FTS5 would reject it.
 */
export function wordsQuery(query: string): string | null | undefined {
  const tree = parseFtsQuery(query);
  if (tree === undefined) return undefined;
  const built = combine(tree, (phrase) => {
    if (phrase.text === "\u0000") return NONE;
    const terms = tokenize(phrase.text).map((t) => t.term);
    if (terms.length === 0) return DROPPED;
    const quoted = terms.map(quoteLexeme);
    if (phrase.prefix) quoted[quoted.length - 1] += ":*";
    return quoted.length === 1 ? quoted[0] : joinNested(quoted, " <-> ");
  }, { and: " & ", or: " | ", not: (l, r) => `(${l} & !${r})` });
  // Words adding up to over 1 MB: PostgreSQL takes no such query, and no message could match
  // it by AND (a vector holds 600,000 characters at most); by OR it is not run either.
  return typeof built === "string" && fitsTsquery(built) ? built : null;
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
 * dropped beside other phrases, false under AND), with the phrase's substring grams as an
 * indexed pre-filter.
 *
 * @param query The FTS5 query of the trigram table.
 * @param first Number of the first `$n` parameter.
 * @param columns The SQL of the searchable columns, in the order the document joins them.
 * @returns The SQL; `null` when it matches nothing; `undefined` when FTS5 would reject it.
 */
export function trigramSql(
  query: string,
  first: number,
  columns: readonly string[],
): SubstringSql | null | undefined {
  const tree = parseFtsQuery(query);
  if (tree === undefined) return undefined;
  const params: string[] = [];
  const built = combine(tree, (phrase) => {
    if ([...phrase.text].length < 3) return DROPPED;
    return substringCondition(phrase.text, first, columns, params);
  }, { and: " AND ", or: " OR ", not: (l, r) => `(${l} AND NOT ${r})` });
  return typeof built === "string" ? { sql: built, params } : null;
}

/** What PostgreSQL's regular expressions (AREs) read as syntax outside brackets. */
const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

/**
 * A regular expression (PostgreSQL's ARE) that finds `text` whatever the
 * case of its letters, as FTS5's trigram tokenizer folds them: each letter
 * a bracket of the characters that fold as it does (`[Пп]`, `[Σσς]`), the
 * rest as written. The same on every server, whatever its locale.
 *
 * @param text The substring.
 * @returns The expression.
 *
 * @example
 * ```ts
 * import { caseBlindRegex } from "./text_search.ts";
 * console.assert(caseBlindRegex("Ab.ц") === "[Aa][Bb]\\.[Цц]");
 * ```
 */
export function caseBlindRegex(text: string): string {
  const classes = foldClasses();
  let regex = "";
  for (const char of text) {
    const cases = classes.get(foldTrigram(char));
    if (cases !== undefined && cases.includes(char)) regex += `[${cases.join("")}]`;
    else regex += REGEX_SYNTAX.test(char) ? `\\${char}` : char;
  }
  return regex;
}

/** Whether some character of `text` folds as another does (FTS5's trigram fold). */
function hasCases(text: string): boolean {
  const classes = foldClasses();
  for (const char of text) if (classes.has(foldTrigram(char))) return true;
  return false;
}

/**
 * The characters of each fold of FTS5's trigram tokenizer (Unicode 6.1's
 * simple case folding: `ς` and `Σ` to `σ`, `ſ` to `s`, `µ` to `μ`, `ẞ` to
 * `ß`, `Ⓐ` to `ⓐ`; the dotless `ı` and `İ` fold to nothing else), by what
 * they fold to, sorted: made once, on the first search that needs them.
 */
let classes: Map<string, string[]> | undefined;

/** The characters of each fold that more than one character has ({@linkcode classes}). */
function foldClasses(): Map<string, string[]> {
  if (classes !== undefined) return classes;
  const made = new Map<string, string[]>();
  for (const [char, folded] of trigramFoldPairs()) {
    const letters = made.get(folded);
    if (letters === undefined) made.set(folded, [folded, char]);
    else letters.push(char);
  }
  for (const letters of made.values()) letters.sort();
  return classes = made;
}

/**
 * One "contains `text`" condition, with its substring grams (when it has any) as
 * an indexed pre-filter.
 *
 * @param text The substring.
 * @param first Number of the first `$n` parameter.
 * @param columns The SQL of the columns to look in, in the order the document joins them.
 * @param params Where the condition's parameters are appended.
 * @returns The SQL.
 */
export function substringCondition(
  text: string,
  first: number,
  columns: readonly string[],
  params: string[],
): string {
  // A text without cased letters (CJK, digits, symbols) matches exactly what it matches
  // case-insensitively: strpos, much cheaper than a pattern on multibyte text.
  const uncased = !hasCases(text);
  params.push(uncased ? text : caseBlindRegex(text));
  const at = `$${first + params.length - 1}`;
  // Not ILIKE: it folds case as the database's locale does (only ASCII under "C", and İ to i
  // under glibc's), where FTS5 folds each letter alike on every machine.
  const contains = (haystack: string) =>
    uncased ? `strpos(${haystack}, ${at}) > 0` : `${haystack} ~ ${at}`;
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
 * The `tsquery` of the substring grams every text containing `text` has:
 * its pairs, or its characters when it has no two such characters in a row.
 *
 * @param text A substring.
 * @returns The query, or `undefined` when `text` has no character of those scripts (or
 *   so many grams that PostgreSQL would refuse the query).
 */
export function gramsQuery(text: string): string | undefined {
  const grams = substringGrams(text);
  const pairs = grams.filter((g) => [...g].length === 2);
  const lexemes = pairs.length > 0 ? pairs : grams;
  if (lexemes.length === 0) return undefined;
  const quoted = lexemes.map(quoteLexeme);
  const literal = quoted.length <= FLAT_OPERANDS ? quoted.join(" & ") : joinNested(quoted, " & ");
  // Too big for PostgreSQL: the substring test alone decides, without the index.
  return fitsTsquery(literal) ? literal : undefined;
}

// ---------------------------------------------------------------------------
// Snippets
// ---------------------------------------------------------------------------
