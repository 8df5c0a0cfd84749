/**
 * The page of a substring search over trigram candidates, found by walking
 * the candidates from the newest id (or the oldest) in growing chunks and
 * stopping as soon as the page is strictly newer (older) than every
 * candidate not yet looked at, as the connection's
 * {@linkcode MessageTimeline} bounds them. The LIKE then runs over a few
 * hundred candidates instead of all of them, with the same hits in the same
 * order (`timestamp`, then id ascending, as Python's scan returns ties).
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import { timelineOf } from "./timeline.ts";
import type { CandidateSource } from "./trigram_candidates.ts";

/** Candidates in the first chunk; each next chunk is twice as large. */
export const FIRST_CHUNK = 256;

interface Found {
  readonly id: number;
  readonly timestamp: number;
}

/** How a walk finds its page. */
export interface WalkOptions {
  /** How many hits (offset plus limit). */
  readonly need: number;
  /** Oldest first instead of newest first. */
  readonly oldest: boolean;
  /** The lowest id a hit can have (the walk's far end, or its start when oldest first). */
  readonly lo: number;
  /** The highest id a hit can have. */
  readonly hi: number;
  /** The time filter's bounds, if any: the walk need not wait for messages outside them. */
  readonly since?: number | null;
  /** See `since`. */
  readonly until?: number | null;
  /**
   * More candidates the index cannot name, asked for by id window as the
   * walk reaches it (`from` to `to`, inclusive, within `lo` to `hi`);
   * `undefined` when the index may miss messages of the window.
   */
  readonly extra: (from: number, to: number) => readonly number[] | undefined;
}

/**
 * What a walk gives: the page's ids; `"unordered"` when the timeline cannot
 * be trusted (every candidate must be looked at); `"incomplete"` when the
 * index may miss messages the page needs (only the scan can answer).
 */
export type WalkResult = number[] | "unordered" | "incomplete";

/**
 * The ids of the first `need` hits (see {@linkcode WalkResult} for the
 * other answers).
 * Each chunk covers an id window: from the previous chunk's last candidate
 * to its own (the last chunk, to the far end of the range: `lo` to `hi`,
 * within which every hit lies), and the `extra` candidates of that window
 * are looked at with it.
 *
 * @param store The open store, inside the search's read transaction.
 * @param candidates The candidate ids the index names, in walk order
 *   (its first chunk asked for is {@linkcode FIRST_CHUNK}).
 * @param sql The page statement: its first parameter is a JSON array of
 *   candidate ids, its last two limit and offset; its rows have `id` and
 *   `timestamp`, in page order.
 * @param params The parameters between the candidates and the limit.
 * @param options How many hits, which end first, the id range, and the extra candidates.
 * @returns The ids, in page order, or why there are none.
 * @throws {SqliteError} On a storage failure.
 */
export function walkCandidates(
  store: Store,
  candidates: CandidateSource,
  sql: string,
  params: readonly SqlValue[],
  options: WalkOptions,
): WalkResult {
  const { need, oldest, extra, lo, hi } = options;
  if (need === 0 || lo > hi) return [];
  const timeline = timelineOf(store);
  if (!timeline.refresh(store)) return "unordered";
  const compare = (a: Found, b: Found) =>
    a.timestamp !== b.timestamp
      ? (oldest ? a.timestamp - b.timestamp : b.timestamp - a.timestamp)
      : a.id - b.id;
  const statement = store.statement(sql);
  let best: Found[] = [];
  /** The id the previous window ended at (exclusive: the next window starts beyond it). */
  let reached = oldest ? lo - 1 : hi + 1;
  let size = FIRST_CHUNK;
  for (;; size *= 2) {
    const chunk = candidates.next(size);
    const final = chunk.length < size;
    const edge = final ? (oldest ? hi : lo) : chunk[chunk.length - 1];
    const more = oldest
      ? extra(reached + 1, Math.min(edge, hi))
      : extra(Math.max(edge, lo), reached - 1);
    if (more === undefined) return "incomplete";
    reached = edge;
    const ids = more.length === 0 ? chunk : [...new Set([...chunk, ...more])];
    if (ids.length > 0) {
      for (const row of statement.all(JSON.stringify(ids), ...params, need, 0)) {
        best.push({ id: Number(row.id), timestamp: Number(row.timestamp) });
      }
    }
    best.sort(compare);
    if (best.length > need) best = best.slice(0, need);
    if (final) break;
    if (best.length === need) {
      const last = best[need - 1].timestamp;
      if (
        oldest
          ? last < timeline.earliestAbove(store, edge, { after: options.since })
          : last > timeline.latestBelow(store, edge, { before: options.until })
      ) {
        break;
      }
    }
  }
  return best.map((found) => found.id);
}
