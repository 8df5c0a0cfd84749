/**
 * Substring search (the Python Hermes's LIKE fallback for short CJK
 * queries): a hit satisfies the query's condition (its words, read with
 * FTS5's AND/OR/NOT) in its content, tool name or tool calls, via `LIKE … ESCAPE '\'` with `\`, `%` and `_`
 * escaped so that they match literally (ASCII case-insensitive), newest
 * first.
 *
 * Python scans every message. When the trigram index can name a superset
 * of the matching messages (see `trigram_candidates.ts`), the same LIKE and
 * the same order run over those candidates only (with the messages an older
 * SQLite indexed only up to a U+0000, see `trigram_gaps.ts`, in the id window the
 * walk covers), so the hits are identical. Where it cannot, the same LIKE
 * reads the messages by id windows, newest first, until the page is whole
 * (`substring_walk.ts`): again the scan's hits, without reading every
 * message when the page fills early. The words fallback may keep to the
 * messages the trigram index holds (`indexedOnly`): no read of every
 * message for U+0000, and a newer Hermes's trigram index asked as well.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import { conditionSql, type FilterSql } from "./filters.ts";
import { type Condition, coveringWords, positiveWords } from "../../core/search/condition.ts";
import type { HitRow } from "./ranked.ts";
import { isPatternError } from "./query_error.ts";
import { substringSnippet } from "../../core/search/substring_snippet.ts";
import { candidateSource, termKind, trigramIndexUsable } from "./trigram_candidates.ts";
import { inSnapshot } from "./snapshot.ts";
import { FIRST_CHUNK, type WalkBounds, walkCandidates, walkIdWindows } from "./substring_walk.ts";
import { trigramGapsOf } from "./trigram_gaps.ts";
import { holdsItsViewsRows } from "../schema/fts_layout.ts";
import { firstMessageId, lastMessageId } from "../message_ids.ts";
import { idRangeOf, type RangeFilters } from "./id_range.ts";

/** What a substring search needs. */
export interface SubstringQuery {
  /** What a hit contains. */
  readonly condition: Condition;
  /** The filters. */
  readonly filters: FilterSql;
  /** Page size. */
  readonly limit: number;
  /** Hits to skip. */
  readonly offset: number;
  /** Oldest first (`timestamp, id`) instead of Python's newest first. */
  readonly oldest?: boolean;
  /**
   * The session and time filters (also among `filters`), which narrow the
   * ids read (`id_range.ts`); `null` or absent: every id.
   */
  readonly narrow?: RangeFilters | null;
  /** Told how many id windows a walk over them read (for tests). */
  readonly onWindows?: (windows: number) => void;
  /**
   * Whether the search may keep to the messages the trigram index holds
   * (default `false`: every message, as Python's LIKE scan). The words
   * fallback, which Python does not have, does: on a v11 file it does not
   * read every message of the ids walked for those an older SQLite indexed
   * only up to a U+0000 (the word index lacks their text too), and on a
   * newer Hermes's file, whose trigram index leaves out tool rows and the
   * messages of `cron` and `subagent` sessions, that index still names its
   * candidates (`holdsItsViewsRows`).
   */
  readonly indexedOnly?: boolean;
}

/** Which messages the trigram index names candidates among (`undefined`: it cannot be asked). */
type TrigramReach = "every" | "held" | undefined;

/**
 * `"every"` for the v11 trigram table; `"held"` for a newer Hermes's, which
 * a search that may keep to the messages it holds asks for its phrases;
 * else `undefined`.
 */
function trigramReach(store: Store, query: SubstringQuery, cover: readonly string[]): TrigramReach {
  if (trigramIndexUsable(store)) return "every";
  // A newer table's columns are separate texts: only a phrase of three characters or more is
  // sure to be a trigram phrase inside one of them (a pair may end its column).
  const phrases = cover.every((word) => termKind(word) === "phrase");
  const held = query.indexedOnly === true && phrases &&
    holdsItsViewsRows(store.db, "messages_fts_trigram");
  return held ? "held" : undefined;
}

/** The ids a hit can have, ends included. */
interface Ids {
  readonly lo: number;
  readonly hi: number;
  /** Whether the filters narrowed them (else they are the file's). */
  readonly narrowed: boolean;
}

/** How candidates are found. */
export type SubstringStrategy = "auto" | "scan";

function pageSql(
  from: string,
  contains: string,
  filters: string,
  oldest: boolean,
  range = false,
): string {
  return `SELECT m.id AS id, m.timestamp AS timestamp
${from}
JOIN sessions s ON s.id = m.session_id
WHERE ${contains}${range ? " AND m.id >= ? AND m.id <= ?" : ""}${filters}
ORDER BY m.timestamp ${oldest ? "ASC" : "DESC"}, m.id ASC
LIMIT ? OFFSET ?`;
}

/**
 * The page's ids found over trigram candidates (walked where the timeline
 * allows), or `undefined` when only the scan can answer: FTS5 refuses the
 * terms, or the index lacks messages in the window the walk needs.
 */
function candidatePage(
  store: Store,
  query: SubstringQuery,
  cover: readonly string[],
  where: { readonly sql: string; readonly params: readonly SqlValue[] },
  ids: Ids,
  reach: "every" | "held",
): number[] | undefined {
  const { filters, limit, offset, oldest = false } = query;
  const { lo, hi } = ids;
  const candidates = candidateSource(store, cover, { oldest, first: FIRST_CHUNK, lo, hi });
  if (candidates === undefined) return undefined;
  const sql = pageSql(CANDIDATES_FROM, where.sql, filters.sql, oldest);
  const gaps = trigramGapsOf(store);
  const extra = (first: number, last: number): number[] | undefined => {
    if (reach === "held") return [];
    if (!gaps.complete(store, first, last)) return undefined;
    return query.indexedOnly ? [] : gaps.nulRows(store, first, last);
  };
  const walked = walkCandidates(store, candidates, sql, where.params, {
    ...walkBounds(query, ids),
    extra,
  });
  if (walked === "incomplete") return undefined;
  if (walked !== "unordered") return walked.slice(offset);
  // No timeline to walk by: every candidate, if the index misses none.
  const rest = lo > hi ? [] : extra(lo, hi);
  if (rest === undefined) return undefined;
  const all = JSON.stringify([...new Set([...candidates.all(), ...rest])]);
  return store.statement(sql).all(all, ...where.params, limit, offset)
    .map((row) => Number(row.id));
}

/**
 * The page's ids found by reading the messages a window of ids at a time,
 * newest first (oldest first), until the page is whole; `undefined` when
 * the timeline cannot order them (only the scan can answer).
 */
function windowPage(
  store: Store,
  query: SubstringQuery,
  contains: { readonly sql: string; readonly params: readonly SqlValue[] },
  ids: Ids,
): number[] | undefined {
  const { filters, offset, oldest = false } = query;
  const sql = pageSql(SCAN_FROM, contains.sql, filters.sql, oldest, true);
  const walked = walkIdWindows(store, sql, contains.params, filters.params, {
    ...walkBounds(query, ids),
    onWindows: query.onWindows,
  });
  return walked === "unordered" ? undefined : walked.slice(offset);
}

/**
 * What either walk looks for: the hits up to the page's end, within the ids
 * and times the filters leave.
 */
function walkBounds(query: SubstringQuery, ids: Ids): WalkBounds {
  return {
    need: query.offset + query.limit,
    oldest: query.oldest ?? false,
    lo: ids.lo,
    hi: ids.hi,
    since: query.narrow?.since,
    until: query.narrow?.until,
  };
}

/** The ids the filters leave, within the file's (`lo > hi` when none). */
function idsOf(store: Store, narrow: RangeFilters | null | undefined): Ids {
  const { lo, hi } = narrow == null ? { lo: null, hi: null } : idRangeOf(store, narrow);
  return {
    lo: lo ?? firstMessageId(store),
    hi: hi ?? lastMessageId(store),
    narrowed: lo !== null || hi !== null,
  };
}

/** Python's scan of every message. */
const SCAN_FROM = "FROM messages m";
/** Only the candidates, bound as a JSON array of ids. */
const CANDIDATES_FROM = "FROM json_each(?) c JOIN messages m ON m.id = c.value";

const ROWS_SQL = `SELECT m.id AS id, m.session_id AS session_id, m.role AS role,
  substr(m.content, max(1, instr(m.content, ?) - 40), 120) AS snippet,
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started, m.tool_calls AS _tool_calls
FROM messages m JOIN sessions s ON s.id = m.session_id
WHERE m.id IN (SELECT value FROM json_each(?))`;

/**
 * One page of substring hits, newest first, without context. The snippet
 * is 120 characters of content from 40 before the first word's first
 * (case-sensitive) occurrence, or the start. A hit without content (NULL
 * or empty) is cut from the tool name or tool calls that hold a word
 * instead (`core/search/substring_snippet.ts`).
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
  return inSnapshot(store, () => page(store, query, strategy));
}

function page(
  store: Store,
  query: SubstringQuery,
  strategy: SubstringStrategy,
): HitRow[] | undefined {
  const { condition, filters, limit, offset, oldest = false } = query;
  const cover = coveringWords(condition, (word) => termKind(word) !== undefined);
  const reach = strategy === "auto" && cover !== undefined
    ? trigramReach(store, query, cover)
    : undefined;
  const contains = conditionSql(condition);
  const middle = [...contains.params, ...filters.params];
  const range = idsOf(store, query.narrow);
  let ids: number[] | undefined;
  try {
    if (reach !== undefined && cover !== undefined) {
      const where = { sql: contains.sql, params: middle };
      ids = candidatePage(store, query, cover, where, range, reach);
    }
    if (strategy === "auto") ids ??= windowPage(store, query, contains, range);
    const ends = range.narrowed ? [range.lo, range.hi] : [];
    ids ??= store.statement(pageSql(SCAN_FROM, contains.sql, filters.sql, oldest, range.narrowed))
      .all(...contains.params, ...ends, ...filters.params, limit, offset)
      .map((row) => Number(row.id));
  } catch (error) {
    if (isPatternError(error)) return undefined;
    throw error;
  }
  if (ids.length === 0) return [];
  const words = positiveWords(condition);
  const byId = new Map<number, HitRow>();
  for (const row of store.statement(ROWS_SQL).all(words[0], JSON.stringify(ids))) {
    const fields = {
      contentSnippet: row.snippet,
      toolName: row.tool_name,
      toolCalls: row._tool_calls,
    };
    row.snippet = substringSnippet(fields, words);
    byId.set(Number(row.id), row);
  }
  return ids.map((id) => byId.get(id)).filter((row): row is HitRow => row !== undefined);
}
