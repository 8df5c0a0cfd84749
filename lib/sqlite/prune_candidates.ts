/**
 * The sessions `pruneSessions` would delete, without deleting them
 * (`hermes-state prune --dry-run`, and the count the prompt shows).
 *
 * @module
 */
import type { Store } from "./store.ts";

/** Options of {@linkcode pruneCandidates}: the same as `pruneSessions`. */
export interface PruneCandidatesOptions {
  /**
   * Age in days: sessions started before now minus this many days.
   * @default {90}
   */
  olderThanDays?: number;
  /** Only this source (a blank value means every source, as in Python). */
  source?: string | null;
}

/** A session that pruning would delete. */
export interface PruneCandidate {
  /** The session id. */
  id: string;
  /** Its source. */
  source: string;
  /** Its title, or `null`. */
  title: string | null;
  /** When it started (Unix seconds). */
  started_at: number;
  /** When it ended (Unix seconds). */
  ended_at: number;
  /** Why it ended. */
  end_reason: string | null;
  /** Its `message_count` column. */
  message_count: number;
}

/** Implements `SessionDB.pruneCandidates`: the rows `pruneSessions` would delete. */
export function pruneCandidates(
  store: Store,
  options: PruneCandidatesOptions = {},
): PruneCandidate[] {
  const days = options.olderThanDays ?? 90;
  if (typeof days !== "number" || !Number.isFinite(days) || days < 0) {
    throw new RangeError(
      `Cannot list prune candidates: olderThanDays must be a non-negative number: current value is ${days}`,
    );
  }
  const cutoff = store.now() - days * 86400;
  const bySource = options.source ? " AND source = ?" : "";
  const sql = "SELECT id, source, title, started_at, ended_at, end_reason, message_count " +
    `FROM sessions WHERE started_at < ? AND ended_at IS NOT NULL${bySource} ORDER BY started_at, id`;
  const params = options.source ? [cutoff, options.source] : [cutoff];
  return store.statement(sql).all(...params).map((row) => ({
    id: String(row.id),
    source: String(row.source),
    title: row.title === null ? null : String(row.title),
    started_at: Number(row.started_at),
    ended_at: Number(row.ended_at),
    end_reason: row.end_reason === null ? null : String(row.end_reason),
    message_count: Number(row.message_count ?? 0),
  }));
}
