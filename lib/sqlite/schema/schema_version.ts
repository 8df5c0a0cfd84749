/**
 * The file's `schema_version`, read in one place for every module that asks
 * (open, migrate, inspect, doctor, recover, the newer-layout checks).
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";

/**
 * The version recorded in `schema_version`. Changes nothing.
 *
 * @param db The connection.
 * @returns The version; `null` when the table is empty; `undefined` when
 *   the file has no such table (a file no Hermes made, or a damaged one).
 */
export function readSchemaVersion(db: SqliteConnection): number | null | undefined {
  const table = db.prepare(
    "SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
  ).get();
  if (table === undefined) return undefined;
  const row = db.prepare("SELECT version FROM schema_version LIMIT 1").get();
  return row === undefined ? null : Number(row.version);
}
