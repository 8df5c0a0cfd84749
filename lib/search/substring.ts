/**
 * Substring search (the Python Hermes's LIKE fallback for short CJK
 * queries): a hit contains one of the terms in its content, tool name or
 * tool calls (`LIKE` with `\`, `%` and `_` escaped, so they match
 * literally; ASCII case-insensitive), newest first.
 *
 * Python scans every message. When the trigram index can name a superset
 * of the matching rows, only those candidates are checked, with the same
 * LIKE and the same order, so the hits are identical:
 *
 * - a term of three or more characters is a trigram phrase query (the
 *   trigram index folds case more widely than LIKE, so it finds a superset);
 * - a term of two CJK characters `xy` starts some trigram `xy?` of the
 *   indexed text `content || ' ' || tool_name || ' ' || tool_calls`
 *   wherever it occurs, except as the last two characters of `tool_calls`,
 *   which is JSON and so never ends in a CJK character. The rows holding
 *   such trigrams come from an `fts5vocab` table over the trigram index.
 *
 * Anything else (a one-character term, a term with U+0000, a file whose
 * trigram index is not the v11 one) takes Python's full scan.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import { isCjkCodePoint } from "./cjk.ts";
import { CONTAINS_ALL_SQL, CONTAINS_ANY_SQL, containsPattern, type FilterSql } from "./filters.ts";
import type { HitRow } from "./ranked.ts";
import { isMatchError, isPatternError } from "./query_error.ts";
import { ftsTableSql, ftsTriggersSql } from "../schema/schema_sql.ts";

/** What a substring search needs. */
export interface SubstringQuery {
  /** A hit contains at least one of these. */
  readonly terms: readonly string[];
  /** When true, a hit contains every term. */
  readonly all: boolean;
  /** The filters. */
  readonly filters: FilterSql;
  /** Page size. */
  readonly limit: number;
  /** Hits to skip. */
  readonly offset: number;
}

/** How candidates are found. */
export type SubstringStrategy = "auto" | "scan";

/** The per-connection vocabulary table over the trigram index (TEMP: never written to the file). */
const VOCAB_TABLE = "temp.hermes_trigram_terms";
const VOCAB_SQL =
  `CREATE VIRTUAL TABLE IF NOT EXISTS ${VOCAB_TABLE} USING fts5vocab(main, messages_fts_trigram, instance)`;

/** The trigram table and its triggers as stored in the file. */
const TRIGRAM_SHAPE_SQL = `SELECT name, sql FROM sqlite_master
WHERE name IN ('messages_fts_trigram', 'messages_fts_trigram_insert',
  'messages_fts_trigram_delete', 'messages_fts_trigram_update')`;

/** True when the trigram index has one row per message (it was backfilled). */
const TRIGRAM_COMPLETE_SQL = `SELECT (SELECT count(*) FROM messages) =
  (SELECT count(*) FROM messages_fts_trigram_docsize) AS complete`;

/** Connections whose vocabulary table exists. */
const withVocabulary = new WeakSet<Store>();

/** SQLite keeps CREATE text as written, minus `IF NOT EXISTS` and the final `;`. */
function normalize(sql: unknown): string {
  return typeof sql === "string"
    ? sql.replace(/^CREATE (VIRTUAL TABLE|TRIGGER) IF NOT EXISTS/, "CREATE $1")
      .replace(/;\s*$/, "").replace(/\s+/g, " ").trim()
    : "";
}

let v11Shape: Map<string, string> | undefined;

/** The v11 CREATE text of the trigram table and its triggers, by name. */
function trigramShape(): Map<string, string> {
  if (v11Shape) return v11Shape;
  v11Shape = new Map([["messages_fts_trigram", normalize(ftsTableSql("messages_fts_trigram"))]]);
  for (const statement of ftsTriggersSql("messages_fts_trigram").split(/(?<=END;)/)) {
    const name = /CREATE TRIGGER IF NOT EXISTS (\w+)/.exec(statement)?.[1];
    if (name) v11Shape.set(name, normalize(statement.trim()));
  }
  return v11Shape;
}

/**
 * Whether the trigram index holds the v11 indexed text of every message:
 * its table and triggers are the v11 ones (a v6/v10 file opened read-only
 * indexes `content` only) and it has one row per message (a table recreated
 * without a backfill does not).
 *
 * @param store The open store.
 * @returns `true` when the index can name candidate rows.
 */
export function trigramIndexUsable(store: Store): boolean {
  const shape = trigramShape();
  const rows = store.statement(TRIGRAM_SHAPE_SQL).all();
  if (rows.length !== shape.size) return false;
  if (!rows.every((row) => normalize(row.sql) === shape.get(row.name as string))) return false;
  return store.statement(TRIGRAM_COMPLETE_SQL).get()?.complete === 1;
}

/** A candidate source for one term, or `undefined` when the term needs a full scan. */
function termKind(term: string): "phrase" | "pair" | undefined {
  if (term.includes("\u0000")) return undefined;
  const chars = Array.from(term);
  if (chars.length >= 3) return "phrase";
  if (chars.length === 2 && chars.every((c) => isCjkCodePoint(c.codePointAt(0)!))) return "pair";
  return undefined;
}

function pageSql(from: string, all: boolean, filters: string): string {
  return `SELECT m.id AS id
${from}
JOIN sessions s ON s.id = m.session_id
WHERE ${all ? CONTAINS_ALL_SQL : CONTAINS_ANY_SQL}${filters}
ORDER BY m.timestamp DESC, m.id ASC
LIMIT ? OFFSET ?`;
}

/** Python's scan of every message. */
const SCAN_FROM = "FROM messages m";
/** Only the candidates, bound as a JSON array of ids. */
const CANDIDATES_FROM = "FROM json_each(?) c JOIN messages m ON m.id = c.value";

/** Rows whose indexed text contains one of the phrases (a trigram MATCH expression). */
const PHRASE_ROWS_SQL =
  "SELECT rowid AS id FROM messages_fts_trigram WHERE messages_fts_trigram MATCH ?";
/** Rows whose indexed text has a trigram starting with the bound two characters. */
const PAIR_ROWS_SQL =
  `SELECT DISTINCT doc AS id FROM ${VOCAB_TABLE} WHERE term >= ? AND term <= ? || char(1114111)`;

/**
 * The ids of a superset of the rows that contain one of the terms, or
 * `undefined` when FTS5 cannot take the phrases (then Python's scan runs).
 */
function candidates(
  store: Store,
  phrases: readonly string[],
  pairs: readonly string[],
): number[] | undefined {
  const ids = new Set<number>();
  if (phrases.length > 0) {
    const match = phrases.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
    try {
      for (const row of store.statement(PHRASE_ROWS_SQL).all(match)) ids.add(Number(row.id));
    } catch (error) {
      if (isMatchError(error, match)) return undefined;
      throw error;
    }
  }
  if (pairs.length > 0) {
    ensureVocabulary(store);
    const statement = store.statement(PAIR_ROWS_SQL);
    for (const pair of pairs) {
      for (const row of statement.all(pair, pair)) ids.add(Number(row.id));
    }
  }
  return [...ids];
}

const ROWS_SQL = `SELECT m.id AS id, m.session_id AS session_id, m.role AS role,
  substr(m.content, max(1, instr(m.content, ?) - 40), 120) AS snippet,
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started
FROM messages m JOIN sessions s ON s.id = m.session_id
WHERE m.id IN (SELECT value FROM json_each(?))`;

function ensureVocabulary(store: Store): void {
  if (withVocabulary.has(store)) return;
  store.db.exec(VOCAB_SQL);
  withVocabulary.add(store);
}

/**
 * One page of substring hits, newest first, without context. The snippet
 * is 120 characters of content from 40 before the first term's first
 * (case-sensitive) occurrence, or the start; `null` for NULL content.
 *
 * @param store The open store.
 * @param query The terms, filters and page.
 * @param strategy `"scan"` forces Python's full scan (for tests).
 * @returns The hit rows (`id, session_id, role, snippet, timestamp,
 *   tool_name, source, model, session_started`), or `undefined` when a term
 *   is longer than SQLite's LIKE pattern limit.
 * @throws {SqliteError} On a storage failure.
 */
export function substringPage(
  store: Store,
  query: SubstringQuery,
  strategy: SubstringStrategy = "auto",
): HitRow[] | undefined {
  const { terms, all, filters, limit, offset } = query;
  const kinds = terms.map(termKind);
  const fast = strategy === "auto" && kinds.every((k) => k !== undefined) &&
    trigramIndexUsable(store);
  const params: SqlValue[] = [];
  let from = SCAN_FROM;
  if (fast) {
    const ids = candidates(
      store,
      terms.filter((_, i) => kinds[i] === "phrase"),
      terms.filter((_, i) => kinds[i] === "pair"),
    );
    if (ids?.length === 0) return [];
    if (ids !== undefined) {
      from = CANDIDATES_FROM;
      params.push(JSON.stringify(ids));
    }
  }
  params.push(JSON.stringify(terms.map(containsPattern)), ...filters.params, limit, offset);
  let ids: number[];
  try {
    ids = store.statement(pageSql(from, all, filters.sql)).all(...params)
      .map((row) => Number(row.id));
  } catch (error) {
    if (isPatternError(error)) return undefined;
    throw error;
  }
  if (ids.length === 0) return [];
  const byId = new Map<number, HitRow>();
  for (const row of store.statement(ROWS_SQL).all(terms[0], JSON.stringify(ids))) {
    byId.set(Number(row.id), row);
  }
  return ids.map((id) => byId.get(id)).filter((row): row is HitRow => row !== undefined);
}
