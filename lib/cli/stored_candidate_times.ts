/**
 * A prune candidate's times as the file holds them, for `prune --dry-run
 * --json`: a time another writer stored as text reads as `NaN` in the
 * candidate (printed as `null`), and is shown as that text instead, as
 * `list --json` shows it.
 *
 * @module
 */
import type { PruneCandidate } from "../core/prune_options.ts";
import type { SessionStore } from "../core/session_store.ts";

/** A prune candidate with its times as stored: a number, or what else the column holds. */
export type StoredCandidate = Omit<PruneCandidate, "started_at" | "ended_at"> & {
  /** When it started, as stored. */
  started_at: unknown;
  /** When it ended, as stored. */
  ended_at: unknown;
};

/**
 * Gives back `candidates` with any time that is not a number read again
 * from the session's row (one read per such candidate only).
 *
 * @param store The store the candidates were listed from.
 * @param candidates The candidates.
 * @returns The candidates, in order, their times as the file holds them.
 */
export async function withStoredTimes(
  store: Pick<SessionStore, "getSession">,
  candidates: readonly PruneCandidate[],
): Promise<StoredCandidate[]> {
  const shown: StoredCandidate[] = [];
  for (const candidate of candidates) {
    if (Number.isFinite(candidate.started_at) && Number.isFinite(candidate.ended_at)) {
      shown.push(candidate);
      continue;
    }
    const row = await store.getSession(candidate.id);
    shown.push({
      ...candidate,
      started_at: row === undefined ? candidate.started_at : row.started_at,
      ended_at: row === undefined ? candidate.ended_at : row.ended_at,
    });
  }
  return shown;
}
