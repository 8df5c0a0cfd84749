/**
 * The page of a substring search found by walking the messages from the
 * newest id (or the oldest) in growing chunks, stopping as soon as the page
 * is strictly newer (older) than every message not yet looked at, as the
 * connection's {@linkcode MessageTimeline} bounds them: the same hits in the
 * same order (`timestamp`, then id ascending, as Python's scan returns
 * ties) as the scan of every message, which sorts them all. Two walks:
 *
 * - over trigram candidates ({@linkcode walkCandidates}): the LIKE runs over
 *   a few hundred candidates instead of all of them;
 * - over id windows ({@linkcode walkIdWindows}), where no index can name
 *   candidates (one character; a file whose trigram index leaves messages
 *   out, as a newer Hermes's does): the LIKE runs over the newest messages
 *   first, and a word found often is answered without reading the rest.
 *
 * @module
 */
import type { Store } from "../store.ts";
import type { SqlValue } from "../driver/types.ts";
import { type MessageTimeline, timelineOf } from "./timeline.ts";
import type { CandidateSource } from "./trigram_candidates.ts";

/** Candidates in the first chunk; each next chunk is twice as large. */
export const FIRST_CHUNK = 256;

interface Found {
  readonly id: number;
  readonly timestamp: number;
}

/** The page a walk looks for, and the ids it covers. */
export interface WalkBounds {
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
}

/** How a walk over id windows finds its page. */
export interface WindowWalkOptions extends WalkBounds {
  /** Told how many windows the walk read, once it ends (for tests). */
  readonly onWindows?: (windows: number) => void;
}

/** How a walk over candidates finds its page. */
export interface WalkOptions extends WalkBounds {
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

/** Ids in the first id window of {@linkcode walkIdWindows}; each next window is twice as wide. */
export const FIRST_WINDOW = 4096;

/**
 * The best hits found so far, in page order, and whether the messages not
 * yet looked at can still change them.
 */
class PageSoFar {
  readonly #need: number;
  readonly #oldest: boolean;
  readonly #since: number | null | undefined;
  readonly #until: number | null | undefined;
  readonly #timeline: MessageTimeline;
  #best: Found[] = [];

  constructor(timeline: MessageTimeline, options: WalkBounds) {
    this.#timeline = timeline;
    this.#need = options.need;
    this.#oldest = options.oldest;
    this.#since = options.since;
    this.#until = options.until;
  }

  /** Takes in the rows of one chunk (`id`, `timestamp`), keeping the first `need`. */
  add(rows: Iterable<Record<string, unknown>>): void {
    const oldest = this.#oldest;
    for (const row of rows) {
      this.#best.push({ id: Number(row.id), timestamp: Number(row.timestamp) });
    }
    this.#best.sort((a, b) =>
      a.timestamp !== b.timestamp
        ? (oldest ? a.timestamp - b.timestamp : b.timestamp - a.timestamp)
        : a.id - b.id
    );
    if (this.#best.length > this.#need) this.#best = this.#best.slice(0, this.#need);
  }

  /**
   * Whether the page is whole: `need` hits, the last strictly newer (older)
   * than every message beyond `edge`, the id the walk has reached (below it
   * when newest first, above it when oldest first).
   */
  whole(store: Store, edge: number): boolean {
    if (this.#best.length < this.#need) return false;
    const last = this.#best[this.#need - 1].timestamp;
    return this.#oldest
      ? last < this.#timeline.earliestAbove(store, edge, { after: this.#since })
      : last > this.#timeline.latestBelow(store, edge, { before: this.#until });
  }

  /** The page's ids, in page order. */
  ids(): number[] {
    return this.#best.map((found) => found.id);
  }
}

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
  const statement = store.statement(sql);
  const page = new PageSoFar(timeline, options);
  /** The id the previous window ended at (exclusive: the next window starts beyond it). */
  let reached = oldest ? lo - 1 : hi + 1;
  for (let size = FIRST_CHUNK;; size *= 2) {
    const chunk = candidates.next(size);
    const final = chunk.length < size;
    const edge = final ? (oldest ? hi : lo) : chunk[chunk.length - 1];
    const more = oldest
      ? extra(reached + 1, Math.min(edge, hi))
      : extra(Math.max(edge, lo), reached - 1);
    if (more === undefined) return "incomplete";
    reached = edge;
    const ids = more.length === 0 ? chunk : [...new Set([...chunk, ...more])];
    if (ids.length > 0) page.add(statement.all(JSON.stringify(ids), ...params, need, 0));
    if (final || page.whole(store, edge)) break;
  }
  return page.ids();
}

/**
 * The ids of the first `need` hits, found by reading the messages a window
 * of ids at a time, from `hi` down (from `lo` up when oldest first), each
 * window twice as wide as the one before ({@linkcode FIRST_WINDOW} first),
 * until the page is whole; `"unordered"` when the timeline cannot be
 * trusted (the caller sorts every hit instead).
 *
 * @param store The open store, inside the search's read transaction.
 * @param sql The page statement over one id window: its parameters are
 *   `before`, the window's lowest and highest id, `after`, then limit and
 *   offset; its rows have `id` and `timestamp`, in page order.
 * @param before The parameters ahead of the window's ids.
 * @param after The parameters between the window's ids and the limit.
 * @param options How many hits, which end first, the id range, and who is
 *   told how many windows were read.
 * @returns The ids, in page order, or `"unordered"`.
 * @throws {SqliteError} On a storage failure.
 */
export function walkIdWindows(
  store: Store,
  sql: string,
  before: readonly SqlValue[],
  after: readonly SqlValue[],
  options: WindowWalkOptions,
): number[] | "unordered" {
  const { need, oldest, lo, hi } = options;
  if (need === 0 || lo > hi) return [];
  const timeline = timelineOf(store);
  if (!timeline.refresh(store)) return "unordered";
  const statement = store.statement(sql);
  const page = new PageSoFar(timeline, options);
  let from = oldest ? lo : hi;
  let windows = 0;
  for (let width = FIRST_WINDOW;; width *= 2) {
    const to = oldest ? Math.min(hi, from + width - 1) : Math.max(lo, from - width + 1);
    const [first, last] = oldest ? [from, to] : [to, from];
    page.add(statement.all(...before, first, last, ...after, need, 0));
    windows++;
    if (oldest ? to >= hi : to <= lo) break;
    // Every message from the walk's start to `to` has been looked at.
    if (page.whole(store, to)) break;
    from = oldest ? to + 1 : to - 1;
  }
  options.onWindows?.(windows);
  return page.ids();
}
