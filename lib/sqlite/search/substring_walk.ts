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

/** Candidates in the first chunk; each next chunk is twice as large. */
const FIRST_CHUNK = 256;

interface Found {
  readonly id: number;
  readonly timestamp: number;
}

/**
 * The ids of the first `need` hits, or `undefined` when the timeline cannot
 * be trusted (the caller then runs the statement over every candidate).
 *
 * @param store The open store, inside the search's read transaction.
 * @param candidates The candidate ids (any order).
 * @param sql The page statement: its first parameter is a JSON array of
 *   candidate ids, its last two limit and offset; its rows have `id` and
 *   `timestamp`, in page order.
 * @param params The parameters between the candidates and the limit.
 * @param options How many hits, and which end first.
 * @returns The ids, in page order.
 * @throws {SqliteError} On a storage failure.
 */
export function walkCandidates(
  store: Store,
  candidates: readonly number[],
  sql: string,
  params: readonly SqlValue[],
  options: { readonly need: number; readonly oldest: boolean },
): number[] | undefined {
  const { need, oldest } = options;
  if (need === 0) return [];
  const timeline = timelineOf(store);
  if (!timeline.refresh(store)) return undefined;
  const order = [...candidates].sort((a, b) => oldest ? a - b : b - a);
  const compare = (a: Found, b: Found) =>
    a.timestamp !== b.timestamp
      ? (oldest ? a.timestamp - b.timestamp : b.timestamp - a.timestamp)
      : a.id - b.id;
  const statement = store.statement(sql);
  let best: Found[] = [];
  let size = FIRST_CHUNK;
  for (let start = 0; start < order.length; start += size, size *= 2) {
    const chunk = order.slice(start, start + size);
    for (const row of statement.all(JSON.stringify(chunk), ...params, need, 0)) {
      best.push({ id: Number(row.id), timestamp: Number(row.timestamp) });
    }
    best.sort(compare);
    if (best.length > need) best = best.slice(0, need);
    if (best.length === need && start + size < order.length) {
      const last = best[need - 1].timestamp;
      const edge = chunk[chunk.length - 1];
      if (
        oldest
          ? last < timeline.earliestAbove(store, edge)
          : last > timeline.latestBelow(store, edge)
      ) {
        break;
      }
    }
  }
  return best.map((found) => found.id);
}
