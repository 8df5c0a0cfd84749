/**
 * The sessions `pruneSessions` would delete, without deleting them
 * (`hermes-state prune --dry-run`, and the count the prompt shows).
 *
 * @module
 */
import type { Store } from "./store.ts";
import {
  checkPruneCandidatesOptions,
  type PruneCandidate,
  type PruneCandidatesOptions,
  toPruneCandidate,
} from "../core/prune_options.ts";
import { ghostCriteria } from "./prune.ts";

const COLUMNS = "id, source, title, started_at, ended_at, end_reason, message_count";

/** Implements `SessionDB.pruneCandidates`: the rows `pruneSessions` (or the ghost prune) would delete. */
export function pruneCandidates(
  store: Store,
  options: PruneCandidatesOptions = {},
): PruneCandidate[] {
  const days = checkPruneCandidatesOptions(options);
  if (options.ghosts) {
    const ghosts = ghostCriteria(store);
    return store.statement(
      `SELECT ${COLUMNS} FROM sessions WHERE ${ghosts.sql} ORDER BY started_at, id`,
    ).all(...ghosts.params).map(toPruneCandidate);
  }
  const cutoff = store.now() - days * 86400;
  const bySource = options.source ? " AND source = ?" : "";
  const sql =
    `SELECT ${COLUMNS} FROM sessions WHERE started_at < ? AND ended_at IS NOT NULL${bySource} ORDER BY started_at, id`;
  const params = options.source ? [cutoff, options.source] : [cutoff];
  return store.statement(sql).all(...params).map(toPruneCandidate);
}
