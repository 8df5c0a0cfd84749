/**
 * The three triggers that keep a full-text table in step with `messages`
 * (`<table>_insert`, `_delete`, `_update`): their names, and dropping them,
 * for every module that sets a table aside, fills it or rebuilds it.
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";

/**
 * The three trigger names of a full-text table (or of one built beside it).
 *
 * @param table The table.
 * @returns `<table>_insert`, `<table>_delete`, `<table>_update`.
 */
export function ftsTriggerNames(table: string): string[] {
  return ["insert", "delete", "update"].map((event) => `${table}_${event}`);
}

/**
 * Drops the three triggers of a table, those that exist.
 *
 * @param db The connection (inside the caller's write transaction).
 * @param table The table.
 */
export function dropFtsTriggers(db: SqliteConnection, table: string): void {
  for (const name of ftsTriggerNames(table)) db.exec(`DROP TRIGGER IF EXISTS ${name}`);
}
