/**
 * `prune` in steps, oldest sessions first, so that Ctrl-C can stop it
 * between two steps and say how many sessions went. Each step is a
 * `pruneSessions` of its own (its batches each one transaction) with the
 * age cut at the start time of the next step's first session; the last step
 * is the prune asked for, its cutoff the one of the listing, so the same
 * sessions go as in one call made when the candidates were listed.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { PruneCandidate } from "../core/prune_options.ts";
import { delay } from "../core/delay.ts";

/** Sessions a step deletes, about: Ctrl-C waits for at most one step. */
export const STEP_SESSIONS = 250;

/** What {@linkcode pruneInSteps} prunes, and how it reports. */
export interface PruneSteps {
  /** The age asked for, in days. */
  readonly days: number;
  /**
   * When the candidates were listed (the store's clock, read just before):
   * the cutoff stays `days` before this time, however long the question or
   * the steps take, so that no session younger than the listed ones goes.
   */
  readonly listedAt: number;
  /** Only this source, or every one. */
  readonly source: string | null;
  /** The transcript folder, as `pruneSessions` takes it. */
  readonly sessionsDir: string | null;
  /** The store's clock, in seconds. */
  readonly now: () => number;
  /** True once the run should stop (checked after each step, once the event loop has turned). */
  readonly stopped: () => boolean;
  /** Told the sessions pruned so far after each step. */
  readonly onStep?: (pruned: number) => void;
}

/**
 * The start times at which the steps before the last one stop: every
 * {@linkcode STEP_SESSIONS}th candidate's, oldest first, each later than the
 * one before (sessions that share a start time go in the same step).
 *
 * @param candidates The sessions the prune deletes.
 * @returns The boundaries, ascending.
 */
export function stepBoundaries(candidates: readonly PruneCandidate[]): number[] {
  const starts = candidates.map((c) => c.started_at).sort((a, b) => a - b);
  const boundaries: number[] = [];
  for (let i = STEP_SESSIONS; i < starts.length; i += STEP_SESSIONS) {
    if (boundaries.length === 0 || starts[i] > boundaries[boundaries.length - 1]) {
      boundaries.push(starts[i]);
    }
  }
  return boundaries;
}

/**
 * Prunes the ended sessions older than `days` (of `source`), the oldest
 * first, a step at a time, until done or `stopped()`.
 *
 * @param store The store, open for writing.
 * @param candidates The sessions the prune deletes (`pruneCandidates`), for the steps' sizes.
 * @param steps The prune and its stop and report callbacks.
 * @returns How many sessions were pruned, and whether the last step was done
 *   (false when stopped before it).
 */
export async function pruneInSteps(
  store: Pick<SessionStore, "pruneSessions">,
  candidates: readonly PruneCandidate[],
  steps: PruneSteps,
): Promise<{ pruned: number; finished: boolean }> {
  const { source, sessionsDir } = steps;
  let pruned = 0;
  for (const boundary of stepBoundaries(candidates)) {
    // Sessions started before `boundary`: candidates all, as it is older than the asked age.
    const olderThanDays = Math.max(0, (steps.now() - boundary) / 86400);
    pruned += await store.pruneSessions({ olderThanDays, source, sessionsDir });
    steps.onStep?.(pruned);
    // A turn of the event loop: a signal's listener runs there (a step of one transaction
    // awaits nothing else, and the steps ran on to the end, Ctrl-C unheard).
    await delay(0);
    if (steps.stopped()) return { pruned, finished: false };
  }
  // The age asked for, plus the time since the listing: the cutoff of the listing.
  const since = Math.max(0, steps.now() - steps.listedAt) / 86400;
  pruned += await store.pruneSessions({ olderThanDays: steps.days + since, source, sessionsDir });
  steps.onStep?.(pruned);
  return { pruned, finished: true };
}
