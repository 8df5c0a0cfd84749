/**
 * The snippet of a full-text match, chosen and marked as SQLite's FTS5
 * `snippet(table, 0, '>>>', '<<<', '...', 40)` does it (with one change,
 * below), so that a hit shows the same text on either engine: every
 * snippet on PostgreSQL, and on SQLite those of long texts
 * (`long_snippet.ts`) and those FTS5 ends in a cut match
 * (`whole_match.ts`). For both tables: the words (`unicode61` tokens,
 * {@linkcode wordsSnippet}) and the CJK trigrams (every run of three
 * characters, {@linkcode trigramSnippet}).
 *
 * - the query's phrases (each a run of tokens, its last one a prefix when it
 *   ends in `*`) are found in the text's tokens: their instances, in order
 *   of position, of the phrases in the parts of the query that match the
 *   text;
 * - each instance proposes a 40-token window, scored 1,000 for each phrase
 *   it holds and 1 for each further instance, then centred on what it
 *   holds; and a window from the start of the instance's sentence (a token
 *   after `.` or `:` and white space, or the first token), with a bonus of
 *   100 (120 for the first token). The first best score wins. One change
 *   from FTS5: a sentence's window holds only the instances that end in it.
 *   FTS5 counts one that starts in it, so that a match starting near its
 *   40th token won it and was cut at its end (`>>>数据库连<<<...` for
 *   `数据库连接池`); the window centred on the match now wins there, and
 *   everywhere else the choice is FTS5's;
 * - the marks are placed as FTS5's highlighter places them, token by token:
 *   overlapping instances are one span (`>>>unit test<<<`), and a span
 *   stays open over trigrams that overlap it; the text before the window is
 *   cut to `...`, and after it too unless the window reaches the last
 *   token; each piece of text copied stops at a U+0000, as FTS5's does.
 *
 * @module
 */
import {
  eachToken,
  eachTrigram,
  parseFtsQuery,
  type QueryNode,
  SNIPPET_TOKENS,
  type Token,
  type TokenVisitor,
} from "./fts5_text.ts";

/** How a table splits text into tokens (`unicode61` words, or trigrams), one at a time. */
type Tokenizer = (text: string, visit: TokenVisitor) => void;

/** The terms of `text`'s tokens. */
function termsOf(text: string, split: Tokenizer): string[] {
  const terms: string[] = [];
  split(text, (term) => void terms.push(term));
  return terms;
}

/** A phrase of the query: its tokens in order, the last one a prefix when it ends in `*`. */
interface Phrase {
  readonly terms: readonly string[];
  readonly prefix: boolean;
}

/** A phrase with its number in the query (FTS5 numbers them in the order they are written). */
type NumberedPhrase = Phrase & { readonly index: number };

/**
 * The places the phrases stand in a text (each a phrase, its first token,
 * and so its size), by position, in typed arrays: a log with the searched
 * word on every line has millions of them.
 */
class Instances {
  #phrase = new Int32Array(64);
  #start = new Int32Array(64);
  #count = 0;
  readonly #sizes: readonly number[];

  /** @param sizes The token count of each phrase. */
  constructor(sizes: readonly number[]) {
    this.#sizes = sizes;
  }

  /** How many. */
  get length(): number {
    return this.#count;
  }

  /** Adds one (after those before it). */
  push(phrase: number, start: number): void {
    if (this.#count === this.#phrase.length) {
      const grow = (old: Int32Array) => {
        const bigger = new Int32Array(old.length * 2);
        bigger.set(old);
        return bigger;
      };
      this.#phrase = grow(this.#phrase);
      this.#start = grow(this.#start);
    }
    this.#phrase[this.#count] = phrase;
    this.#start[this.#count++] = start;
  }

  /** The phrase of the `i`th. */
  phrase(i: number): number {
    return this.#phrase[i];
  }

  /** The first token of the `i`th. */
  start(i: number): number {
    return this.#start[i];
  }

  /** The token count of the `i`th. */
  size(i: number): number {
    return this.#sizes[this.#phrase[i]];
  }

  /** The token count of the longest phrase. */
  get longest(): number {
    let longest = 1;
    for (const size of this.#sizes) longest = Math.max(longest, size);
    return longest;
  }

  /** Those of the phrases `kept`, in order. */
  only(kept: ReadonlySet<number>): Instances {
    const out = new Instances(this.#sizes);
    for (let i = 0; i < this.#count; i++) {
      if (kept.has(this.#phrase[i])) out.push(this.#phrase[i], this.#start[i]);
    }
    return out;
  }
}

/** The phrases of a query, numbered in the order they are written, each by its node. */
function phrasesOf(
  tree: QueryNode | undefined,
  split: Tokenizer,
): Map<QueryNode, NumberedPhrase> {
  const phrases = new Map<QueryNode, NumberedPhrase>();
  const walk = (node: QueryNode): void => {
    if (node.kind === "phrase") {
      const terms = termsOf(node.text, split);
      phrases.set(node, { terms, prefix: node.prefix, index: phrases.size });
    } else if (node.kind === "not") {
      walk(node.left);
      walk(node.right);
    } else for (const item of node.items) walk(item);
  };
  if (tree !== undefined) walk(tree);
  return phrases;
}

/** What a walk over a text's tokens keeps: its instances, its sentences, its length. */
interface Scan {
  /** Every instance of every phrase, by position (the earlier phrase first at one position). */
  readonly instances: Instances;
  /** The tokens that begin a sentence: the first, and each after `.` or `:` and white space. */
  readonly sentences: number[];
  /** How many tokens. */
  readonly tokenCount: number;
}

const DOT = 0x2e;
const COLON = 0x3a;

/** A space, tab, line feed or carriage return: what FTS5 skips back over before a sentence. */
function isBlank(unit: number): boolean {
  return unit === 0x20 || unit === 0x09 || unit === 0x0a || unit === 0x0d;
}

/**
 * Walks the tokens of `text` once, keeping no token: the instances of the
 * phrases, found from a ring of the last few terms (as many as the longest
 * phrase has), and the sentence starts. The phrases that can start at a
 * token are found by its term (or, for a one-token prefix, by its term's
 * beginnings), so a query of many words costs a look-up per token, not a
 * comparison per word.
 */
function scan(text: string, split: Tokenizer, phrases: readonly Phrase[]): Scan {
  const byFirst = new Map<string, number[]>();
  const byPrefix = new Map<string, number[]>();
  let longestPrefix = 0;
  let longest = 1;
  for (const [phrase, { terms, prefix }] of phrases.entries()) {
    if (terms.length === 0) continue;
    longest = Math.max(longest, terms.length);
    const bare = prefix && terms.length === 1;
    const map = bare ? byPrefix : byFirst;
    const list = map.get(terms[0]) ?? [];
    list.push(phrase);
    map.set(terms[0], list);
    if (bare) longestPrefix = Math.max(longestPrefix, terms[0].length);
  }
  const instances = new Instances(phrases.map((phrase) => phrase.terms.length));
  const sentences: number[] = [];
  const ring: string[] = new Array(longest);
  const here: number[] = [];
  /** The phrases that start at token `start`, `count` tokens being known. */
  const look = (start: number, count: number) => {
    const first = ring[start % longest];
    here.length = 0;
    for (const phrase of byFirst.get(first) ?? []) {
      const { terms, prefix } = phrases[phrase];
      const size = terms.length;
      if (start + size > count) continue;
      let same = true;
      for (let j = 1; j < size && same; j++) {
        const term = ring[(start + j) % longest];
        same = prefix && j === size - 1 ? term.startsWith(terms[j]) : term === terms[j];
      }
      if (same) here.push(phrase);
    }
    for (let length = Math.min(longestPrefix, first.length); length > 0; length--) {
      for (const phrase of byPrefix.get(first.slice(0, length)) ?? []) here.push(phrase);
    }
    if (here.length > 1) here.sort((a, b) => a - b);
    for (const phrase of here) instances.push(phrase, start);
  };
  let count = 0;
  split(text, (term, start) => {
    if (count === 0) sentences.push(0);
    else {
      let at = start - 1;
      while (at >= 0 && isBlank(text.charCodeAt(at))) at--;
      const before = at >= 0 ? text.charCodeAt(at) : 0;
      if (at !== start - 1 && (before === DOT || before === COLON)) sentences.push(count);
    }
    ring[count % longest] = term;
    count++;
    // The token `longest - 1` back now has every token a phrase from it can hold.
    if (count >= longest) look(count - longest, count);
  });
  for (let start = Math.max(0, count - longest + 1); start < count; start++) look(start, count);
  return { instances, sentences, tokenCount: count };
}

/**
 * The phrases whose instances FTS5 reports for this text: those of the
 * parts of the query that match it. A phrase under an AND (or a run of
 * phrases) that fails, or under a NOT that fails, reports none, even where
 * it stands in the text (`cache AND redis OR memory` marks only `memory` in
 * a text without `redis`). FTS5 may still mark a NOT's right side where its
 * cursor happens to rest on the row (a NOT that failed beside an OR that
 * matched); that is not followed here.
 */
function reportedPhrases(
  tree: QueryNode | undefined,
  phrases: ReadonlyMap<QueryNode, NumberedPhrase>,
  present: ReadonlySet<number>,
): Set<number> {
  const reported = new Set(present);
  const silence = (node: QueryNode): void => {
    if (node.kind === "phrase") reported.delete(phrases.get(node)!.index);
    else if (node.kind === "not") {
      silence(node.left);
      silence(node.right);
    } else for (const item of node.items) silence(item);
  };
  const matches = (node: QueryNode): boolean => {
    switch (node.kind) {
      case "phrase": {
        // A phrase without a token (punctuation; two characters for trigrams) matches nothing,
        // as in FTS5: an AND holding one fails, and a NOT whose right side it is holds.
        return present.has(phrases.get(node)!.index);
      }
      case "seq": {
        // Phrases written side by side: FTS5 leaves out one without a token (`reset & retry`
        // asks for "reset" "&" "retry"), where an explicit AND holding one fails.
        const kept = node.items.filter((item) =>
          item.kind !== "phrase" || phrases.get(item)!.terms.length > 0
        );
        if (kept.length > 0 && kept.every(matches)) return true;
        silence(node);
        return false;
      }
      case "and":
        if (node.items.every(matches)) return true;
        silence(node);
        return false;
      case "or":
        return node.items.map(matches).some(Boolean);
      case "not":
        if (matches(node.left) && !matches(node.right)) return true;
        silence(node);
        return false;
    }
  };
  if (tree !== undefined) matches(tree);
  return reported;
}

/**
 * Scores windows of `SNIPPET_TOKENS` tokens as FTS5 scores them: 1,000 for
 * each phrase the window holds and 1 for each further instance. The window
 * slides: asked for starts that never go back, it counts each instance in
 * and out once (FTS5 counts every instance for every window, a cost of the
 * square of the instances).
 */
class WindowScorer {
  readonly #instances: Instances;
  readonly #tokenCount: number;
  /** Whether an instance must end in the window to count (FTS5: start in it). */
  readonly #whole: boolean;
  /** The token count of the longest phrase: only instances starting this close to the end can be cut. */
  readonly #longest: number;
  /** Instances of each phrase in the window. */
  readonly #held = new Map<number, number>();
  /** The window holds the instances `[#low, #high)`. */
  #low = 0;
  #high = 0;

  constructor(instances: Instances, tokenCount: number, whole = false) {
    this.#instances = instances;
    this.#tokenCount = tokenCount;
    this.#whole = whole;
    // Read only to leave out cut instances: the other windows need not walk the phrases.
    this.#longest = whole ? instances.longest : 0;
  }

  /**
   * The score of the window from token `from` (no smaller than the last
   * asked), and where it would start centred on the instances it holds.
   */
  score(from: number): { score: number; centred: number } {
    const instances = this.#instances;
    const held = this.#held;
    while (this.#high < instances.length && instances.start(this.#high) < from + SNIPPET_TOKENS) {
      const phrase = instances.phrase(this.#high++);
      held.set(phrase, (held.get(phrase) ?? 0) + 1);
    }
    while (this.#low < this.#high && instances.start(this.#low) < from) {
      const phrase = instances.phrase(this.#low++);
      const left = held.get(phrase)! - 1;
      if (left === 0) held.delete(phrase);
      else held.set(phrase, left);
    }
    let count = this.#high - this.#low;
    let phrases = held.size;
    if (this.#whole) {
      // Leave out the instances that go on past the window, and a phrase that has only those.
      const end = from + SNIPPET_TOKENS;
      const cut = new Map<number, number>();
      for (
        let k = this.#high - 1;
        k >= this.#low && instances.start(k) + this.#longest > end;
        k--
      ) {
        if (instances.start(k) + instances.size(k) <= end) continue;
        const phrase = instances.phrase(k);
        const left = (cut.get(phrase) ?? held.get(phrase)!) - 1;
        cut.set(phrase, left);
        count--;
        if (left === 0) phrases--;
      }
    }
    // An empty window (a sentence's, far before its instance) scores nothing.
    if (count === 0) return { score: 0, centred: 0 };
    const score = 1000 * phrases + count - phrases;
    const first = instances.start(this.#low);
    const last = instances.start(this.#high - 1) + instances.size(this.#high - 1);
    let centred = first - Math.trunc((SNIPPET_TOKENS - (last - first)) / 2);
    if (centred + SNIPPET_TOKENS > this.#tokenCount) centred = this.#tokenCount - SNIPPET_TOKENS;
    return { score, centred: Math.max(0, centred) };
  }
}

/** The first token of the best window (as FTS5 chooses it, cut match included, with `asFts5`). */
function bestStart(scanned: Scan, instances: Instances, asFts5: boolean): number {
  const { sentences: starts, tokenCount } = scanned;
  // The instances come in order of position, and so do their sentences: each kind of window
  // slides forward only.
  const own = new WindowScorer(instances, tokenCount);
  const sentences = new WindowScorer(instances, tokenCount, !asFts5);
  let best = 0;
  let bestFrom = 0;
  let sentence = 0;
  for (let i = 0; i < instances.length; i++) {
    const start = instances.start(i);
    const window = own.score(start);
    if (window.score > best) {
      best = window.score;
      bestFrom = window.centred;
    }
    if (starts.length === 0 || tokenCount <= SNIPPET_TOKENS) continue;
    while (sentence < starts.length - 1 && starts[sentence + 1] <= start) sentence++;
    const from = starts[sentence];
    if (from >= start) continue;
    const score = sentences.score(from).score + (from === 0 ? 120 : 100);
    if (score > best) {
      best = score;
      bestFrom = from;
    }
  }
  return bestFrom;
}

/**
 * A piece of the text as FTS5 copies it into a snippet: up to its first
 * U+0000 (it appends with `%.*s`, which stops there), so the start of
 * multimodal content, which is a NUL, shows nothing before the first match.
 */
function copy(text: string, from: number, to: number): string {
  const piece = text.slice(from, to);
  const nul = piece.indexOf("\u0000");
  return nul === -1 ? piece : piece.slice(0, nul);
}

/**
 * Instances as FTS5's highlighter walks them: overlapping ones coalesced
 * into one span, `[first token, last token]`, in order; only the spans that
 * start in the window from token `first` (the highlighter leaves those that
 * start before it unmarked, and reaches none that start after it).
 */
function spansOf(instances: Instances, first: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let open: [number, number] | undefined;
  const close = () => {
    if (open !== undefined && open[0] >= first && open[0] < first + SNIPPET_TOKENS) {
      spans.push(open);
    }
  };
  for (let i = 0; i < instances.length; i++) {
    const start = instances.start(i);
    const end = start + instances.size(i) - 1;
    if (open !== undefined && start <= open[1]) open[1] = Math.max(open[1], end);
    else {
      close();
      if (start >= first + SNIPPET_TOKENS) return spans;
      open = [start, end];
    }
  }
  close();
  return spans;
}

/** The tokens of the window from token `first` (up to `SNIPPET_TOKENS` of them). */
function windowTokens(text: string, split: Tokenizer, first: number): Token[] {
  const tokens: Token[] = [];
  let k = 0;
  split(text, (term, start, end) => {
    if (k >= first) tokens.push({ term, start, end });
    k++;
    return k < first + SNIPPET_TOKENS;
  });
  return tokens;
}

/**
 * The window of tokens `[first, last]` with its marks, as FTS5's
 * highlighter writes it token by token: a mark opens at the first token of
 * a span, the text is copied up to the end of its last token, and the mark
 * closes at the first later token that starts past what was copied (a
 * trigram overlapping the span keeps it open), or at the window's end.
 */
function highlight(
  text: string,
  window: readonly Token[],
  tokenCount: number,
  spans: ReadonlyArray<readonly [number, number]>,
  first: number,
): string {
  const last = first + SNIPPET_TOKENS - 1;
  let out = first > 0 ? "..." : "";
  // Spans that start before the window are left unmarked, as FTS5 leaves them.
  let next = spans.findIndex(([start]) => start >= first);
  if (next === -1) next = spans.length;
  let copied = 0;
  let open = false;
  for (let k = first; k <= last && k < tokenCount; k++) {
    const token = window[k - first];
    if (k === first && first > 0) copied = token.start;
    const span = spans[next];
    if (open && (span === undefined || k <= span[0]) && token.start > copied) {
      out += "<<<";
      open = false;
    }
    if (span !== undefined && k === span[0] && !open) {
      out += copy(text, copied, token.start) + ">>>";
      copied = token.start;
      open = true;
    }
    if (span !== undefined && k === span[1]) {
      out += copy(text, copied, token.end);
      copied = token.end;
      next++;
    }
    if (k === last) {
      if (open) {
        const after = spans[next];
        if (after !== undefined && k >= after[0]) {
          out += copy(text, copied, token.end);
          copied = token.end;
        }
        out += "<<<";
        open = false;
      }
      out += copy(text, copied, token.end);
      copied = token.end;
    }
  }
  if (open) out += "<<<";
  return out + (last >= tokenCount - 1 ? copy(text, copied, text.length) : "...");
}

/**
 * The snippet of `text` for `query`, its phrases and the text split by
 * `split`. The row's other columns (`others`) count in whether a part of
 * the query matches, as FTS5 matches a row, not a column.
 */
function snippetOf(
  text: string,
  query: string,
  split: Tokenizer,
  others: readonly (string | null)[],
  { asFts5 = false }: SnippetOptions,
): string {
  const tree = parseFtsQuery(query);
  const phrases = phrasesOf(tree, split);
  const list = [...phrases.values()];
  // The text is walked twice and never kept as tokens: once for its instances, once for the
  // tokens of the best window.
  const scanned = scan(text, split, list);
  const all = scanned.instances;
  const present = new Set<number>();
  for (let i = 0; i < all.length; i++) present.add(all.phrase(i));
  for (const other of others) {
    if (!other) continue;
    const found = scan(other, split, list).instances;
    for (let i = 0; i < found.length; i++) present.add(found.phrase(i));
  }
  const reported = reportedPhrases(tree, phrases, present);
  const instances = reported.size === present.size ? all : all.only(reported);
  const first = bestStart(scanned, instances, asFts5);
  const window = windowTokens(text, split, first);
  return highlight(text, window, scanned.tokenCount, spansOf(instances, first), first);
}

/** How a snippet is chosen. */
export interface SnippetOptions {
  /**
   * Choose the window exactly as FTS5 does, even where that cuts a match
   * at the window's end (a sentence's window then holds a match that only
   * starts in it): what SQLite's own `snippet()` gives, for tests.
   * @default {false}
   */
  readonly asFts5?: boolean;
}

/**
 * A snippet of `text` for the word query `query`, as FTS5's `snippet()`
 * with `'>>>'`, `'<<<'`, `'...'` and 40 tokens gives it on the words table
 * (its first column), except that a match is not cut at the window's end
 * where FTS5 cuts it (module doc).
 *
 * @param text The searchable text of a message.
 * @param query The sanitized FTS5 word query.
 * @param others The row's other columns, in a table of several (a newer
 *   Hermes's `tool_name` and `tool_calls`): a part of the query they match
 *   is a part the row matches.
 * @param options `asFts5`: FTS5's window, cut match included.
 * @returns The snippet.
 */
export function wordsSnippet(
  text: string,
  query: string,
  others: readonly (string | null)[] = [],
  options: SnippetOptions = {},
): string {
  return snippetOf(text, query, eachToken, others, options);
}

/**
 * A snippet of `text` for the trigram query `query` (CJK text, three
 * characters or more), as FTS5's `snippet()` gives it on the trigram table
 * (its first column): 40 trigrams, about 42 characters; a match is not cut
 * at the window's end where FTS5 cuts it (module doc).
 *
 * @param text The searchable text of a message.
 * @param query The FTS5 query the trigram table is asked.
 * @param others The row's other columns (a newer Hermes's `tool_name`).
 * @param options `asFts5`: FTS5's window, cut match included.
 * @returns The snippet.
 */
export function trigramSnippet(
  text: string,
  query: string,
  others: readonly (string | null)[] = [],
  options: SnippetOptions = {},
): string {
  return snippetOf(text, query, eachTrigram, others, options);
}
