/**
 * The v11 step of an old file (v1–v10) without holding the lock for the
 * whole full-text rebuild (19 s for 50,000 messages in one transaction).
 * One short transaction drops the old triggers and tables, creates both
 * v11 full-text tables with their triggers, empty (so every write from then
 * on is indexed), and records `fts_backfill:<table>` in `state_meta` with
 * `{"next": <first id left>, "upto": <largest id then>}` (JSON). The rows
 * written before are then copied into the tables by id range, in short
 * transactions with the lock left free between them (`batches.ts`), each
 * advancing `next`. The last one removes the keys and sets the version to
 * 11. A crash in between leaves a consistent file: the next open resumes
 * at `next` (a row indexed twice is impossible: a range only adds the ids
 * the table lacks). While a key is present, search reads that table's
 * messages by substring instead.
 *
 * A Python Hermes that opens the file in between sees the old version and
 * runs its own v11 step (one long transaction), which leaves the tables
 * whole; the next open of ours then finds nothing left to copy.
 *
 * The doctor's batched rebuild can take this function's place later: the
 * contract is the key, the ranges and the final version.
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";
import { SqliteError } from "../driver/sqlite_error.ts";
import { type BatchOptions, type BatchReport, writeInBatches } from "../batches.ts";
import { dropFtsTriggers } from "./fts_triggers.ts";
import {
  FTS_TABLES,
  type FtsTable,
  ftsTableSql,
  ftsTriggersSql,
  indexedTextSql,
  SCHEMA_VERSION,
  UPSERT_META_SQL,
} from "./schema_sql.ts";

/** The `state_meta` key prefix of a table being filled: `fts_backfill:messages_fts`. */
export const FTS_BACKFILL_PREFIX = "fts_backfill:";

/** Message ids copied per step (several steps share a transaction, see `batches.ts`). */
const IDS_PER_STEP = 500;

/** A full-text table still being filled with the rows written before the v11 step. */
export interface PendingBackfill {
  /** The table. */
  readonly table: FtsTable;
  /** The first message id not copied yet. */
  readonly next: number;
  /** The largest message id when the step began (later rows are indexed by the triggers). */
  readonly upto: number;
}

/**
 * Reads the tables still being filled.
 *
 * @param db The connection.
 * @returns The pending tables, in table order; `[]` when there are none.
 */
export function pendingBackfills(db: SqliteConnection): PendingBackfill[] {
  let rows: Record<string, unknown>[];
  try {
    rows = db.prepare(
      "SELECT key, value FROM state_meta WHERE substr(key, 1, length(?)) = ? ORDER BY key",
    ).all(FTS_BACKFILL_PREFIX, FTS_BACKFILL_PREFIX);
  } catch (error) {
    // An old file opened read-only may have no state_meta: nothing is pending.
    if (error instanceof SqliteError && /no such table/.test(error.message)) return [];
    throw error;
  }
  const pending: PendingBackfill[] = [];
  for (const row of rows) {
    const table = String(row.key).slice(FTS_BACKFILL_PREFIX.length) as FtsTable;
    if (!FTS_TABLES.includes(table)) continue;
    try {
      const { next, upto } = JSON.parse(String(row.value));
      if (Number.isSafeInteger(next) && Number.isSafeInteger(upto)) {
        pending.push({ table, next, upto });
        continue;
      }
    } catch {
      // Unreadable progress: start the table over (a range only adds missing ids).
    }
    pending.push({ table, next: 1, upto: maxMessageId(db) });
  }
  return pending;
}

function maxMessageId(db: SqliteConnection): number {
  return Number(db.prepare("SELECT coalesce(max(id), 0) AS n FROM messages").get()?.n ?? 0);
}

/**
 * Begins the v11 step: drops the six triggers and both full-text tables,
 * creates them again empty (triggers included), and records what is left
 * to copy. Call inside the schema step's transaction. When there is no
 * message, there is nothing to copy and the version is set at once.
 *
 * @param db The connection.
 * @returns True when rows are left to copy (the version is not 11 yet).
 */
export function beginFtsBackfill(db: SqliteConnection): boolean {
  for (const table of FTS_TABLES) {
    dropFtsTriggers(db, table);
    db.exec(`DROP TABLE IF EXISTS ${table}`);
  }
  const upto = maxMessageId(db);
  for (const table of FTS_TABLES) {
    db.exec(ftsTableSql(table));
    db.exec(ftsTriggersSql(table));
    if (upto > 0) {
      db.prepare(UPSERT_META_SQL).run(
        `${FTS_BACKFILL_PREFIX}${table}`,
        JSON.stringify({ next: 1, upto }),
      );
    }
  }
  if (upto === 0) setFinalVersion(db);
  return upto > 0;
}

function setFinalVersion(db: SqliteConnection): void {
  db.prepare("UPDATE schema_version SET version = ? WHERE version < ?").run(
    SCHEMA_VERSION,
    SCHEMA_VERSION,
  );
}

/** Copies the rows `from..to` (ids) a table lacks, and records the progress. */
function copyRange(db: SqliteConnection, pending: PendingBackfill, from: number, to: number): void {
  const { table } = pending;
  db.prepare(
    `INSERT INTO ${table}(rowid, content) SELECT m.id, ${indexedTextSql("m")} FROM messages m ` +
      `WHERE m.id >= ? AND m.id <= ? AND NOT EXISTS (SELECT 1 FROM ${table} WHERE rowid = m.id)`,
  ).run(from, to);
  db.prepare(UPSERT_META_SQL).run(
    `${FTS_BACKFILL_PREFIX}${table}`,
    JSON.stringify({ next: to + 1, upto: pending.upto }),
  );
}

/**
 * Copies what is left into every pending table, in short transactions, then
 * removes the keys and sets the version to 11 in a last one.
 *
 * @param write Runs one write transaction (the connection's write path).
 * @param db The connection.
 * @param options The batch timing.
 * @returns What the batches did; `undefined` when nothing was pending.
 */
export function finishFtsBackfill(
  write: (fn: () => void) => void,
  db: SqliteConnection,
  options: BatchOptions = {},
): BatchReport | undefined {
  const pending = pendingBackfills(db);
  if (pending.length === 0) return undefined;
  const steps: { pending: PendingBackfill; from: number; to: number }[] = [];
  for (const table of pending) {
    for (let from = table.next; from <= table.upto; from += IDS_PER_STEP) {
      steps.push({ pending: table, from, to: Math.min(from + IDS_PER_STEP - 1, table.upto) });
    }
  }
  const report = writeInBatches(write, steps, {
    ...options,
    each: (step) => {
      copyRange(db, step.pending, step.from, step.to);
      return true;
    },
  });
  write(() => {
    db.prepare("DELETE FROM state_meta WHERE substr(key, 1, length(?)) = ?").run(
      FTS_BACKFILL_PREFIX,
      FTS_BACKFILL_PREFIX,
    );
    setFinalVersion(db);
  });
  return report;
}
