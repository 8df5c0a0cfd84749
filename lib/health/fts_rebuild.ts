/**
 * Rebuilding a full-text table while writers run, without ever holding the
 * write lock long (Python waits only a few seconds for it):
 *
 * 1. one short transaction creates `<table>_rebuild` beside the live table,
 *    with triggers that keep it current, and notes the highest message id;
 * 2. batches, each its own short transaction sized to a time budget, fill
 *    it from the messages up to that id, with exactly the text Python's
 *    triggers write (rows that triggers already wrote are replaced);
 * 3. one short transaction swaps it in: the old table and all triggers are
 *    dropped, the new table renamed, the v11 triggers recreated byte for
 *    byte, and the `fts_stale:<table>` (and `fts_backfill:<table>`) marker removed.
 *
 * Search keeps answering from the old table until the swap. Reused by the
 * v1–v10 migration.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import {
  type FtsTable,
  ftsTableSql,
  ftsTriggersSql,
  indexedTextSql,
} from "../sqlite/schema/schema_sql.ts";
import type { RetryOptions } from "../sqlite/write.ts";
import { FTS_STALE_PREFIX } from "../sqlite/fts_stale.ts";
import { FTS_BACKFILL_PREFIX } from "../sqlite/schema/fts_backfill.ts";
import { dropFtsTriggers } from "../sqlite/schema/fts_triggers.ts";
import { TimedWriter } from "./transaction.ts";

/** Options of {@linkcode rebuildFtsTable}. */
export interface RebuildOptions {
  /**
   * The time budget of one batch's transaction, in milliseconds; batches are
   * resized to stay near half of it.
   * @default {200}
   */
  readonly batchBudgetMs?: number;
  /**
   * Pause between two transactions, in milliseconds, so waiting writers get
   * the lock.
   * @default {100}
   */
  readonly pauseMs?: number;
  /**
   * Drop the live table's triggers in the first transaction (when its index
   * is damaged, so message writes stop failing on it).
   * @default {false}
   */
  readonly dropOldTriggersFirst?: boolean;
  /** How busy attempts are retried. */
  readonly retry?: RetryOptions;
  /** Awaited between transactions (tests inject it). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Called after each batch with the messages indexed so far and the total. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** What {@linkcode rebuildFtsTable} did. */
export interface RebuildResult {
  /** The table rebuilt. */
  readonly table: FtsTable;
  /** Messages indexed by the batches (writers' rows came through the triggers). */
  readonly rows: number;
  /** Write transactions run. */
  readonly transactions: number;
  /** The longest hold of the write lock, in milliseconds. */
  readonly longestLockMs: number;
  /** The swap's hold, in milliseconds. */
  readonly swapMs: number;
  /** Wall time, in milliseconds. */
  readonly totalMs: number;
}

const FIRST_BATCH = 256;
const MIN_BATCH = 16;
const MAX_BATCH = 50_000;

function timer(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The name of the table built beside `table`. */
export function rebuildName(table: FtsTable): string {
  return `${table}_rebuild`;
}

/** Triggers that keep the table built beside current while the batches run. */
function keepCurrentTriggers(side: string): string {
  const insert = `INSERT INTO ${side}(rowid, content) VALUES (new.id, ${indexedTextSql("new")});`;
  const remove = `DELETE FROM ${side} WHERE rowid = old.id;`;
  return `
CREATE TRIGGER ${side}_insert AFTER INSERT ON messages BEGIN ${insert} END;
CREATE TRIGGER ${side}_delete AFTER DELETE ON messages BEGIN ${remove} END;
CREATE TRIGGER ${side}_update AFTER UPDATE ON messages BEGIN ${remove} ${insert} END;
`;
}

function hasTable(db: SqliteConnection, name: string): boolean {
  return db.prepare("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(name) !== undefined;
}

/**
 * Rebuilds one full-text table in batches, safe on a live file.
 *
 * @param db A writable connection (busy timeout set), not inside a transaction.
 * @param table The table to rebuild (created when missing).
 * @param options Time budget, pauses, retry.
 * @returns Rows, transactions and the longest lock hold.
 * @throws {WriteBusyError} When another connection held the lock through every attempt.
 *
 * @example
 * ```ts
 * import { loadDriver } from "../sqlite/driver/load.ts";
 * import { migrate } from "../sqlite/schema/migrate.ts";
 * import { rebuildFtsTable } from "./fts_rebuild.ts";
 * const db = (await loadDriver())(":memory:");
 * migrate(db);
 * db.exec("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1)");
 * db.exec("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'docker', 1)");
 * const result = await rebuildFtsTable(db, "messages_fts");
 * console.assert(result.rows === 1);
 * db.close();
 * ```
 */
export async function rebuildFtsTable(
  db: SqliteConnection,
  table: FtsTable,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const started = performance.now();
  const budget = options.batchBudgetMs ?? 200;
  const pause = options.pauseMs ?? 100;
  const sleep = options.sleep ?? timer;
  const writer = new TimedWriter(db, options.retry);
  const side = rebuildName(table);

  const { value: upTo } = writer.run(() => {
    dropFtsTriggers(db, side);
    db.exec(`DROP TABLE IF EXISTS ${side}`);
    if (options.dropOldTriggersFirst) dropFtsTriggers(db, table);
    db.exec(ftsTableSql(table).replace(` ${table} USING`, ` ${side} USING`));
    db.exec(keepCurrentTriggers(side));
    return Number(db.prepare("SELECT COALESCE(max(id), 0) AS n FROM messages").get()?.n ?? 0);
  });
  const total = Number(
    db.prepare("SELECT count(*) AS n FROM messages WHERE id <= ?").get(upTo)?.n ?? 0,
  );

  const nextBound = db.prepare(
    "SELECT id FROM messages WHERE id > ? AND id <= ? ORDER BY id LIMIT 1 OFFSET ?",
  );
  const clear = db.prepare(`DELETE FROM ${side} WHERE rowid > ? AND rowid <= ?`);
  const fill = db.prepare(
    `INSERT INTO ${side}(rowid, content) SELECT m.id, ${indexedTextSql("m")} FROM messages m
     WHERE m.id > ? AND m.id <= ?`,
  );
  let after = 0;
  let size = FIRST_BATCH;
  let done = 0;
  while (after < upTo) {
    await sleep(pause);
    const { value: filled, heldMs } = writer.run(() => {
      const bound = nextBound.get(after, upTo, size - 1);
      const last = bound === undefined ? upTo : Number(bound.id);
      clear.run(after, last);
      const { changes } = fill.run(after, last);
      after = last;
      return changes;
    });
    done += filled;
    options.onProgress?.(done, total);
    const target = budget / 2;
    const scaled = heldMs > 0 ? Math.round(size * target / heldMs) : size * 2;
    size = Math.round(
      Math.max(MIN_BATCH, Math.min(MAX_BATCH, size * 2, Math.max(size / 2, scaled))),
    );
  }

  await sleep(pause);
  const { heldMs: swapMs } = writer.run(() => {
    dropFtsTriggers(db, table);
    dropFtsTriggers(db, side);
    db.exec(`DROP TABLE IF EXISTS ${table}`);
    db.exec(`ALTER TABLE ${side} RENAME TO ${table}`);
    db.exec(ftsTriggersSql(table));
    if (hasTable(db, "state_meta")) {
      // The table is whole and kept current again: neither stale nor being filled.
      db.prepare("DELETE FROM state_meta WHERE key IN (?, ?)").run(
        `${FTS_STALE_PREFIX}${table}`,
        `${FTS_BACKFILL_PREFIX}${table}`,
      );
    }
  });
  return {
    table,
    rows: done,
    transactions: writer.transactions,
    longestLockMs: writer.longestMs,
    swapMs,
    totalMs: performance.now() - started,
  };
}
