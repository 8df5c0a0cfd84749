/**
 * The stale marker of a full-text table: the `state_meta` key
 * `fts_stale:<table>`, holding why it was given up (an FTS write failed, its
 * triggers were dropped so no message write fails). `doctor --fix` rebuilds
 * the table and removes the key.
 *
 * @module
 */
import type { SqliteDriver } from "../driver/types.ts";
import type { FtsTable } from "../schema/schema_sql.ts";

/**
 * The `state_meta` key marking `table` stale.
 *
 * @param table The full-text table.
 * @returns `fts_stale:<table>`.
 */
export function staleKey(table: FtsTable): string {
  return `fts_stale:${table}`;
}

/**
 * Why `table` was marked stale, if it was.
 *
 * @param db The connection.
 * @param table The full-text table.
 * @returns The recorded reason, or `undefined` when not marked (or no `state_meta`).
 */
export function staleReason(db: SqliteDriver, table: FtsTable): string | undefined {
  const hasMeta = db.prepare(
    "SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'state_meta'",
  ).get();
  if (hasMeta === undefined) return undefined;
  const row = db.prepare("SELECT value FROM state_meta WHERE key = ?").get(staleKey(table));
  return row === undefined ? undefined : String(row.value ?? "");
}
