/**
 * Naming, through the trigram index, a superset of the messages that contain
 * some substring, so that Python's LIKE scan of every message can be run
 * over those candidates only, with identical hits.
 *
 * Each message is indexed as `content || ' ' || tool_name || ' ' ||
 * tool_calls` (the v11 triggers). A substring of that text is found by:
 *
 * - a term of three or more characters: a trigram phrase query (the index
 *   folds case more widely than LIKE's ASCII folding, so it finds a superset);
 * - a term of two CJK characters `xy` (or Thai, Lao, Myanmar, Khmer:
 *   `countSubstringScript`'s characters): wherever it occurs, some trigram
 *   `xy?` of the indexed text starts with it (content and tool name are
 *   followed by a space), except as the last two characters of
 *   `tool_calls`, which holds JSON and so never ends in such a character. Such
 *   trigrams are listed by a TEMP `fts5vocab` table and their rows found
 *   with one MATCH of them all.
 *
 * The messages whose content or tool name holds U+0000 may be missing
 * from the index after it (an older SQLite stopped there); they are found
 * by id range where a search needs them (`trigram_gaps.ts`), not here.
 *
 * @module
 */
import type { Store } from "../store.ts";
import { isSubstringScriptCodePoint } from "../../core/search/cjk.ts";
import { isMatchError } from "./query_error.ts";
import { ftsTableSql, ftsTriggersSql } from "../schema/schema_sql.ts";
import { ROWID_PARAM } from "./fts_rowid.ts";
import { quotePhrase } from "../../core/search/condition.ts";

/** How a term can be found in the trigram index, if it can. */
export type TermKind = "phrase" | "pair";

/** The per-connection vocabulary table over the trigram index (TEMP: nothing is written to the file). */
const VOCAB_TABLE = "temp.hermes_trigram_terms";
const VOCAB_SQL =
  `CREATE VIRTUAL TABLE IF NOT EXISTS ${VOCAB_TABLE} USING fts5vocab(main, messages_fts_trigram, instance)`;

/** The trigram table, its triggers and the messages table as stored in the file. */
const SHAPE_SQL = `SELECT name, sql FROM sqlite_master
WHERE name IN ('messages', 'messages_fts_trigram', 'messages_fts_trigram_insert',
  'messages_fts_trigram_delete', 'messages_fts_trigram_update')`;

/** Rows whose indexed text contains one of the phrases (a trigram MATCH expression). */
const PHRASE_ROWS_SQL =
  "SELECT rowid AS id FROM messages_fts_trigram WHERE messages_fts_trigram MATCH ?";

/** The per-connection list of distinct trigrams (TEMP too): one row per term, no positions. */
const TERMS_TABLE = "temp.hermes_trigram_distinct";
const TERMS_SQL =
  `CREATE VIRTUAL TABLE IF NOT EXISTS ${TERMS_TABLE} USING fts5vocab(main, messages_fts_trigram, row)`;

/** The trigrams that start with the bound two characters. */
const PAIR_TERMS_SQL =
  `SELECT term FROM ${TERMS_TABLE} WHERE term >= ? AND term <= ? || char(1114111)`;

/** Trigrams OR-ed in one MATCH. */
const TERMS_PER_MATCH = 200;

/** The candidates beyond an id and not past the walk's far end, newest first: one chunk. */
const NEWER_ROWS_SQL = `SELECT rowid AS id FROM messages_fts_trigram
WHERE messages_fts_trigram MATCH ? AND rowid < ${ROWID_PARAM} AND rowid >= ${ROWID_PARAM}
ORDER BY rowid DESC LIMIT ?`;

/** The candidates beyond an id and not past the walk's far end, oldest first. */
const OLDER_ROWS_SQL = `SELECT rowid AS id FROM messages_fts_trigram
WHERE messages_fts_trigram MATCH ? AND rowid > ${ROWID_PARAM} AND rowid <= ${ROWID_PARAM}
ORDER BY rowid ASC LIMIT ?`;

/** Every candidate within an id range. */
const RANGE_ROWS_SQL = `SELECT rowid AS id FROM messages_fts_trigram
WHERE messages_fts_trigram MATCH ? AND rowid >= ${ROWID_PARAM} AND rowid <= ${ROWID_PARAM}`;

/** The ids candidates are sought between (inclusive), and the walk order. */
export interface CandidateOptions {
  /** Oldest id first instead of newest. */
  readonly oldest: boolean;
  /** Candidates read with the first chunk. */
  readonly first: number;
  /** The lowest id sought. */
  readonly lo: number;
  /** The highest id sought. */
  readonly hi: number;
}

/**
 * Rows whose indexed text has a trigram starting with the bound two
 * characters, by reading every instance (the fallback of {@linkcode pairRows}).
 */
const PAIR_ROWS_SQL =
  `SELECT DISTINCT doc AS id FROM ${VOCAB_TABLE} WHERE term >= ? AND term <= ? || char(1114111)`;

/** Whether the connection has made its TEMP vocabulary tables (owned by the store). */
const VOCABULARY = Symbol("trigram vocabulary");

/** SQLite keeps CREATE text as written, minus `IF NOT EXISTS` and the final `;`. */
function normalize(sql: unknown): string {
  return typeof sql === "string"
    ? sql.replace(/^CREATE (VIRTUAL TABLE|TRIGGER) IF NOT EXISTS/, "CREATE $1")
      .replace(/;\s*$/, "").replace(/\s+/g, " ").trim()
    : "";
}

/** The v11 CREATE text of the trigram table and its triggers, by name. */
const V11_SHAPE: ReadonlyMap<string, string> = new Map([
  ["messages_fts_trigram", normalize(ftsTableSql("messages_fts_trigram"))],
  ...ftsTriggersSql("messages_fts_trigram").split(/(?<=END;)/).flatMap((statement) => {
    const name = /CREATE TRIGGER IF NOT EXISTS (\w+)/.exec(statement)?.[1];
    return name ? [[name, normalize(statement.trim())] as const] : [];
  }),
]);

/**
 * Whether the trigram index can name candidates: its table and triggers are
 * the v11 ones (a v6/v10 file opened read-only indexes `content` only) and
 * message ids only grow (AUTOINCREMENT). Whether it holds every message is
 * asked by id window, where a search needs it (see `trigram_gaps.ts`).
 *
 * @param store The open store.
 * @returns `true` when {@linkcode candidateSource} may be used.
 */
export function trigramIndexUsable(store: Store): boolean {
  const rows = store.statement(SHAPE_SQL).all();
  if (rows.length !== V11_SHAPE.size + 1) return false;
  for (const row of rows) {
    if (row.name === "messages") {
      if (!/\bAUTOINCREMENT\b/i.test(String(row.sql))) return false;
    } else if (normalize(row.sql) !== V11_SHAPE.get(row.name as string)) {
      return false;
    }
  }
  return true;
}

/**
 * How the trigram index can find `term`, or `undefined` when only a scan
 * can (one character, two characters that are not both CJK, Thai, Lao,
 * Myanmar or Khmer, or U+0000, where FTS5 would stop reading the query).
 *
 * @param term A substring term.
 * @returns Its kind.
 */
export function termKind(term: string): TermKind | undefined {
  if (term.includes("\u0000")) return undefined;
  let length = 0;
  let unspaced = true;
  for (const ch of term) {
    length++;
    if (length >= 3) return "phrase";
    unspaced &&= isSubstringScriptCodePoint(ch.codePointAt(0)!);
  }
  return length === 2 && unspaced ? "pair" : undefined;
}

function ensureVocabulary(store: Store): void {
  const made = store.derived(VOCABULARY, () => ({ done: false }));
  if (made.done) return;
  store.db.exec(VOCAB_SQL);
  store.db.exec(TERMS_SQL);
  made.done = true;
}

/**
 * Adds the rows whose indexed text has a trigram starting with `pair`: the
 * trigrams (`terms`, as the vocabulary lists them) are looked up as one MATCH of
 * quoted phrases OR-ed together (reading their document lists, 10× less
 * than every instance with its position); the instance table serves when a
 * trigram cannot be written as a phrase (it holds U+0000).
 */
function pairRows(store: Store, pair: string, terms: readonly string[], ids: Set<number>): void {
  if (!terms.some((term) => term.includes("\u0000"))) {
    const found: number[] = [];
    let rejected = false;
    for (let i = 0; i < terms.length && !rejected; i += TERMS_PER_MATCH) {
      const match = terms.slice(i, i + TERMS_PER_MATCH)
        .map(quotePhrase).join(" OR ");
      try {
        for (const row of store.statement(PHRASE_ROWS_SQL).all(match)) found.push(Number(row.id));
      } catch (error) {
        if (!isMatchError(error, match)) throw error;
        rejected = true;
      }
    }
    if (!rejected) {
      for (const id of found) ids.add(id);
      return;
    }
  }
  for (const row of store.statement(PAIR_ROWS_SQL).all(pair, pair)) ids.add(Number(row.id));
}

/**
 * The ids of a superset of the messages whose content, tool name or tool
 * calls contain one of the terms (every term must have a
 * {@linkcode termKind}), or `undefined` when FTS5 cannot take the phrases.
 * Messages an older SQLite indexed only up to a U+0000 are not among them:
 * see `trigram_gaps.ts`.
 *
 * @param store The open store; {@linkcode trigramIndexUsable} must hold.
 * @param terms The terms.
 * @returns The candidate ids, unordered.
 * @throws {SqliteError} On a storage failure.
 */
function candidateIds(
  store: Store,
  terms: readonly string[],
  pairTerms: ReadonlyMap<string, readonly string[]>,
): number[] | undefined {
  const ids = new Set<number>();
  const phrases = terms.filter((t) => termKind(t) === "phrase");
  const pairs = terms.filter((t) => termKind(t) === "pair");
  if (phrases.length > 0) {
    const match = phrases.map(quotePhrase).join(" OR ");
    try {
      for (const row of store.statement(PHRASE_ROWS_SQL).all(match)) ids.add(Number(row.id));
    } catch (error) {
      if (isMatchError(error, match)) return undefined;
      throw error;
    }
  }
  for (const pair of pairs) pairRows(store, pair, pairTerms.get(pair) ?? [], ids);
  return [...ids];
}

/**
 * Candidate ids handed out in walk order (newest or oldest id first), a
 * chunk at a time, so that a walk that stops early reads only the index
 * entries it walked.
 */
export interface CandidateSource {
  /**
   * The next candidates, at most `size`; fewer only when none are left.
   *
   * @param size How many.
   * @returns Their ids, in walk order.
   */
  next(size: number): number[];
  /**
   * Every candidate (for the paths that need them all).
   *
   * @returns Their ids, unordered.
   */
  all(): number[];
}

/** Candidates already known, all of them (those in the range). */
class KnownCandidates implements CandidateSource {
  readonly #ids: number[];
  #at = 0;

  constructor(ids: readonly number[], options: CandidateOptions) {
    const { oldest, lo, hi } = options;
    this.#ids = ids.filter((id) => id >= lo && id <= hi).sort((a, b) => oldest ? a - b : b - a);
  }

  next(size: number): number[] {
    const chunk = this.#ids.slice(this.#at, this.#at + size);
    this.#at += chunk.length;
    return chunk;
  }

  all(): number[] {
    return this.#ids;
  }
}

/** Candidates read from the index a chunk at a time, with one MATCH of every term. */
class IndexedCandidates implements CandidateSource {
  readonly #store: Store;
  readonly #match: string;
  readonly #options: CandidateOptions;
  /** The last id handed out (the next chunk starts beyond it). */
  #after: number;
  /** The first chunk, read before the walk asked for it. */
  #first: number[] | undefined;
  /** True once a read came back short: nothing is left. */
  #done: boolean;

  constructor(store: Store, match: string, options: CandidateOptions) {
    this.#store = store;
    this.#match = match;
    this.#options = options;
    this.#after = options.oldest ? options.lo - 1 : options.hi + 1;
    this.#done = false;
    // Read now: a MATCH that FTS5 refuses fails here, before the walk.
    this.#first = this.#read(options.first);
  }

  next(size: number): number[] {
    const first = this.#first;
    this.#first = undefined;
    if (first === undefined) return this.#read(size);
    if (first.length > size) {
      this.#first = first.slice(size);
      return first.slice(0, size);
    }
    return first.length === size || this.#done
      ? first
      : first.concat(this.#read(size - first.length));
  }

  #read(size: number): number[] {
    if (this.#done) return [];
    const { oldest, lo, hi } = this.#options;
    const sql = oldest ? OLDER_ROWS_SQL : NEWER_ROWS_SQL;
    const ids = this.#store.statement(sql).all(this.#match, this.#after, oldest ? hi : lo, size)
      .map((row) => Number(row.id));
    if (ids.length < size) this.#done = true;
    if (ids.length > 0) this.#after = ids[ids.length - 1];
    return ids;
  }

  all(): number[] {
    const { lo, hi } = this.#options;
    return this.#store.statement(RANGE_ROWS_SQL).all(this.#match, lo, hi)
      .map((row) => Number(row.id));
  }
}

/**
 * The candidates of {@linkcode candidateIds}, handed out in walk order: read
 * lazily from the index with one MATCH when every term (each pair's
 * trigrams included) fits in one, else all read at once. `undefined` when
 * FTS5 cannot take the phrases.
 *
 * @param store The open store; {@linkcode trigramIndexUsable} must hold.
 * @param terms The terms.
 * @param options Walk order, the size of the first chunk, and the ids sought between.
 * @returns The source.
 * @throws {SqliteError} On a storage failure.
 */
export function candidateSource(
  store: Store,
  terms: readonly string[],
  options: CandidateOptions,
): CandidateSource | undefined {
  const alternatives = terms.filter((t) => termKind(t) === "phrase");
  const pairs = terms.filter((t) => termKind(t) === "pair");
  if (pairs.length > 0) ensureVocabulary(store);
  // Each pair's trigrams, listed once: they serve the one MATCH, else each pair's rows.
  const pairTerms = new Map<string, string[]>();
  for (const pair of pairs) {
    const listed = store.statement(PAIR_TERMS_SQL).all(pair, pair).map((row) => String(row.term));
    pairTerms.set(pair, listed);
    alternatives.push(...listed);
  }
  if (
    alternatives.length <= TERMS_PER_MATCH &&
    !alternatives.some((term) => term.includes("\u0000"))
  ) {
    const match = alternatives.length === 0
      ? undefined
      : alternatives.map(quotePhrase).join(" OR ");
    if (match === undefined) return new KnownCandidates([], options);
    try {
      return new IndexedCandidates(store, match, options);
    } catch (error) {
      if (!isMatchError(error, match)) throw error;
    }
  }
  const ids = candidateIds(store, terms, pairTerms);
  return ids === undefined ? undefined : new KnownCandidates(ids, options);
}
