/**
 * Full-text search over every message (SPEC §5 "Search"): user text is
 * sanitized, routed to the unicode61 index, the trigram index or substring
 * matching (see `plan.ts`), filtered, paged, and each hit gets the messages
 * around it.
 *
 * @module
 */
import type { Store } from "../store.ts";
import { checkCount, checkSeconds } from "../../core/paging.ts";
import type { SearchHit } from "../../core/types.ts";
import {
  planSearch,
  type SearchPlan,
  type SubstringPlan,
  wordsFallback,
} from "../../core/search/plan.ts";
import { FTS_TABLE_OF, substringPlan, withIndexesPresent } from "./missing_index.ts";
import { mayBeFtsDamage } from "../fts_stale.ts";
import { type FilterSql, filterSql, type SearchFilters, visibilityOf } from "./filters.ts";
import { countMatches, type HitRow, rankedPage } from "./ranked.ts";
import { substringPage, type SubstringStrategy } from "./substring.ts";
import { trigramIndexUsable } from "./trigram_candidates.ts";
import { hitContexts } from "./context.ts";
import { sortedPage, type SortStrategy } from "./sorted.ts";
import { checkSort } from "../../core/search/options.ts";
import { idRangeOf } from "./id_range.ts";
import { pageOverRanges, sourceRangesOf } from "./source_ranges.ts";
import { inSnapshot } from "./snapshot.ts";
import { cutLongSnippets, longTextBytes } from "./long_snippet.ts";
import { wholeMatchSnippets } from "./whole_match.ts";
import { holdsItsViewsRows, longTextColumns } from "../schema/fts_layout.ts";
import { phraseCount } from "../../core/search/repeated_phrases.ts";
import type { SearchOptions, SearchSort } from "../../core/search/options.ts";
import { rowsWithBlobsAsText } from "../../core/blob_text.ts";

function normalizeFilters(store: Store, options: SearchOptions): SearchFilters {
  const roles = options.roleFilter ?? null;
  return {
    sources: options.sourceFilter ?? null,
    excludeSources: options.excludeSources ?? null,
    roles: roles !== null && roles.length > 0 ? roles : null,
    ...visibilityOf(store, options.includeInactive),
    sessionId: options.sessionId ?? null,
    since: checkSeconds("search messages", "since", options.since),
    until: checkSeconds("search messages", "until", options.until),
  };
}

type RankedPlan = Extract<SearchPlan, { kind: "ranked" }>;

function rankedRows(
  store: Store,
  plan: RankedPlan,
  page: { filters: FilterSql; narrow: SearchFilters | null; limit: number; offset: number },
  order: { sort: SearchSort; strategy: SortStrategy | undefined; byRanges: boolean },
  onLongCut?: (count: number) => void,
): HitRow[] | undefined {
  const { filters, narrow, limit, offset } = page;
  // The range is read in the snapshot the page is read in.
  return inSnapshot(store, () => {
    const table = FTS_TABLE_OF[plan.index];
    const query = {
      table,
      check: plan.check,
      filters,
      session: narrow?.sessionId ?? null,
      ids: narrow === null ? undefined : idRangeOf(store, narrow),
      since: narrow?.since ?? null,
      until: narrow?.until ?? null,
      sources: order.byRanges ? narrow?.sources ?? null : null,
      limit,
      offset,
      // Long texts' snippets cut here, unless the table is laid out in a way the cut does not
      // know (long_snippet.ts).
      cutLong: longTextColumns(store.db, table),
    };
    const run = (match: string) => {
      // A query the cut cannot read (a column filter, `doc*ker`) keeps FTS5's snippet.
      const phrases = phraseCount(match);
      const cutLong = phrases === undefined ? undefined : query.cutLong;
      // The more phrases, the shorter a text FTS5's snippet() is left (long_snippet.ts).
      const page = { ...query, match, cutLong, longBytes: longTextBytes(phrases ?? 1) };
      // A source of few sessions: its sessions' ids only (source_ranges.ts).
      const ranges = order.sort === "rank" ? sourceRangesOf(store, page) : undefined;
      const rows = ranges !== undefined
        ? pageOverRanges(store, page, ranges)
        : order.sort === "rank"
        ? rankedPage(store, page)
        : sortedPage(store, page, order.sort, order.strategy);
      if (rows !== undefined && cutLong !== undefined) {
        // FTS5's snippets that may cut a match, then the long texts' (whole_match.ts).
        wholeMatchSnippets(store, rows, table, match, cutLong);
        const count = cutLongSnippets(rows, table, match, cutLong);
        onLongCut?.(count);
      }
      return rows;
    };
    const rows = run(plan.expression);
    if (rows !== undefined || plan.retry === undefined) return rows;
    return run(plan.retry);
  });
}

/**
 * How many messages the ranked `plan` matches with these filters, up to
 * `cap`, without ranking them; `undefined` when FTS5 rejects the query and
 * its retry.
 */
function rankedCount(
  store: Store,
  plan: RankedPlan,
  narrow: SearchFilters,
  filters: FilterSql,
  cap: number,
): number | undefined {
  return inSnapshot(store, () => {
    const table = FTS_TABLE_OF[plan.index];
    const count = (match: string) => {
      const counted = {
        table,
        match,
        check: plan.check,
        filters,
        ids: idRangeOf(store, narrow),
        limit: cap,
        offset: 0,
      };
      return countMatches(store, counted, cap);
    };
    const first = count(plan.expression);
    if (first !== undefined || plan.retry === undefined) return first;
    return count(plan.retry);
  });
}

/**
 * The substring plan a words query falls back to when the word index finds
 * nothing for it (`wordsFallback`), where the trigram index can name its
 * candidates; `undefined` elsewhere (an older file keeps Python's answer).
 * Its search keeps to the messages the trigram index holds
 * (`SubstringQuery.indexedOnly`): a word found nowhere reads no message,
 * and a newer Hermes's trigram index, which leaves out tool rows and the
 * messages of `cron` and `subagent` sessions, serves it too.
 */
function wordsFallbackOf(store: Store, query: string): SubstringPlan | undefined {
  const fallback = wordsFallback(query);
  if (fallback === undefined) return undefined;
  const usable = trigramIndexUsable(store) ||
    holdsItsViewsRows(store.db, FTS_TABLE_OF.trigram);
  return usable ? fallback : undefined;
}

/** Internal options of {@linkcode searchMessages}, for tests. */
export interface SearchInternals {
  /** How substring candidates are found (`"scan"`: Python's full scan). */
  readonly substring?: SubstringStrategy;
  /** How a page in time order is found (`"full"`: sort every match). */
  readonly sort?: SortStrategy;
  /** `"none"`: the index is read whole, the filters alone narrow it (`id_range.ts`). */
  readonly idRange?: "auto" | "none";
  /** `"none"`: a source of few sessions is not read over their ids (`source_ranges.ts`). */
  readonly sourceRanges?: "auto" | "none";
  /** Told how many of a page's snippets were cut in TypeScript (`long_snippet.ts`). */
  readonly onLongCut?: (count: number) => void;
  /** Told how many id windows a substring search read (`substring_walk.ts`). */
  readonly onWindows?: (windows: number) => void;
}

/** Implements `SessionDB.searchMessages`: plan, filter, page, contexts (`internals`: for tests). */
export function searchMessages(
  store: Store,
  query: string,
  options: SearchOptions = {},
  internals: SearchInternals = {},
): SearchHit[] {
  const limit = checkCount("search messages", "limit", options.limit ?? 20);
  const offset = checkCount("search messages", "offset", options.offset ?? 0);
  const sort = checkSort(options.sort);
  const normalized = normalizeFilters(store, options);
  const filters = filterSql(normalized);
  // The session and time filters narrow the ids read (id_range.ts).
  const narrow = internals.idRange === "none" ? null : normalized;
  let plan = withIndexesPresent(store, planSearch(query), query);
  if (plan.kind === "nothing") return [];
  let rows: HitRow[] | undefined;
  let fellBack = false;
  if (plan.kind === "ranked") {
    try {
      rows = rankedRows(store, plan, { filters, narrow, limit, offset }, {
        sort,
        strategy: internals.sort,
        byRanges: internals.sourceRanges !== "none",
      }, internals.onLongCut);
      // Nothing by the word index (not merely past its last hit): the words by substring.
      const fallback = rows?.length === 0 ? wordsFallbackOf(store, query) : undefined;
      if (
        fallback !== undefined &&
        (offset === 0 || rankedCount(store, plan, normalized, filters, 1) === 0)
      ) {
        plan = fallback;
        fellBack = true;
      }
    } catch (error) {
      // A damaged index (not yet marked stale by a write): read by substring.
      if (!mayBeFtsDamage(error)) throw error;
      plan = substringPlan(query);
    }
  }
  if (plan.kind === "substring") {
    const page = {
      condition: plan.condition,
      filters,
      limit,
      offset,
      oldest: sort === "oldest",
      narrow,
      onWindows: internals.onWindows,
      indexedOnly: fellBack,
    };
    try {
      rows = substringPage(store, page, internals.substring);
    } catch (error) {
      // The trigram index that names candidates is damaged: scan instead.
      if (!mayBeFtsDamage(error)) throw error;
      rows = substringPage(store, page, "scan");
    }
  }
  if (rows === undefined || rows.length === 0) return [];
  const contexts = hitContexts(store, rows.map((row) => Number(row.id)));
  // A BLOB where text belongs (Python's sqlite3 stores `bytes` so) is shown as its UTF-8 text.
  return rowsWithBlobsAsText(rows).map((row, i) => ({
    id: row.id as number,
    session_id: row.session_id as string,
    role: row.role as string,
    snippet: row.snippet as string | null,
    timestamp: row.timestamp as number,
    tool_name: row.tool_name as string | null,
    source: row.source as string,
    model: row.model as string | null,
    session_started: row.session_started as number,
    context: contexts[i],
  }));
}

/**
 * How many hits {@linkcode searchMessages} finds with these filters, up to
 * `upTo`, without reading a snippet or a context (a search past its last
 * hit says how many there are): a ranked query counts its matches in one
 * statement, without ranking them.
 *
 * @param store The open store.
 * @param query What the user typed.
 * @param options The filters (`limit`, `offset` and `sort` do not count).
 * @param upTo The most hits to count.
 * @returns The count, at most `upTo`.
 */
export function countSearchHits(
  store: Store,
  query: string,
  options: SearchOptions,
  upTo: number,
): number {
  const cap = checkCount("count search hits", "upTo", upTo);
  const normalized = normalizeFilters(store, options);
  const filters = filterSql(normalized);
  let plan = withIndexesPresent(store, planSearch(query), query);
  if (plan.kind === "nothing" || cap === 0) return 0;
  let fellBack = false;
  if (plan.kind === "ranked") {
    try {
      const counted = rankedCount(store, plan, normalized, filters, cap);
      if (counted !== 0) return counted ?? 0;
      // Nothing by the word index: the words by substring, as the search reads them.
      const fallback = wordsFallbackOf(store, query);
      fellBack = fallback !== undefined;
      plan = fallback ?? plan;
    } catch (error) {
      // A damaged index (not yet marked stale by a write): read by substring, as a search does.
      if (!mayBeFtsDamage(error)) throw error;
      plan = substringPlan(query);
    }
  }
  if (plan.kind !== "substring") return 0;
  const page = {
    condition: plan.condition,
    filters,
    limit: cap,
    offset: 0,
    narrow: normalized,
    indexedOnly: fellBack,
  };
  let rows: HitRow[] | undefined;
  try {
    rows = substringPage(store, page);
  } catch (error) {
    if (!mayBeFtsDamage(error)) throw error;
    rows = substringPage(store, page, "scan");
  }
  return rows?.length ?? 0;
}
