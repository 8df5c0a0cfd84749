/**
 * The file's `schema_version`, read in one place for every module that asks
 * (open, migrate, inspect, doctor, recover, the newer-layout checks).
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";
import { hasTable } from "./has_table.ts";

/**
 * The version recorded in `schema_version`. Changes nothing.
 *
 * @param db The connection.
 * @returns The version; `null` when the table is empty; `undefined` when
 *   the file has no such table (a file no Hermes made, or a damaged one).
 */
export function readSchemaVersion(db: SqliteConnection): number | null | undefined {
  if (!hasTable(db, "schema_version")) return undefined;
  const row = db.prepare("SELECT version FROM schema_version LIMIT 1").get();
  return row === undefined ? null : Number(row.version);
}
