/**
 * Whether a file has a table, asked of `sqlite_master` on every call: for
 * modules that work on a bare connection (migrations, the schema version, the
 * search-index rebuild). A `Store` keeps its own answer per connection
 * (`Store.hasTable`).
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";

/**
 * Whether `name` is a table of the file `db` has open. Changes nothing.
 *
 * @param db The connection.
 * @param name The table's name.
 * @returns True when the table exists now.
 */
export function hasTable(db: SqliteConnection, name: string): boolean {
  return db.prepare("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(name) !== undefined;
}
