/**
 * The message ids a filtered search can find, so that FTS5 reads only that
 * part of its index: a time filter or one session narrows a frequent
 * word's hundreds of thousands of matches to the few in range, which FTS5
 * finds from the index alone, where the filter would test each match
 * against its message (`search docker --since 7d` on a file of a million
 * messages ranked and tested all 275,622 matches: 1.2 s for no hit).
 *
 * The range only narrows what is read; the filters still decide every hit,
 * and bm25's statistics are the whole table's either way (FTS5 counts each
 * phrase's documents over the whole index), so the hits and their order
 * are the same.
 *
 * A session's range is its first and last message id. A time bound becomes
 * an id bound only when it can be proven: the first message at or after
 * `since` is found by bisecting ids (as if timestamps grew with ids), and
 * the bound holds when no earlier message is that late, which the
 * connection's {@linkcode MessageTimeline} shows in a few index seeks where
 * messages are in time order (it is the timeline the time-sorted walk
 * uses). Where they are not (imports, backdated rows), or proving it would
 * look into more than {@linkcode MAX_SEEKS} sessions (a bound in the middle
 * of a file with many sessions), the bound is left open: correct, and as
 * slow as before.
 *
 * @module
 */
import type { Store } from "../store.ts";
import { timelineOf } from "./timeline.ts";

/** The ids every match of a search lies between (`null`: open at that end). */
export interface IdRange {
  /** Every match has an id at least this. */
  readonly lo: number | null;
  /** Every match has an id at most this. */
  readonly hi: number | null;
}

/** The filters that narrow the ids. */
export interface RangeFilters {
  /** Only this session's messages. */
  readonly sessionId?: string | null;
  /** Only messages at or after this time. */
  readonly since?: number | null;
  /** Only messages before this time. */
  readonly until?: number | null;
}

/** Sessions looked into at most to prove a time bound. */
export const MAX_SEEKS = 2_500;

/** A time bound is worth proving when it leaves out at least this share of the ids. */
const WORTH = 1 / 8;

const SESSION_SQL = "SELECT min(id) AS lo, max(id) AS hi FROM messages WHERE session_id = ?";
/** Two subqueries: one statement with both min() and max() would read every row. */
const ENDS_SQL =
  "SELECT (SELECT min(id) FROM messages) AS lo, (SELECT max(id) FROM messages) AS hi";
/**
 * Sessions started at or after (or before) a time, counted up to a limit:
 * each is looked into by the proof (its messages are at or after its start),
 * so more than {@linkcode MAX_SEEKS} of them mean the proof would give up.
 * Checked first, as it costs one index range where the proof first reads
 * every session's end (once per connection).
 */
const STARTED_SINCE_SQL =
  "SELECT count(*) AS n FROM (SELECT 1 FROM sessions WHERE started_at >= ? LIMIT ?)";
const STARTED_UNTIL_SQL =
  "SELECT count(*) AS n FROM (SELECT 1 FROM sessions WHERE started_at < ? LIMIT ?)";

function fewSessions(store: Store, sql: string, t: number): boolean {
  return Number(store.statement(sql).get(t, MAX_SEEKS + 1)?.n) <= MAX_SEEKS;
}

/** The first message at or after an id. */
const NEXT_SQL = "SELECT id, timestamp FROM messages WHERE id >= ? ORDER BY id LIMIT 1";

/**
 * The first id (from `lo` to `hi + 1`) whose next message is at or after
 * `t`, as if timestamps grew with ids: a guess that the caller proves.
 */
function firstAtOrAfter(store: Store, t: number, lo: number, hi: number): number {
  let a = lo, b = hi + 1;
  while (a < b) {
    const mid = Math.floor((a + b) / 2);
    const row = store.statement(NEXT_SQL).get(mid);
    if (row === undefined || Number(row.timestamp) >= t) b = mid;
    else a = mid + 1;
  }
  return a;
}

/**
 * The range of ids that `filters` leaves to search, inside the caller's
 * read transaction (the range is true of the snapshot it was read in).
 *
 * @param store The open store, in a read transaction.
 * @param filters The session and time filters.
 * @returns The range; `{ lo: null, hi: null }` when nothing narrows it. An
 *   empty range (`lo > hi`) when nothing can match.
 * @throws {SqliteError} On a storage failure.
 */
export function idRangeOf(store: Store, filters: RangeFilters): IdRange {
  let lo: number | null = null, hi: number | null = null;
  const { sessionId, since, until } = filters;
  if (sessionId != null) {
    const row = store.statement(SESSION_SQL).get(sessionId);
    if (row?.lo == null) return { lo: 1, hi: 0 };
    lo = Number(row.lo);
    hi = Number(row.hi);
  }
  if (since == null && until == null) return { lo, hi };
  const ends = store.statement(ENDS_SQL).get();
  if (ends?.lo == null) return { lo, hi };
  const first = Number(ends.lo), last = Number(ends.hi);
  const worth = Math.max(1, Math.floor((last - first + 1) * WORTH));
  const timeline = timelineOf(store);
  if (!timeline.refresh(store)) return { lo, hi };
  if (since != null) {
    const from = firstAtOrAfter(store, since, first, last);
    // Every message below `from` is earlier than `since`: none of them can match.
    if (
      from - first >= worth && (lo === null || from > lo) &&
      fewSessions(store, STARTED_SINCE_SQL, since) &&
      timeline.latestBelow(store, from, { maxSeeks: MAX_SEEKS }) < since
    ) {
      lo = from;
    }
  }
  if (until != null) {
    const to = firstAtOrAfter(store, until, first, last) - 1;
    // Every message above `to` is at or after `until`: none of them can match.
    if (
      last - to >= worth && (hi === null || to < hi) &&
      fewSessions(store, STARTED_UNTIL_SQL, until) &&
      timeline.earliestAbove(store, to, { maxSeeks: MAX_SEEKS }) >= until
    ) {
      hi = to;
    }
  }
  return { lo, hi };
}
