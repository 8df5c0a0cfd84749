/**
 * The deletes of the PostgreSQL engine by criteria: the sessions a prune
 * selects (by age and source, or the empty ghost sessions a TUI leaves), in
 * one write transaction each, their children orphaned and their transcript
 * files removed; and the list of what a prune would delete.
 *
 * @module
 */
import { removeTranscriptFiles } from "../files/transcript_files.ts";
import {
  checkedSessionsDir,
  checkPruneCandidatesOptions,
  checkPruneOptions,
  type PruneCandidate,
  type PruneCandidatesOptions,
  type PruneOptions,
  type SessionsDirOptions,
  toPruneCandidate,
} from "../core/prune_options.ts";
import type { PgQuery, PgValue } from "./_client_types.ts";
import { deleteSessionRows } from "./_delete.ts";

/** Runs a write transaction of the store (it rejects on a read-only or closed store). */
export type WriteTransaction = <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>;

/** The sessions `pruneEmptyGhostSessions` deletes: `$1` is now minus a day. */
const GHOST_CRITERIA = `source = 'tui' AND title IS NULL AND ended_at IS NOT NULL
  AND started_at < $1::double precision
  AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)`;

/**
 * Deletes the sessions `criteria` selects, orphaning their children.
 *
 * @param query The write transaction's query.
 * @param criteria The WHERE of the sessions (`$n` are `params`).
 * @param params Its values.
 * @returns The ids deleted.
 */
export async function deleteSessionsWhere(
  query: PgQuery,
  criteria: string,
  params: PgValue[],
): Promise<string[]> {
  const ids = (await query(`SELECT id FROM sessions WHERE ${criteria} FOR UPDATE`, params))
    .map((row) => row.id as string);
  if (ids.length > 0) await deleteSessionRows(query, ids);
  return ids;
}

/**
 * Deletes the ended sessions started before `olderThanDays` (`pruneSessions`),
 * of one source when given, and their transcript files.
 *
 * @param write The store's write transaction.
 * @param clock The store's clock (seconds since the epoch).
 * @param options The age, source and transcript folder (checked).
 * @returns How many sessions were deleted.
 */
export async function pruneSessionsPg(
  write: WriteTransaction,
  clock: () => number,
  options: PruneOptions,
): Promise<number> {
  options ??= {};
  const days = checkPruneOptions(options);
  const cutoff = clock() - days * 86400;
  let criteria = "started_at < $1::double precision AND ended_at IS NOT NULL";
  const params: PgValue[] = [cutoff];
  if (options.source) {
    criteria += " AND source = $2";
    params.push(options.source);
  }
  const ids = await write((query) => deleteSessionsWhere(query, criteria, params));
  if (ids.length > 0 && options.sessionsDir) removeTranscriptFiles(options.sessionsDir, ids);
  return ids.length;
}

/**
 * Deletes the empty, untitled, ended `tui` sessions over a day old
 * (`pruneEmptyGhostSessions`), and their transcript files.
 *
 * @param write The store's write transaction.
 * @param clock The store's clock (seconds since the epoch).
 * @param options The transcript folder (checked).
 * @returns How many sessions were deleted.
 */
export async function pruneGhostSessionsPg(
  write: WriteTransaction,
  clock: () => number,
  options: SessionsDirOptions,
): Promise<number> {
  options ??= {};
  checkedSessionsDir("prune ghost sessions", options);
  const cutoff = clock() - 86400;
  const ids = await write((query) => deleteSessionsWhere(query, GHOST_CRITERIA, [cutoff]));
  if (ids.length > 0 && options.sessionsDir) removeTranscriptFiles(options.sessionsDir, ids);
  return ids.length;
}

/**
 * The sessions a prune (`ghosts`: a prune of ghost sessions) would delete
 * (`pruneCandidates`), oldest first.
 *
 * @param query The store's query.
 * @param clock The store's clock (seconds since the epoch).
 * @param options The prune's options (checked).
 * @returns The candidates.
 */
export async function pruneCandidatesPg(
  query: PgQuery,
  clock: () => number,
  options: PruneCandidatesOptions,
): Promise<PruneCandidate[]> {
  options ??= {};
  const days = checkPruneCandidatesOptions(options);
  const columns = "id, source, title, started_at, ended_at, end_reason, message_count";
  const order = `ORDER BY started_at, id COLLATE "C"`;
  if (options.ghosts) {
    const rows = await query(
      `SELECT ${columns} FROM sessions WHERE ${GHOST_CRITERIA} ${order}`,
      [clock() - 86400],
    );
    return rows.map(toPruneCandidate);
  }
  const cutoff = clock() - days * 86400;
  const bySource = options.source ? " AND source = $2" : "";
  const params: PgValue[] = options.source ? [cutoff, options.source] : [cutoff];
  const rows = await query(
    `SELECT ${columns}
       FROM sessions WHERE started_at < $1::double precision AND ended_at IS NOT NULL${bySource}
       ${order}`,
    params,
  );
  return rows.map(toPruneCandidate);
}
