/**
 * Replacing a damaged (or missing) full-text table so that a process killed
 * at any moment leaves every later write indexed:
 *
 * 1. one short transaction drops the damaged table and its triggers,
 *    creates the table again empty with the v11 triggers byte for byte (so
 *    every write from then on is indexed, by Python's writers too), removes
 *    the `fts_stale:<table>` mark and records `fts_backfill:<table>` with
 *    `{"next": 1, "upto": <largest id>}`, the key an interrupted v1–v10
 *    upgrade leaves (`sqlite/schema/fts_backfill.ts`);
 * 2. batches, each its own short transaction, copy the older messages the
 *    table lacks and advance `next`;
 * 3. a last one removes the key.
 *
 * While the key is present search reads that table's messages by substring
 * (the answers stay whole), and a kill leaves the key: the next
 * `doctor --fix` finishes the copy where it stopped. A damaged index is
 * never kept beside its replacement: its triggers could fail every write.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import {
  type FtsTable,
  ftsTableSql,
  ftsTriggersSql,
  indexedTextSql,
  UPSERT_META_SQL,
} from "../sqlite/schema/schema_sql.ts";
import { FTS_STALE_PREFIX } from "../sqlite/fts_stale.ts";
import { FTS_BACKFILL_PREFIX } from "../sqlite/schema/fts_backfill.ts";
import { dropFtsTriggers } from "../sqlite/schema/fts_triggers.ts";
import { fillInBatches } from "./_fts_batches.ts";
import type { RebuildOptions, RebuildResult } from "./fts_rebuild.ts";
import { TimedWriter } from "./transaction.ts";
import { delay } from "../core/delay.ts";

/**
 * Replaces one full-text table by an empty one its triggers keep current,
 * then fills it with the older messages in batches.
 *
 * @param db A writable connection on a v11 file (with `state_meta`), not inside a transaction.
 * @param table The table to replace (created when missing).
 * @param options Time budget, pauses, retry, stop signal.
 * @returns Rows, transactions and the longest lock hold.
 * @throws {WriteBusyError} When another connection held the lock through every attempt.
 * @throws {DOMException} The signal's reason when stopped (the file is consistent: see the module).
 *
 * @example
 * ```ts
 * import { loadDriver } from "../sqlite/driver/load.ts";
 * import { migrate } from "../sqlite/schema/migrate.ts";
 * import { refillFtsTable } from "./fts_refill.ts";
 * const db = (await loadDriver())(":memory:");
 * migrate(db);
 * db.exec("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1)");
 * db.exec("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'docker', 1)");
 * const result = await refillFtsTable(db, "messages_fts");
 * console.assert(result.rows === 1);
 * db.close();
 * ```
 */
export async function refillFtsTable(
  db: SqliteConnection,
  table: FtsTable,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const started = performance.now();
  const writer = new TimedWriter(db, { ...options.retry, signal: options.signal });
  const key = `${FTS_BACKFILL_PREFIX}${table}`;
  const { value: upTo } = await writer.runAsync(() => {
    dropFtsTriggers(db, table);
    db.exec(`DROP TABLE IF EXISTS ${table}`);
    db.exec(ftsTableSql(table));
    db.exec(ftsTriggersSql(table));
    db.prepare("DELETE FROM state_meta WHERE key = ?").run(`${FTS_STALE_PREFIX}${table}`);
    const largest = Number(
      db.prepare("SELECT coalesce(max(id), 0) AS n FROM messages").get()?.n ?? 0,
    );
    db.prepare(UPSERT_META_SQL).run(key, JSON.stringify({ next: 1, upto: largest }));
    return largest;
  });
  // Rows an update rewrote through the triggers are there already: only missing ids are added.
  const copy = db.prepare(
    `INSERT INTO ${table}(rowid, content) SELECT m.id, ${indexedTextSql("m")} FROM messages m
     WHERE m.id > ? AND m.id <= ? AND NOT EXISTS (SELECT 1 FROM ${table} WHERE rowid = m.id)`,
  );
  const progress = db.prepare(UPSERT_META_SQL);
  const rows = await fillInBatches(db, writer, {
    upTo,
    budgetMs: options.batchBudgetMs ?? 200,
    pauseMs: options.pauseMs ?? 100,
    sleep: options.sleep ?? delay,
    signal: options.signal,
    onProgress: options.onProgress,
    fill: (after, last) => {
      const { changes } = copy.run(after, last);
      progress.run(key, JSON.stringify({ next: last + 1, upto: upTo }));
      return changes;
    },
  });
  await (options.sleep ?? delay)(options.pauseMs ?? 100);
  options.signal?.throwIfAborted();
  const { heldMs: swapMs } = await writer.runAsync(() => {
    db.prepare("DELETE FROM state_meta WHERE key = ?").run(key);
  });
  return {
    table,
    rows,
    transactions: writer.transactions,
    longestLockMs: writer.longestMs,
    swapMs,
    totalMs: performance.now() - started,
  };
}
