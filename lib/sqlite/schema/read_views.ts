/**
 * Reading a file of an older Hermes as it is. A v1–v10 file lacks some
 * columns the v11 schema declares (`api_call_count`, `reasoning_content`,
 * `model`…); the upgrade adds them with `ALTER TABLE … ADD COLUMN`, which a
 * read must not do. Instead a read connection gets a TEMP view of the same
 * name per such table: the live columns in file order, then each missing
 * one with its declared default, exactly the shape (and values) the upgrade
 * would give. TEMP objects live in the connection only; the file is not
 * touched, and unqualified names find `temp` before `main`.
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";
import { DECLARED_COLUMNS } from "./schema_sql.ts";
import { quoteIdentifier } from "../../core/sql_identifier.ts";

/** The tables a read may see through a view. */
const TABLES = ["sessions", "messages"] as const;

/** The value a missing column reads as: its declared DEFAULT, else NULL. */
function defaultOf(definition: string): string {
  const match = /\bDEFAULT\s+('(?:[^']|'')*'|-?\d+(?:\.\d+)?|NULL)/i.exec(definition);
  return match ? match[1] : "NULL";
}

/**
 * Creates, on a read-only connection, a TEMP view for each Hermes table of
 * the file that lacks declared columns. Call after checking that both
 * tables exist. A view already there is kept, so a try that another
 * process's lock cut short may be run again.
 *
 * @param db A read-only connection.
 * @returns The tables read through a view (`[]` for a v11 or newer file).
 */
export function createReadViews(db: SqliteConnection): string[] {
  const viewed: string[] = [];
  for (const table of TABLES) {
    const live = db.prepare("SELECT name FROM pragma_table_info(?, 'main')").all(table)
      .map((row) => String(row.name));
    const present = new Set(live);
    const missing = DECLARED_COLUMNS.filter((c) => c.table === table && !present.has(c.name));
    if (missing.length === 0) continue;
    const columns = [
      ...live.map(quoteIdentifier),
      ...missing.map((c) => `${defaultOf(c.definition)} AS ${quoteIdentifier(c.name)}`),
    ];
    db.exec(
      `CREATE TEMP VIEW IF NOT EXISTS ${table} AS SELECT ${columns.join(", ")} FROM main.${table}`,
    );
    viewed.push(table);
  }
  return viewed;
}
