/**
 * Which rows of a table a damaged file says exist, besides the table
 * itself: SQLite may return fewer rows than the table holds without an
 * error (a damaged cell whose rowid ends a range scan early), so the count
 * it returns proves nothing. Every index of the table lists the rowid of
 * each row, on pages of its own; the full-text tables list each message's
 * id. `recover` reads the rowids these witnesses give that the table read
 * did not, and reports those it still cannot read as lost.
 *
 * @module
 */
import type { SqliteConnection, SqlValue } from "../sqlite/driver/types.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { FTS_TABLES } from "../sqlite/schema/schema_sql.ts";
import type { ColumnDeclaration } from "./_column_declarations.ts";
import { plausibleRow } from "./_recover_plausible.ts";
import { type Rowid, rowidOf } from "./_exact_values.ts";
import { isBusyError } from "../sqlite/store_retry.ts";

/** The entries of one index read whole: its columns' values by rowid. */
export interface IndexEntries {
  /** The index's columns. */
  readonly columns: readonly string[];
  /** Each rowid's values of those columns. */
  readonly values: Map<Rowid, SqlValue[]>;
}

/** The rowids the witnesses of a table give. */
export interface Witnesses {
  /** Every rowid an index (or, without a readable index, a full-text table) lists. */
  readonly rowids: Set<Rowid>;
  /** The entries of each index read whole (a second copy of the values they hold). */
  readonly indexes: readonly IndexEntries[];
}

/**
 * The rows one query lists (its `hermes_rowid` as digits, the values of
 * `columns`); `undefined` when it fails.
 */
function listedRows(
  db: SqliteConnection,
  sql: string,
  columns: readonly string[],
): Map<Rowid, SqlValue[]> | undefined {
  try {
    const found = new Map<Rowid, SqlValue[]>();
    for (const row of db.prepare(sql).all()) {
      if (row.hermes_rowid === null) continue;
      found.set(rowidOf(BigInt(String(row.hermes_rowid))), columns.map((c) => row[c] ?? null));
    }
    return found;
  } catch (error) {
    // Another process holding the file is no damage: the read is waited for and tried again.
    if (isBusyError(error)) throw error;
    return undefined; // a damaged index is no witness: the others, or none, remain
  }
}

function sameValue(a: SqlValue, b: SqlValue): boolean {
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && a.length === b.length &&
      a.every((byte, i) => byte === b[i]);
  }
  const numeric = (x: SqlValue) => typeof x === "number" || typeof x === "bigint";
  // A number and a bigint of one integer are one value (`==` compares them exactly).
  return numeric(a) && numeric(b) ? a == b : a === b;
}

/**
 * Whether a row's values agree with every index entry of its rowid: an
 * index holds a second copy of its columns, so a row that differs from it
 * was damaged (a timestamp zeroed, a session id changed).
 *
 * @param witnesses The table's witnesses.
 * @param rowid The row's rowid.
 * @param columns The column of each value (a record may hold fewer values).
 * @param values The row's values.
 * @returns `false` when an index entry of `rowid` holds another value.
 */
export function agreesWithIndexes(
  witnesses: Witnesses,
  rowid: Rowid,
  columns: readonly string[],
  values: readonly SqlValue[],
): boolean {
  for (const index of witnesses.indexes) {
    const entry = index.values.get(rowid);
    if (entry === undefined) continue;
    for (const [i, column] of index.columns.entries()) {
      const at = columns.indexOf(column);
      if (at >= 0 && at < values.length && !sameValue(values[at], entry[i])) return false;
    }
  }
  return true;
}

/** The indexes of `table` that cover every row (not partial), with their named columns. */
function fullIndexes(db: SqliteConnection, table: string): Array<[string, string[]]> {
  try {
    const names = db.prepare("SELECT name FROM pragma_index_list(?) WHERE partial = 0").all(table)
      .map((row) => String(row.name));
    return names.map((name) => [
      name,
      db.prepare("SELECT name FROM pragma_index_info(?) WHERE name IS NOT NULL ORDER BY seqno")
        .all(name).map((row) => String(row.name)),
    ]);
  } catch (error) {
    if (isBusyError(error)) throw error;
    return [];
  }
}

/**
 * The rowids of `table` its indexes list, with their entries; for
 * `messages` without an index read whole, the ids every full-text table
 * read lists (they may hold ids of messages deleted without the triggers,
 * so they are witnesses of last resort). An index entry whose values no Hermes
 * wrote (a damaged index page) or past `top` is left out.
 *
 * @param db The damaged file.
 * @param table The table.
 * @param declarations The source's declarations of the table's columns.
 * @param top The highest rowid the table can hold (the message id sequence), or 0 when unknown.
 * @returns The rowids, and the entries of each index read whole.
 */
export function witnessedRowids(
  db: SqliteConnection,
  table: string,
  declarations: ReadonlyMap<string, ColumnDeclaration>,
  top: Rowid,
): Witnesses {
  const rowids = new Set<Rowid>();
  const indexes: IndexEntries[] = [];
  const listed = (rowid: Rowid) => top === 0 || rowid <= top;
  for (const [index, columns] of fullIndexes(db, table)) {
    const list = columns.map((c) => `, ${quoteIdentifier(c)}`).join("");
    const found = listedRows(
      db,
      `SELECT CAST(rowid AS TEXT) AS hermes_rowid${list} ` +
        `FROM ${quoteIdentifier(table)} INDEXED BY ${quoteIdentifier(index)}`,
      columns,
    );
    if (found === undefined) continue;
    for (const [rowid, values] of found) {
      if (!listed(rowid) || !plausibleRow(table, columns, values, declarations)) {
        found.delete(rowid);
      } else rowids.add(rowid);
    }
    indexes.push({ columns, values: found });
  }
  if (table === "messages" && indexes.length === 0) {
    // Each full-text table lists every message: with two read, an id only one lists (a
    // damaged page's) is left out.
    const lists = FTS_TABLES.map((fts) => {
      const name = quoteIdentifier(`${fts}_docsize`);
      return listedRows(db, `SELECT CAST(id AS TEXT) AS hermes_rowid FROM ${name}`, []);
    }).filter((list) => list !== undefined);
    for (const rowid of lists[0]?.keys() ?? []) {
      if (listed(rowid) && lists.every((list) => list.has(rowid))) rowids.add(rowid);
    }
  }
  return { rowids, indexes };
}
