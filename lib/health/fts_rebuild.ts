/**
 * Rebuilding a full-text table while writers run, without ever holding the
 * write lock long (Python waits only a few seconds for it), and leaving a
 * file whose writes are indexed whatever moment the process is killed.
 *
 * A sound table (rows missing or wrong, triggers differing) is rebuilt
 * beside the live one, which keeps answering searches:
 *
 * 1. one short transaction recreates the live table's v11 triggers (so
 *    writes are indexed there from then on), creates `<table>_rebuild`
 *    beside it with triggers that keep it current, and notes the highest
 *    message id;
 * 2. batches, each its own short transaction sized to a time budget, fill
 *    it from the messages up to that id, with exactly the text Python's
 *    triggers write (rows that triggers already wrote are replaced);
 * 3. one short transaction swaps it in: the old table and all triggers are
 *    dropped, the new table renamed, the v11 triggers recreated byte for
 *    byte, and the `fts_stale:<table>` (and `fts_backfill:<table>`) marker removed.
 *
 * A kill before the swap leaves the live table with its triggers and a
 * leftover `<table>_rebuild` (the schema check names it; the next `--fix`
 * drops it). A damaged or missing table is replaced at once instead
 * (`fts_refill.ts`): its triggers could fail writes while a copy is built.
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
import { FTS_STALE_PREFIX } from "../sqlite/fts_stale.ts";
import { FTS_BACKFILL_PREFIX } from "../sqlite/schema/fts_backfill.ts";
import { dropFtsTriggers } from "../sqlite/schema/fts_triggers.ts";
import { hasTable } from "../sqlite/schema/has_table.ts";
import { TimedWriter } from "./transaction.ts";
import type { RetryOptions } from "../sqlite/write.ts";
import { fillInBatches } from "./_fts_batches.ts";
import { refillFtsTable } from "./fts_refill.ts";
import { delay } from "../core/delay.ts";
import { checkOptionNames, type OptionNames } from "../core/option_names.ts";

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
   * The live table's index is damaged: it is replaced at once by an empty
   * table with the v11 triggers, then filled (`fts_refill.ts`), instead of
   * being rebuilt beside. A missing table is always replaced so.
   * @default {false}
   */
  readonly damaged?: boolean;
  /** Aborted to stop between two transactions; the file stays consistent and indexed. */
  readonly signal?: AbortSignal;
  /**
   * How long each transaction waits for the lock: `timeoutMs`, about 16 s
   * without it, in short attempts the signal ends between (the attempt
   * counts and pauses of `RetryOptions` are not used).
   */
  readonly retry?: RetryOptions & {
    /** How long one transaction waits for the lock in all, in milliseconds (instead of a count). */
    readonly timeoutMs?: number;
  };
  /** Awaited between transactions (tests inject it). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Called after each batch with the messages indexed so far and the total. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** The options of the call, checked by name. */
const REBUILD_OPTION_NAMES: OptionNames<RebuildOptions> = {
  batchBudgetMs: true,
  pauseMs: true,
  damaged: "boolean",
  signal: true,
  retry: true,
  sleep: true,
  onProgress: true,
};

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

/**
 * Rebuilds one full-text table in batches, safe on a live file.
 *
 * @param db A writable connection (busy timeout set), not inside a transaction.
 * @param table The table to rebuild (created when missing).
 * @param options Time budget, pauses, retry, stop signal, and whether the table is damaged.
 * @returns Rows, transactions and the longest lock hold.
 * @throws {WriteBusyError} When another connection held the lock through every attempt.
 * @throws {DOMException} The signal's reason when stopped (the file is consistent: see the module).
 * @throws {TypeError} When `options` is not an object or holds an option this call does not
 *   take, naming it; nothing is done.
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
  checkOptionNames("rebuild search index", options, REBUILD_OPTION_NAMES);
  options ??= {};
  if (options.damaged || !hasTable(db, table)) return await refillFtsTable(db, table, options);
  const started = performance.now();
  const pause = options.pauseMs ?? 100;
  const sleep = options.sleep ?? delay;
  const writer = new TimedWriter(db, { ...options.retry, signal: options.signal });
  const side = rebuildName(table);

  const { value: upTo } = await writer.runAsync(() => {
    dropFtsTriggers(db, side);
    db.exec(`DROP TABLE IF EXISTS ${side}`);
    // The live table is sound: writes are indexed there from now on, even if this stops here.
    dropFtsTriggers(db, table);
    db.exec(ftsTriggersSql(table));
    db.exec(ftsTableSql(table).replace(` ${table} USING`, ` ${side} USING`));
    db.exec(keepCurrentTriggers(side));
    return Number(db.prepare("SELECT COALESCE(max(id), 0) AS n FROM messages").get()?.n ?? 0);
  });

  const clear = db.prepare(`DELETE FROM ${side} WHERE rowid > ? AND rowid <= ?`);
  const fill = db.prepare(
    `INSERT INTO ${side}(rowid, content) SELECT m.id, ${indexedTextSql("m")} FROM messages m
     WHERE m.id > ? AND m.id <= ?`,
  );
  const done = await fillInBatches(db, writer, {
    upTo,
    budgetMs: options.batchBudgetMs ?? 200,
    pauseMs: pause,
    sleep,
    signal: options.signal,
    onProgress: options.onProgress,
    fill: (after, last) => {
      clear.run(after, last);
      return fill.run(after, last).changes;
    },
  });

  await sleep(pause);
  options.signal?.throwIfAborted();
  const { heldMs: swapMs } = await writer.runAsync(() => {
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
