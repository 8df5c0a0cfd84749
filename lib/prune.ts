/**
 * Deleting sessions, pruning old ones, vacuum.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { todo } from "./_todo.ts";

/** Options of `deleteSession` and `pruneEmptyGhostSessions`. */
export interface SessionsDirOptions {
  /** Folder of transcript files (`<id>.json`, `<id>.jsonl`, `request_dump_<id>_*.json`) to remove too. */
  sessionsDir?: string | null;
}

/** Options of `pruneSessions`. */
export interface PruneOptions extends SessionsDirOptions {
  /** @default {90} */
  olderThanDays?: number;
  source?: string | null;
}

/** Options of `maybeAutoPruneAndVacuum`. */
export interface AutoPruneOptions extends SessionsDirOptions {
  /** @default {90} */
  retentionDays?: number;
  /** @default {24} */
  minIntervalHours?: number;
  /** @default {true} */
  vacuum?: boolean;
}

/** What `maybeAutoPruneAndVacuum` did. */
export interface AutoPruneResult {
  skipped: boolean;
  pruned: number;
  vacuumed: boolean;
  error?: string;
}

export function deleteSession(_store: Store, _id: string, _options: SessionsDirOptions): boolean {
  return todo("deleteSession");
}

export function pruneSessions(_store: Store, _options: PruneOptions): number {
  return todo("pruneSessions");
}

export function pruneEmptyGhostSessions(_store: Store, _options: SessionsDirOptions): number {
  return todo("pruneEmptyGhostSessions");
}

export function vacuum(_store: Store): void {
  todo("vacuum");
}

export function maybeAutoPruneAndVacuum(
  _store: Store,
  _options: AutoPruneOptions,
): AutoPruneResult {
  return todo("maybeAutoPruneAndVacuum");
}
