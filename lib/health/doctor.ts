/**
 * `doctor(path, options)`: checks a state.db file and, with `fix`, repairs
 * what it can without losing a message, safe while a gateway writes.
 *
 * The checks read the file as the read commands open it, and nothing is
 * written, not even a `-wal` left behind; a file they find damaged (or
 * cannot read) is never opened for writing. With `fix`, every repair runs
 * in short transactions (none holds the write lock for more than a
 * fraction of a second, except `vacuum`), then the checks run again.
 *
 * @module
 */
import { statSync } from "node:fs";
import { loadDriver } from "../sqlite/driver/load.ts";
import type { SqliteConnection, SqliteDriver } from "../sqlite/driver/types.ts";
import { OpenError } from "../core/errors.ts";
import { assertMayRead, assertStateDb, notAFile, openFailureReason } from "../sqlite/open.ts";
import {
  assertNotDamaged,
  hasWal,
  leftoverJournalReason,
  recoverHint,
} from "../sqlite/damaged_file.ts";
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import { isBusyError, retryWhileBusy } from "../sqlite/store_retry.ts";
import { isCorruption } from "../sqlite/integrity.ts";
import { chooseReadAccess, openForReading, readsUnlocked } from "../sqlite/read_access.ts";
import { changedEachTimeReason, fileState, untilUnmoved } from "../sqlite/file_state.ts";
import { finishFtsBackfill, pendingBackfills } from "../sqlite/schema/fts_backfill.ts";
import { FTS_TABLES, type FtsTable, SCHEMA_VERSION } from "../sqlite/schema/schema_sql.ts";
import { type CheckOptions, runChecks } from "./checks.ts";
import { ftsTriggerNames } from "../sqlite/schema/fts_triggers.ts";
import { rebuildFtsTable, type RebuildOptions, type RebuildResult } from "./fts_rebuild.ts";
import { allTextDamagedInPlace, restoreDamagedText } from "./damaged_text.ts";
import {
  type DoctorReport,
  type HealthCheck,
  isHealthy,
  type Repair,
} from "../core/health_report.ts";

export type { DoctorReport, Repair };
import {
  checkpointTruncate,
  clearBrokenParents,
  recountCounters,
  repairSchema,
  restoreMissingSessions,
  tightenFiles,
} from "./repairs.ts";
import type { CheckpointResult } from "./storage_check.ts";
import { TimedWriter, type WaitOptions } from "./transaction.ts";
import { DoctorFixError } from "./doctor_fix_error.ts";
import { databaseFiles } from "./file_stats.ts";
import { migrate } from "../sqlite/schema/migrate.ts";
import { readSchemaVersion } from "../sqlite/schema/schema_version.ts";
import { groupedCount, groupedInteger } from "../core/grouped_digits.ts";
import { rebuildIndexes } from "./reindex.ts";
import { damagedIndexes } from "./index_check.ts";
import { mendMessageSequence } from "./sequence_check.ts";
import { abortableDelay } from "../core/delay.ts";
import { deadWritersJournal } from "./_hot_journal.ts";
import { checkOptionNames, type OptionNames } from "../core/option_names.ts";

/** Options of {@linkcode doctor}. */
export interface DoctorOptions {
  /**
   * Repair what can be repaired (indexes out of step with their tables,
   * FTS tables, counters, the message id sequence, parent links, missing
   * indexes, WAL checkpoint, file modes).
   * @default {false}
   */
  readonly fix?: boolean;
  /**
   * `integrity_check` instead of `quick_check`, and FTS coverage of every
   * message (sampled above `sampleAbove` otherwise).
   * @default {false}
   */
  readonly full?: boolean;
  /**
   * With `fix`, also `VACUUM` (rewrites the whole file and holds the write
   * lock while it runs: stop the gateway first).
   * @default {false}
   */
  readonly vacuum?: boolean;
  /**
   * Above this many messages the FTS coverage check samples.
   * @default {200000}
   */
  readonly sampleAbove?: number;
  /** Batch budget and pauses of the FTS rebuild. */
  readonly rebuild?: Omit<RebuildOptions, "onProgress" | "damaged" | "signal">;
  /**
   * How long each repair's transaction waits for a lock another process
   * holds, in milliseconds (`HERMES_STATE_LOCK_TIMEOUT`); by default a
   * count of attempts, about 16 s. The checks wait as long (15 s by
   * default) for a file another process holds whole, then fail with a
   * `WriteBusyError` saying how long they waited.
   */
  readonly lockTimeoutMs?: number;
  /**
   * Aborted (Ctrl-C) to stop the repairs between two transactions, or a
   * wait for a lock at once: what is committed is consistent and every
   * write stays indexed; running `--fix` again finishes the job. The stop
   * is a {@linkcode DoctorFixError}; during the checks (a wait for a file
   * another process holds whole), the signal's reason itself.
   */
  readonly signal?: AbortSignal;
  /** Called while a long repair runs: its name, items done, items in all. */
  readonly onProgress?: (stage: string, done: number, total: number) => void;
  /** The driver opener; the running runtime's by default. */
  readonly openDriver?: SqliteDriver;
}

/** The options of the call, checked by name. */
const DOCTOR_OPTION_NAMES: OptionNames<DoctorOptions> = {
  fix: "boolean",
  full: "boolean",
  vacuum: "boolean",
  sampleAbove: true,
  rebuild: true,
  lockTimeoutMs: true,
  signal: true,
  onProgress: true,
  openDriver: true,
};

function needsWork(check: HealthCheck | undefined): boolean {
  return check !== undefined && check.status !== "ok" && check.fixable;
}

function byName(checks: readonly HealthCheck[], name: string): HealthCheck | undefined {
  return checks.find((check) => check.name === name);
}

/** Whether a full-text table is to be rebuilt, and whether its triggers must go first. */
function ftsPlan(checks: readonly HealthCheck[], table: FtsTable): {
  rebuild: boolean;
  damaged: boolean;
} {
  const index = byName(checks, `fts:${table}`);
  const coverage = byName(checks, `coverage:${table}`);
  // The schema check's own lines about this table's three triggers, and no other trigger's.
  const ownTriggers = new Set(
    ftsTriggerNames(table).flatMap((name) => [
      `trigger ${name} is missing`,
      `trigger ${name} differs from the v11 text`,
    ]),
  );
  const triggersDiffer = byName(checks, "schema")?.details.some((line) => ownTriggers.has(line)) ??
    false;
  return {
    rebuild: needsWork(index) || needsWork(coverage) || triggersDiffer,
    damaged: index?.status === "problem" &&
      index.details.some((line) => line.startsWith("integrity-check") || line.startsWith("marked")),
  };
}

function openFor(openDriver: SqliteDriver, path: string, fix: boolean): SqliteConnection {
  try {
    // Said as every other command says it: a folder, a named pipe, a device.
    if (!statSync(path).isFile()) throw new OpenError(path, notAFile(path) ?? "it is not a file");
  } catch (error) {
    if (error instanceof OpenError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new OpenError(path, code === "ENOENT" ? "no such file" : String(error), { cause: error });
  }
  assertMayRead(path);
  // Damaged files are evidence: a writable connection that fails would checkpoint a live
  // -wal (perhaps another file's) into the file and delete it, and SQLite deletes the -wal
  // of a 0-byte file even on a read-only open. The library's own guard refuses both first.
  assertNotDamaged(path, openDriver, { probe: fix });
  // A 0-byte file (with a -wal it was refused above) holds nothing: SQLite would open it as
  // a new, empty database, which says less than this.
  if (statSync(path).size === 0) {
    throw new OpenError(
      path,
      "the file is empty (0 bytes), not a Hermes database; there is nothing to check " +
        "or repair (it was left as it was)",
      { kind: "corrupt" },
    );
  }
  // A check changes nothing, sidecars included: the read access of the read commands.
  const access = fix ? "write" : chooseReadAccess(path);
  let db: SqliteConnection;
  try {
    // A rollback-journal file is read read-only: a writer dying meanwhile leaves its journal.
    db = openForReading(openDriver, path, access);
  } catch (error) {
    // Another process holds the whole file: waited for, and said as every command says it.
    if (isBusyError(error)) throw error;
    throw damagedOrOpenError(path, error, !fix);
  }
  // The checks' tries are short, so a signal ends their wait at once; the repairs set their own.
  db.exec(`PRAGMA busy_timeout = ${fix ? 1000 : 250}`);
  return db;
}

/** The error to report: a damaged file names the path and `recover`; another, its cause. */
function damagedOrOpenError(
  path: string,
  error: unknown,
  readonly = true,
  hadWal = hasWal(path),
): OpenError {
  if (error instanceof OpenError) return error;
  const journal = leftoverJournalReason(path, error);
  if (journal !== undefined) return new OpenError(path, journal, { cause: error });
  if (isCorruption(error)) {
    return new OpenError(path, `${error.message}; ${recoverHint(path, hadWal)}`, {
      cause: error,
      kind: "corrupt",
    });
  }
  return new OpenError(path, openFailureReason(error, path, readonly), { cause: error });
}

/**
 * Runs the checks on a read-only connection, as the read commands read. A
 * file read without locks (this user may not write it, see `readsUnlocked`)
 * may be written by its owner meanwhile, which the connection would
 * take for damage: its state is compared before and after.
 *
 * @returns SQLite's version and the checks, or `undefined` when a file read
 *   without locks changed meanwhile.
 */
function readChecks(
  openDriver: SqliteDriver,
  path: string,
  options: CheckOptions,
): { sqliteVersion: string; checks: HealthCheck[] } | undefined {
  const access = chooseReadAccess(path);
  const watched = readsUnlocked(access, path) ? fileState(path) : undefined;
  const changed = () => watched !== undefined && fileState(path) !== watched;
  // Asked before opening: the reader makes a -wal of its own, deleted at its close.
  const hadWal = hasWal(path);
  const reader = openFor(openDriver, path, false);
  try {
    const sqliteVersion = String(reader.prepare("SELECT sqlite_version() AS v").get()?.v ?? "");
    // Another application's database (or an empty file) is not ours to judge or repair.
    assertStateDb(reader, path);
    const checks = runChecks(reader, openDriver, path, options);
    return changed() ? undefined : { sqliteVersion, checks };
  } catch (error) {
    if (changed()) return undefined;
    // Not even the checks could read it (a clobbered header, not SQLite at all).
    throw error instanceof SqliteError && !isBusyError(error)
      ? damagedOrOpenError(path, error, true, hadWal)
      : error;
  } finally {
    reader.close();
  }
}

/**
 * Plays back a crashed writer's rollback journal, as SQLite's next writable
 * open does (a read-only one cannot, so the checks could not read the
 * file): the file goes back to its last commit.
 */
function playBackJournal(openDriver: SqliteDriver, path: string): Repair {
  const started = performance.now();
  const db = openFor(openDriver, path, true);
  try {
    db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
  } finally {
    db.close();
  }
  return {
    name: "journal",
    summary: "played back a crashed writer's rollback journal (the file is at its last commit)",
    longestLockMs: Math.round(performance.now() - started),
  };
}

/**
 * Upgrades a v1–v10 file as `hermes-state migrate` does (the schema step in
 * one transaction, then both search tables filled in short ones), or
 * finishes such an upgrade, or a search table's refill, that was
 * interrupted. Nothing to do on a current file.
 */
function upgradeOrFinish(db: SqliteConnection, wait: WaitOptions): Repair | undefined {
  const before = readSchemaVersion(db);
  const writer = new TimedWriter(db, wait);
  let migrated = false;
  if (typeof before === "number" && before < SCHEMA_VERSION && pendingBackfills(db).length === 0) {
    writer.run(() => migrate(db));
    migrated = true;
  }
  const pending = pendingBackfills(db);
  if (pending.length === 0 && !migrated) return undefined;
  finishFtsBackfill((fn) => void writer.run(fn), db);
  const filled = pending.map((p) => p.table).join(", ");
  const summary = migrated
    ? `upgraded schema ${before} → ${readSchemaVersion(db)} (both search tables rebuilt)`
    : typeof before === "number" && before < SCHEMA_VERSION
    ? `finished the interrupted upgrade: filled ${filled}; schema version ${readSchemaVersion(db)}`
    : `finished filling ${filled}, left by an interrupted doctor --fix`;
  return { name: "schema", summary, longestLockMs: writer.longestMs };
}

/**
 * Rebuilds the indexes the integrity check found out of step with their
 * tables (the only damage it found), in one transaction, and says what
 * their tables' check says after.
 */
async function reindex(
  db: SqliteConnection,
  integrity: HealthCheck,
  wait: WaitOptions,
): Promise<Repair> {
  const writer = new TimedWriter(db, wait);
  const names = damagedIndexes(integrity.details) ?? [];
  const { rebuilt, witnesses, renames, faults } = await rebuildIndexes(db, names, writer);
  const renamed = renames.map((r) => `${r.id} ${JSON.stringify(r.from)} → ${JSON.stringify(r.to)}`);
  const left = witnesses.map(({ index, rows }) =>
    `left ${index} as it was: it lists ${
      rows === undefined
        ? "rows its table may have lost"
        : groupedCount(rows, "row its table lacks", "rows its table lacks")
    } (recover names them)`
  );
  if (rebuilt.length === 0) {
    return { name: "integrity", summary: left.join("; "), longestLockMs: writer.longestMs };
  }
  return {
    name: "integrity",
    summary: `rebuilt ${rebuilt.join(", ")} (REINDEX, one transaction)` +
      (left.length > 0 ? `; ${left.join("; ")}` : "") +
      (renamed.length > 0
        ? `; renamed ${renamed.length} sessions sharing a title: ${renamed.join(", ")}`
        : "") +
      `; integrity_check of their tables: ${faults.length === 0 ? "ok" : faults.join("; ")}`,
    longestLockMs: writer.longestMs,
  };
}

/** Message ids as a repair names them: the first 20, and how many more. */
function shownIds(ids: readonly number[]): string {
  const more = ids.length - 20;
  return ids.slice(0, 20).join(", ") +
    (more > 0 ? ` and ${groupedCount(more, "more", "more")}` : "");
}

/** Runs the repairs the findings call for, in an order where each leaves the next sound. */
async function repair(
  db: SqliteConnection,
  path: string,
  checks: readonly HealthCheck[],
  options: DoctorOptions & { existedBefore: ReadonlySet<string> },
  repairs: Repair[],
): Promise<CheckpointResult | undefined> {
  const wait: WaitOptions = { timeoutMs: options.lockTimeoutMs, signal: options.signal };
  const timed = async (
    name: string,
    work: (writer: TimedWriter) => Promise<string | undefined>,
  ) => {
    options.signal?.throwIfAborted();
    const writer = new TimedWriter(db, wait);
    const summary = await work(writer);
    if (summary !== undefined) repairs.push({ name, summary, longestLockMs: writer.longestMs });
  };
  if (needsWork(byName(checks, "foreign_keys"))) {
    await timed(
      "foreign_keys",
      async (w) => `recreated ${await restoreMissingSessions(db, w)} missing sessions`,
    );
  }
  // Before any rebuild: it would index the damage, and drop the copy the text is taken from.
  // Every message is looked at (the check may have sampled, and names 20 at most).
  const rebuilding = FTS_TABLES.some((table) => ftsPlan(checks, table).rebuild);
  const damaged = rebuilding ? allTextDamagedInPlace(db, FTS_TABLES) : [];
  if (damaged.length > 0) {
    await timed("text", async (w) => {
      const restored = await restoreDamagedText(db, w, damaged);
      return `took back the text of ${
        groupedCount(restored, "message", "messages")
      } damaged in place from the search index (${shownIds(damaged.map((text) => text.id))})`;
    });
  }
  for (const table of FTS_TABLES) {
    const plan = ftsPlan(checks, table);
    if (!plan.rebuild) continue;
    options.signal?.throwIfAborted();
    const result: RebuildResult = await rebuildFtsTable(db, table, {
      ...options.rebuild,
      retry: { ...options.rebuild?.retry, ...wait },
      damaged: plan.damaged,
      signal: options.signal,
      onProgress: (done, total) => options.onProgress?.(`rebuilding ${table}`, done, total),
    });
    repairs.push({
      name: `fts:${table}`,
      summary: `${plan.damaged ? "replaced the damaged" : "rebuilt"} ${table} ` +
        `(${groupedInteger(result.rows)} messages, ${
          groupedInteger(result.transactions)
        } transactions); v11 triggers restored`,
      longestLockMs: result.longestLockMs,
    });
  }
  if (needsWork(byName(checks, "schema"))) {
    await timed("schema", async (w) => {
      const { dropped, renames } = await repairSchema(db, w);
      const renamed = renames.map((r) =>
        `${r.id} ${JSON.stringify(r.from)} → ${JSON.stringify(r.to)}`
      );
      return `schema step run; ${dropped} leftover objects dropped` +
        (renamed.length > 0
          ? `; renamed ${renamed.length} sessions sharing a title: ${renamed.join(", ")}`
          : "");
    });
  }
  if (needsWork(byName(checks, "lineage"))) {
    await timed("lineage", async (w) => `cleared ${await clearBrokenParents(db, w)} parent links`);
  }
  if (needsWork(byName(checks, "counters")) || needsWork(byName(checks, "foreign_keys"))) {
    await timed("counters", async (w) => `recounted ${await recountCounters(db, w)} sessions`);
  }
  if (needsWork(byName(checks, "sequence"))) {
    await timed("sequence", async (w) => {
      const { from, to } = await mendMessageSequence(db, w);
      if (from === to) return undefined;
      return `${to > from ? "raised" : "lowered"} the message id sequence ${from} → ${to}`;
    });
  }
  options.signal?.throwIfAborted();
  if (options.vacuum) {
    // VACUUM takes the write lock itself for the whole rewrite: the one long hold.
    const started = performance.now();
    db.exec("VACUUM");
    repairs.push({
      name: "free_pages",
      summary: "vacuumed (the file was rewritten)",
      longestLockMs: performance.now() - started,
    });
  }
  const checkpointStarted = performance.now();
  const answer = checkpointTruncate(db);
  // New writers wait while a TRUNCATE checkpoint is pending: count it as a hold.
  const checkpointMs = performance.now() - checkpointStarted;
  // A rollback-journal file has no WAL: SQLite answers -1 frames.
  const checkpoint = answer.log < 0 ? undefined : answer;
  if (checkpoint !== undefined) {
    repairs.push({
      name: "wal",
      summary: checkpoint.busy === 0
        ? `wal_checkpoint(TRUNCATE): ${walHeld(checkpoint.walFrames)}, WAL truncated to 0 bytes`
        : "wal_checkpoint(TRUNCATE) could not finish: a reader holds the WAL",
      longestLockMs: checkpointMs,
    });
  }
  const changed = tightenFiles(path, options.existedBefore);
  if (changed > 0) {
    repairs.push({ name: "files", summary: `set mode 0600 on ${changed} files`, longestLockMs: 0 });
  }
  return checkpoint;
}

/** What the WAL held before the checkpoint, all of it in the database file once it finished. */
function walHeld(frames: number): string {
  if (frames === 0) return "the WAL held no commits";
  const held = groupedCount(frames, "frame", "frames");
  return `the WAL's ${held} ${frames === 1 ? "is" : "are"} in the database file`;
}

/**
 * Checks a state.db file and, with `fix`, repairs it. (A PostgreSQL
 * store has its own checks: `hermes-state --db URL doctor`.)
 *
 * @param path The database file.
 * @param options `fix`, `full`, `vacuum`, sampling, rebuild pacing.
 * @returns The findings, the repairs and the findings after them.
 * @throws {OpenError} When the file does not exist or cannot be opened.
 * @throws {NotStateDbError} When the file is not a Hermes state.db (no
 *   `sessions` or `messages` table: another application's database, an empty file).
 * @throws {WriteBusyError} When another process held the whole file (not even
 *   reads could go on) for all of `lockTimeoutMs`.
 * @throws {DoctorFixError} With `fix`, when the repairs stopped after the
 *   checks (a file or folder that cannot be written, a lock held through
 *   every attempt: a `WriteBusyError` as `cause`, or the signal): it
 *   carries the findings and the repairs committed.
 * @throws {TypeError} When `options` is not an object or holds an option this call does not
 *   take, naming it; nothing is done.
 *
 * @example Checking a new file
 * ```ts
 * import { SessionDB } from "../sqlite/session_db.ts";
 * import { doctor } from "./doctor.ts";
 * const dir = await Deno.makeTempDir();
 * (await SessionDB.open({ path: `${dir}/state.db` })).close();
 * const report = await doctor(`${dir}/state.db`);
 * console.assert(report.healthy && report.repairs.length === 0);
 * ```
 */
export async function doctor(path: string, options: DoctorOptions = {}): Promise<DoctorReport> {
  checkOptionNames("check database", options, DOCTOR_OPTION_NAMES);
  options ??= {};
  const openDriver = options.openDriver ?? await loadDriver();
  const fix = options.fix ?? false;
  const checkOptions = { full: options.full, sampleAbove: options.sampleAbove };
  // The checks run on a read-only connection, as the read commands read, also before a fix:
  // a damaged file is never opened for writing (its close would checkpoint the -wal into it).
  // A live writer's journal is only its transaction under way: not played back, nor said to be.
  const playedBack = fix && deadWritersJournal(path, openDriver)
    ? playBackJournal(openDriver, path)
    : undefined;
  // The -wal and -shm there now; any other is the doctor's own connection's (not judged).
  const existedBefore = new Set(databaseFiles(path).map((file) => file.path));
  // A file another process holds whole (a connection recovering its WAL after a crash) is
  // waited for as a write waits, then fails as busy, saying how long it waited.
  // Ctrl-C ends the wait for such a file at once (its reason is thrown), not at the next try.
  const read = await retryWhileBusy(
    () =>
      untilUnmoved(
        () => readChecks(openDriver, path, { ...checkOptions, existedBefore }),
        (ms) => abortableDelay(ms, options.signal),
      ),
    { timeoutMs: options.lockTimeoutMs, sleep: (ms) => abortableDelay(ms, options.signal) },
  );
  if (read === undefined) throw new OpenError(path, changedEachTimeReason("checks"));
  const { sqliteVersion, checks } = read;
  if (!fix) {
    return {
      path,
      sqliteVersion,
      checks,
      repairs: [],
      after: undefined,
      healthy: isHealthy(checks),
      longestLockMs: 0,
    };
  }
  const integrity = byName(checks, "integrity");
  // A -wal whose commits SQLite ignores past a broken frame: a write or checkpoint discards them.
  const walBroken = byName(checks, "wal")?.status === "problem";
  if ((integrity?.status === "problem" && !integrity.fixable) || walBroken) {
    // Writing into damaged b-trees can spread the damage: recover first.
    return {
      path,
      sqliteVersion,
      checks,
      repairs: playedBack === undefined ? [] : [playedBack],
      after: checks,
      healthy: false,
      longestLockMs: 0,
    };
  }
  const repairs: Repair[] = playedBack === undefined ? [] : [playedBack];
  let db: SqliteConnection;
  try {
    db = openFor(openDriver, path, true);
  } catch (error) {
    // A file the write open found damaged is refused as the checks refuse one; a file that
    // cannot be written is a stop after the checks.
    if (error instanceof OpenError && error.kind !== "readonly") throw error;
    throw new DoctorFixError(path, { checks, repairs }, error);
  }
  try {
    let checkpoint: CheckpointResult | undefined;
    try {
      // An old schema is upgraded, and an upgrade or refill interrupted while filling the
      // search tables is finished, first (the migration's own batched copy); then the rest
      // is planned on what is left.
      const wait = { timeoutMs: options.lockTimeoutMs, signal: options.signal };
      // Indexes out of step with their tables first: every other repair reads through them.
      const reindexed = integrity?.fixable === true
        ? await reindex(db, integrity, wait)
        : undefined;
      if (reindexed !== undefined) repairs.push(reindexed);
      const upgraded = upgradeOrFinish(db, { timeoutMs: options.lockTimeoutMs });
      if (upgraded !== undefined) repairs.push(upgraded);
      // What the other checks found through a wrong index is found again through the right one.
      const planned = upgraded === undefined && reindexed === undefined
        ? checks
        : runChecks(db, openDriver, path, { ...checkOptions, existedBefore });
      checkpoint = await repair(db, path, planned, { ...options, existedBefore }, repairs);
    } catch (error) {
      const interrupted = options.signal?.aborted === true && error === options.signal.reason;
      throw new DoctorFixError(path, { checks, repairs, interrupted }, error);
    }
    const after = runChecks(db, openDriver, path, { ...checkOptions, checkpoint, existedBefore });
    let longestLockMs = 0;
    for (const r of repairs) longestLockMs = Math.max(longestLockMs, r.longestLockMs);
    return {
      path,
      sqliteVersion,
      checks,
      repairs,
      after,
      healthy: isHealthy(after),
      longestLockMs,
    };
  } finally {
    db.close();
  }
}
