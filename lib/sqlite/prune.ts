/**
 * Deleting sessions, pruning old and empty ones, and reclaiming space. A
 * deleted session's children are kept and become roots (their parent is set
 * to NULL); transcript files in a sessions folder go with the session.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { SqlValue } from "./driver/types.ts";
import { ReadonlyError } from "../core/errors.ts";
import { checkKeyText } from "../core/session_options.ts";
import { checkOptionNames } from "../core/option_names.ts";
import { getMeta, setMeta } from "./meta.ts";
import { removeTranscriptFiles } from "../files/transcript_files.ts";
import { SESSION_META_PREFIXES } from "../core/session_meta.ts";
import { parsePythonFloat, pythonFloatRepr } from "../core/python_float.ts";
import {
  type AsyncBatchWrite,
  type BatchOptions,
  type BatchReport,
  type BatchWrite,
  writeInBatches,
  writeInBatchesAsync,
} from "./batches.ts";
import {
  AUTO_PRUNE_OPTION_NAMES,
  type AutoPruneOptions,
  type AutoPruneResult,
  checkedSessionsDir,
  checkPruneOptions,
  type PruneOptions,
  type SessionsDirOptions,
} from "../core/prune_options.ts";

/** Internal options of the prunes, for tests: the batch timing (see `batches.ts`). */
export interface PruneInternals {
  /** How long each transaction may hold the lock, and the pause between two. */
  readonly batch?: BatchOptions;
  /** Told what the batches did (the benchmark reads the longest transaction). */
  readonly report?: (report: BatchReport) => void;
}

/**
 * How the asynchronous SQLite store runs a prune: every step (the list of
 * candidates, each transaction, the checkpoint) through `step`, which tries
 * again while the file is locked, and every pause between two transactions
 * awaited.
 */
export interface AsyncPruneInternals {
  /** Runs one synchronous step and settles with its result (retried while busy). */
  readonly step: <R>(fn: () => R) => Promise<R>;
  /** How long each transaction may hold the lock, and the awaited pause between two. */
  readonly batch?: Omit<BatchOptions, "sleep"> & { readonly sleep?: (ms: number) => Promise<void> };
  /** Told what the batches did. */
  readonly report?: (report: BatchReport) => void;
}

/** A WHERE condition over `sessions`, with its parameters. */
interface Criteria {
  readonly sql: string;
  readonly params: SqlValue[];
}

/** The marker Python and we share: `str(time.time())` of the last run. */
const LAST_AUTO_PRUNE = "last_auto_prune";

/**
 * Deletes the sessions matched by `criteria` (a WHERE condition over
 * `sessions`, with `params`) in the current transaction: their children
 * become roots, then their messages, their per-session `state_meta` keys
 * (`SESSION_META_PREFIXES`) and their rows go. Returns their ids.
 */
function deleteWhere(store: Store, criteria: string, params: SqlValue[]): string[] {
  const ids = store.statement(`SELECT id FROM sessions WHERE ${criteria}`).all(...params)
    .map((row) => row.id as string);
  if (ids.length === 0) return ids;
  const doomed = `SELECT id FROM sessions WHERE ${criteria}`;
  store.statement(
    `UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN (${doomed})`,
  )
    .run(...params);
  store.statement(`DELETE FROM messages WHERE session_id IN (${doomed})`).run(...params);
  // Their goals (`goal:<id>`) go too: nothing can reach a deleted session's keys.
  for (const prefix of SESSION_META_PREFIXES) {
    store.statement(
      `DELETE FROM state_meta WHERE key IN (SELECT ? || id FROM sessions WHERE ${criteria})`,
    )
      .run(prefix, ...params);
  }
  store.statement(`DELETE FROM sessions WHERE ${criteria}`).run(...params);
  return ids;
}

/** The sessions `criteria` matches, oldest first: the items of a batched delete. */
function candidateIds(store: Store, criteria: Criteria): string[] {
  return store.statement(`SELECT id FROM sessions WHERE ${criteria.sql} ORDER BY started_at, id`)
    .all(...criteria.params).map((row) => row.id as string);
}

/**
 * What a batched delete does with each session: deletes it (with its
 * messages, its children detached) if `criteria` still matches it inside
 * the transaction, and removes its transcript files after the commit.
 */
function deleteEach(
  store: Store,
  criteria: Criteria,
  options: SessionsDirOptions,
): Pick<BatchWrite<string>, "each" | "afterCommit"> {
  const { sessionsDir } = options;
  return {
    each: (id) =>
      deleteWhere(store, `id = ? AND ${criteria.sql}`, [id, ...criteria.params]).length > 0,
    afterCommit: (deleted) => {
      if (sessionsDir) removeTranscriptFiles(sessionsDir, deleted);
    },
  };
}

/**
 * Deletes the sessions matched by `criteria`, one session (with its
 * messages, and its children detached) at a time, several sessions per
 * short transaction (see `batches.ts`): a long prune never holds the lock
 * for seconds, and a crash between two transactions leaves whole sessions
 * deleted or kept, for the next run to finish. Each session is checked
 * against `criteria` again inside its transaction. Transcript files go after
 * each commit. Ends with a TRUNCATE checkpoint that does not wait, so the
 * `-wal` does not stay at the size of everything deleted.
 */
function deleteInBatches(
  store: Store,
  criteria: Criteria,
  options: SessionsDirOptions & PruneInternals,
): number {
  if (store.readonly) throw new ReadonlyError(store.path);
  const ids = candidateIds(store, criteria);
  if (ids.length === 0) return 0;
  const report = writeInBatches((fn) => store.write(fn), ids, {
    ...options.batch,
    ...deleteEach(store, criteria, options),
  });
  store.checkpoint("truncate");
  options.report?.(report);
  return report.done;
}

/** {@linkcode deleteInBatches} with every step and pause awaited (the SQLite `SessionStore`). */
async function deleteInBatchesAsync(
  store: Store,
  criteria: Criteria,
  options: SessionsDirOptions,
  internals: AsyncPruneInternals,
): Promise<number> {
  if (store.readonly) throw new ReadonlyError(store.path);
  const ids = await internals.step(() => candidateIds(store, criteria));
  if (ids.length === 0) return 0;
  const write: AsyncBatchWrite<string> = {
    ...internals.batch,
    ...deleteEach(store, criteria, options),
  };
  const report = await writeInBatchesAsync(
    (fn) => internals.step(() => store.write(fn)),
    ids,
    write,
  );
  await internals.step(() => store.checkpoint("truncate"));
  internals.report?.(report);
  return report.done;
}

/** The sessions `pruneSessions` deletes; throws the RangeError of a bad `olderThanDays`. */
function pruneCriteria(store: Store, options: PruneOptions): Criteria {
  const days = checkPruneOptions(options);
  const cutoff = store.now() - days * 86400;
  let sql = "started_at < ? AND ended_at IS NOT NULL";
  const params: SqlValue[] = [cutoff];
  if (options.source) {
    sql += " AND source = ?";
    params.push(options.source);
  }
  return { sql, params };
}

/** The sessions `pruneEmptyGhostSessions` deletes (and `pruneCandidates({ ghosts })` lists). */
export function ghostCriteria(store: Store): Criteria {
  const sql = `source = 'tui' AND title IS NULL AND ended_at IS NOT NULL AND started_at < ?
    AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)`;
  return { sql, params: [store.now() - 86400] };
}

/** Implements `SessionDB.deleteSession`: one write, children detached, then transcript files. */
export function deleteSession(store: Store, id: string, options: SessionsDirOptions): boolean {
  checkKeyText("delete session", "id", id);
  const sessionsDir = checkedSessionsDir("delete session", options);
  const deleted = store.write(() => deleteWhere(store, "id = ?", [id]).length > 0);
  if (deleted && sessionsDir) removeTranscriptFiles(sessionsDir, [id]);
  return deleted;
}

/** Implements `SessionDB.pruneSessions`: old ended sessions in batches (`internals`: for tests). */
export function pruneSessions(
  store: Store,
  options: PruneOptions,
  internals: PruneInternals = {},
): number {
  const criteria = pruneCriteria(store, options);
  return deleteInBatches(store, criteria, { ...options, ...internals });
}

/**
 * Implements `SessionStore.pruneSessions` on SQLite: {@linkcode pruneSessions}
 * with each step and each pause between two transactions awaited, so the
 * event loop keeps running through a long prune.
 */
export async function pruneSessionsAsync(
  store: Store,
  options: PruneOptions,
  internals: AsyncPruneInternals,
): Promise<number> {
  return await deleteInBatchesAsync(store, pruneCriteria(store, options), options, internals);
}

/**
 * Implements `SessionDB.pruneEmptyGhostSessions`: empty `tui` ghosts, batched (`internals`: tests).
 */
export function pruneEmptyGhostSessions(
  store: Store,
  options: SessionsDirOptions,
  internals: PruneInternals = {},
): number {
  checkedSessionsDir("prune ghost sessions", options);
  return deleteInBatches(store, ghostCriteria(store), { ...options, ...internals });
}

/**
 * Implements `SessionStore.pruneEmptyGhostSessions` on SQLite, batched as
 * {@linkcode pruneSessionsAsync} is.
 */
export async function pruneEmptyGhostSessionsAsync(
  store: Store,
  options: SessionsDirOptions,
  internals: AsyncPruneInternals,
): Promise<number> {
  checkedSessionsDir("prune ghost sessions", options);
  return await deleteInBatchesAsync(store, ghostCriteria(store), options, internals);
}

/** Implements `SessionDB.vacuum`: checkpoint, `VACUUM`, checkpoint. */
export function vacuum(store: Store): void {
  if (store.readonly) throw new ReadonlyError(store.path);
  try {
    store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch {
    // Best effort, as in Python: a checkpoint blocked by a reader is no reason not to VACUUM.
  }
  store.db.exec("VACUUM");
  store.checkpoint("truncate");
}

/**
 * The time of this auto-prune run (read once: the marker gets it), or
 * `undefined` when Python's marker says the last run is too recent.
 */
function autoPruneDue(store: Store, options: AutoPruneOptions): number | undefined {
  const now = store.now();
  const hours = options.minIntervalHours ?? 24;
  const last = getMeta(store, LAST_AUTO_PRUNE);
  const lastRun = last ? parsePythonFloat(last) : undefined;
  return lastRun !== undefined && now - lastRun < hours * 3600 ? undefined : now;
}

/** The prune an auto-prune runs. */
function autoPruneOptions(options: AutoPruneOptions): PruneOptions {
  return { olderThanDays: options.retentionDays ?? 90, sessionsDir: options.sessionsDir };
}

/** The `VACUUM` after an auto-prune that removed something: one attempt, its failure ignored. */
function vacuumAfterPrune(store: Store, options: AutoPruneOptions, result: AutoPruneResult): void {
  if (!(options.vacuum ?? true) || result.pruned === 0) return;
  try {
    vacuum(store);
    result.vacuumed = true;
  } catch {
    // As in Python: the prune is done; a VACUUM that could not run is not an error.
  }
}

function failed(result: AutoPruneResult, error: unknown): AutoPruneResult {
  result.error = error instanceof Error ? error.message : String(error);
  result.cause = error;
  return result;
}

/** Implements `SessionDB.maybeAutoPruneAndVacuum`: prune and vacuum behind Python's marker. */
export function maybeAutoPruneAndVacuum(store: Store, options: AutoPruneOptions): AutoPruneResult {
  const result: AutoPruneResult = { skipped: false, pruned: 0, vacuumed: false };
  try {
    checkOptionNames("auto-prune sessions", options, AUTO_PRUNE_OPTION_NAMES);
    const now = autoPruneDue(store, options);
    if (now === undefined) return { ...result, skipped: true };
    result.pruned = pruneSessions(store, autoPruneOptions(options));
    vacuumAfterPrune(store, options, result);
    setMeta(store, LAST_AUTO_PRUNE, pythonFloatRepr(now));
  } catch (error) {
    return failed(result, error);
  }
  return result;
}

/**
 * Implements `SessionStore.maybeAutoPruneAndVacuum` on SQLite:
 * {@linkcode maybeAutoPruneAndVacuum} with the prune of
 * {@linkcode pruneSessionsAsync}, and the marker read and written through
 * `internals.step` (retried while busy). `VACUUM` gets one attempt, as in
 * the synchronous store.
 */
export async function maybeAutoPruneAndVacuumAsync(
  store: Store,
  options: AutoPruneOptions,
  internals: AsyncPruneInternals,
): Promise<AutoPruneResult> {
  const result: AutoPruneResult = { skipped: false, pruned: 0, vacuumed: false };
  try {
    checkOptionNames("auto-prune sessions", options, AUTO_PRUNE_OPTION_NAMES);
    const now = await internals.step(() => autoPruneDue(store, options));
    if (now === undefined) return { ...result, skipped: true };
    result.pruned = await pruneSessionsAsync(store, autoPruneOptions(options), internals);
    vacuumAfterPrune(store, options, result);
    await internals.step(() => setMeta(store, LAST_AUTO_PRUNE, pythonFloatRepr(now)));
  } catch (error) {
    return failed(result, error);
  }
  return result;
}
