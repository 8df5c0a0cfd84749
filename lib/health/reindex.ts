/**
 * The repair of damage only in indexes (see `index_check.ts`): each
 * damaged index rebuilt from its table, all in one write transaction, then
 * each of their tables checked again with `integrity_check`.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { renameSharedTitles, type TitleRename } from "./title_check.ts";
import type { TimedWriter } from "./transaction.ts";
import { danglingEntries } from "./index_check.ts";

/** The unique title index: two sessions sharing a title keep `REINDEX` from building it. */
const TITLE_INDEX = "idx_sessions_title_unique";

/** What {@linkcode rebuildIndexes} did. */
export interface ReindexResult {
  /** The indexes rebuilt (those of the names that exist as indexes). */
  readonly rebuilt: readonly string[];
  /**
   * Indexes left as they were: they list rows their table no longer holds
   * (`undefined`: that cannot be told), the witnesses of rows a table page
   * may have lost, which only `recover` names.
   */
  readonly witnesses: readonly { index: string; rows: number | undefined }[];
  /** Sessions renamed so the unique title index could be built again. */
  readonly renames: readonly TitleRename[];
  /** Their tables' `integrity_check` after the rebuild: `[]` when sound. */
  readonly faults: readonly string[];
}

/**
 * Rebuilds the named indexes in one write transaction. `REINDEX` for each,
 * except the unique title index when its damage let two sessions share a
 * title: it is dropped, the later sessions get the next title of their
 * lineage (read without the index), and it is created again from its own
 * text, as the schema repair does.
 *
 * Call only when the integrity check found nothing but index faults: both
 * `REINDEX` and `DROP INDEX` free the index's pages, which is safe only
 * while every b-tree of the file is sound. An index that lists a row its
 * table no longer holds is left alone (asked again in the transaction).
 *
 * @param db A writable connection.
 * @param names The damaged indexes; names that are no index of the file are skipped.
 * @param writer Runs the transaction under the kit's lock wait.
 * @returns The indexes rebuilt, the renames and the check after.
 */
export async function rebuildIndexes(
  db: SqliteConnection,
  names: readonly string[],
  writer: TimedWriter,
): Promise<ReindexResult> {
  const find = db.prepare(
    "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND name = ?",
  );
  const { value } = await writer.runAsync(() => {
    const rebuilt: string[] = [];
    const witnesses: { index: string; rows: number | undefined }[] = [];
    const tables: string[] = [];
    let renames: TitleRename[] = [];
    for (const name of names) {
      const row = find.get(name);
      if (row === undefined) continue;
      const rows = danglingEntries(db, name);
      if (rows !== 0) {
        witnesses.push({ index: name, rows });
        continue;
      }
      if (name === TITLE_INDEX && typeof row.sql === "string" && hasSharedTitle(db)) {
        db.exec(`DROP INDEX ${quoteIdentifier(name)}`);
        renames = renameSharedTitles(db);
        db.exec(row.sql);
      } else {
        db.exec(`REINDEX ${quoteIdentifier(name)}`);
      }
      rebuilt.push(name);
      if (!tables.includes(String(row.tbl_name))) tables.push(String(row.tbl_name));
    }
    return { rebuilt, witnesses, renames, tables };
  });
  const faults: string[] = [];
  for (const table of value.tables) {
    for (const row of db.prepare(`PRAGMA integrity_check(${quoteIdentifier(table)})`).all()) {
      const line = String(Object.values(row)[0]);
      if (line !== "ok") faults.push(line);
    }
  }
  const { rebuilt, witnesses, renames } = value;
  return { rebuilt, witnesses, renames, faults };
}

/** Whether two sessions share a title, read from the table alone (the index may be wrong). */
function hasSharedTitle(db: SqliteConnection): boolean {
  return db.prepare(
    `SELECT 1 AS one FROM sessions NOT INDEXED WHERE title IS NOT NULL
     GROUP BY title HAVING count(*) > 1 LIMIT 1`,
  ).get() !== undefined;
}
