/**
 * The v11 schema as SQLite stores it: the `sqlite_master` rows a new file
 * gets, read from a fresh in-memory database that ran the schema step, so
 * comparisons use exactly the text this library (and Python) writes.
 *
 * @module
 */
import type { SqliteConnection, SqliteDriver } from "../sqlite/driver/types.ts";
import { migrate } from "../sqlite/schema/migrate.ts";

/** One object of the schema. */
export interface SchemaObject {
  /** `table`, `index` or `trigger`. */
  readonly type: string;
  /** Its name. */
  readonly name: string;
  /** The table it belongs to. */
  readonly table: string;
  /** Its CREATE text as stored (`null` for automatic indexes). */
  readonly sql: string | null;
}

/**
 * Reads the schema objects of a connection (automatic indexes included).
 *
 * @param db The connection.
 * @returns Every `sqlite_master` row, in creation order.
 */
export function schemaObjects(db: SqliteConnection): SchemaObject[] {
  return db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").all()
    .map((row) => ({
      type: String(row.type),
      name: String(row.name),
      table: String(row.tbl_name),
      sql: row.sql === null ? null : String(row.sql),
    }));
}

let cached: SchemaObject[] | undefined;

/**
 * The objects a new v11 file has, as stored.
 *
 * @param openDriver Opens the scratch in-memory database.
 * @returns The objects, in creation order.
 */
export function expectedSchema(openDriver: SqliteDriver): SchemaObject[] {
  if (cached !== undefined) return cached;
  const scratch = openDriver(":memory:");
  try {
    migrate(scratch);
    cached = schemaObjects(scratch);
    return cached;
  } finally {
    scratch.close();
  }
}

/**
 * The stored text of one expected object.
 *
 * @param openDriver Opens the scratch database.
 * @param name The object's name.
 * @returns Its CREATE text.
 * @throws {TypeError} When the v11 schema has no such object.
 */
export function expectedSql(openDriver: SqliteDriver, name: string): string {
  const found = expectedSchema(openDriver).find((object) => object.name === name);
  if (found?.sql == null) throw new TypeError(`Cannot find ${name} in the v11 schema`);
  return found.sql;
}
