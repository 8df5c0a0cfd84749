/**
 * The sessions `pruneSessions` would delete, without deleting them
 * (`hermes-state prune --dry-run`, and the count the prompt shows).
 *
 * @module
 */
import type { Store } from "./store.ts";
import {
  type PruneCandidate,
  type PruneCandidatesOptions,
  toPruneCandidate,
} from "../core/prune_options.ts";

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
  return store.statement(sql).all(...params).map(toPruneCandidate);
}
