/**
 * `recover`'s read of one table through SQLite: by rowid ranges, halving
 * every range that fails down to single rowids, then cross-checked against
 * every other witness the file has (its indexes, the full-text tables, the
 * records the page scan found): SQLite may return fewer rows than a range
 * holds without an error, or rows of a damaged cell (a rowid out of the
 * range or twice, values no Hermes wrote or that differ from an index's
 * copy of them). Such rows are left out; every
 * rowid a witness gives that the scan did not return is read alone, and
 * those that still cannot be read are reported as failed (the page scan
 * may still hold them; the rest are lost).
 *
 * @module
 */
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import type {
  SqliteConnection,
  SqliteStatement,
  SqlRow,
  SqlValue,
} from "../sqlite/driver/types.ts";
import { DECLARED_COLUMNS } from "../sqlite/schema/schema_sql.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { type ColumnDeclaration, columnDeclarations } from "./_column_declarations.ts";
import {
  exactIntegersTerm,
  invalidTexts,
  middle,
  putExactIntegers,
  type Rowid,
  rowidOf,
} from "./_exact_values.ts";
import { plausibleRow } from "./_recover_plausible.ts";
import { agreesWithIndexes, witnessedRowids, type Witnesses } from "./_recover_witnesses.ts";

/** The tables `recover` salvages. */
export type RecoveredTable = "sessions" | "messages" | "state_meta";

/** SQLite codes that mean "this part of the file cannot be read". */
const UNREADABLE = new Set([10, 11, 26]);

/** SQLite queries the read may run per table before it leaves the rest to the page scan. */
const QUERY_BUDGET = 400_000;

/**
 * Whether `error` says a part of the file cannot be read.
 *
 * @param error What was thrown.
 * @returns `true` for SQLite's I/O error, corruption and "not a database".
 */
export function unreadable(error: unknown): boolean {
  return error instanceof SqliteError && UNREADABLE.has(error.code);
}

/** One table as read: rows by rowid, the column names of the source, and what failed. */
export interface TableRead {
  readonly columns: string[];
  readonly rows: Map<Rowid, SqlValue[]>;
  /**
   * Text values that are not valid UTF-8, as their bytes, by rowid and
   * column index (a decoded string would hold U+FFFD in their place).
   */
  readonly rawTexts: Map<Rowid, Map<number, Uint8Array>>;
  /**
   * Single rowids whose reads failed (or gave no plausible row, though a
   * witness lists them), and ranges left unexplored when the budget ran out.
   */
  readonly failed: Array<[Rowid, Rowid]>;
  readonly readable: boolean;
  /** False when the table's highest rowid could not be read (nor known otherwise). */
  readonly topKnown: boolean;
  /** The source's declarations of its columns (empty when its schema is unreadable). */
  readonly declarations: Map<string, ColumnDeclaration>;
  /**
   * Rows SQLite returned from damaged cells (a rowid outside the range
   * asked or given twice, values no Hermes wrote or that differ from an
   * index's), left out.
   */
  readonly rejected: number;
  /** What the table's indexes (or full-text tables) say of its rows. */
  readonly witnesses: Witnesses;
}

/**
 * The v11 columns of `table`, in order.
 *
 * @param table The table.
 * @returns The column names.
 */
export function declaredColumns(table: RecoveredTable): string[] {
  return DECLARED_COLUMNS.filter((c) => c.table === table).map((c) => c.name);
}

/** `min(rowid)` or `max(rowid)` of `table`, exact; `undefined` when it cannot be read. */
function rowidBound(
  db: SqliteConnection,
  table: RecoveredTable,
  bound: "min" | "max",
): Rowid | undefined {
  try {
    const row = db.prepare(`SELECT CAST(${bound}(rowid) AS TEXT) AS n FROM ${table}`).get();
    return row?.n === null || row?.n === undefined ? 0 : rowidOf(BigInt(String(row.n)));
  } catch (error) {
    if (!unreadable(error)) throw error;
    return undefined;
  }
}

/** The smallest of `rowids`; `undefined` when there is none. */
function least(rowids: Iterable<Rowid>): Rowid | undefined {
  let min: Rowid | undefined;
  for (const rowid of rowids) if (min === undefined || rowid < min) min = rowid;
  return min;
}

/** The largest of `rowids`; `undefined` when there is none. */
function greatest(rowids: Iterable<Rowid>): Rowid | undefined {
  let max: Rowid | undefined;
  for (const rowid of rowids) if (max === undefined || rowid > max) max = rowid;
  return max;
}

/** Whether `id` is one of `failed` (a single rowid or within a range). */
function failedIdTest(failed: ReadonlyArray<[Rowid, Rowid]>): (id: Rowid) => boolean {
  const singles = new Set<Rowid>();
  const spans: Array<[Rowid, Rowid]> = [];
  for (const [from, to] of failed) {
    if (from === to) singles.add(from);
    else spans.push([from, to]);
  }
  return (id) => singles.has(id) || spans.some(([from, to]) => id >= from && id <= to);
}

/**
 * Reads `table` by rowid ranges, halving every range that fails down to
 * single rowids, then reads alone every rowid a witness gives that the
 * ranges did not return. Every value comes back exact: integers beyond
 * 2^53 as `bigint`s, text that is not valid UTF-8 as its bytes (`rawTexts`).
 *
 * @param db The damaged file.
 * @param table The table.
 * @param raw The lowest and highest rowids the page scan found for the table.
 * @param knownTop The highest rowid known otherwise (the message id sequence), or 0.
 * @param onPages Rowids the page scan found for the table on pages SQLite reads (none when
 *   SQLite reads a `-wal` too: the file's own pages may hold rows it deleted since).
 * @returns The rows, and what failed.
 */
export function readTable(
  db: SqliteConnection,
  table: RecoveredTable,
  raw: { readonly min: Rowid; readonly max: Rowid },
  knownTop: Rowid,
  onPages: Iterable<Rowid>,
): TableRead {
  let columns: string[];
  try {
    columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all().map((r) =>
      String(r.name)
    );
  } catch (error) {
    if (!unreadable(error)) throw error;
    return unreadTable(table);
  }
  // A damaged schema page: a column name in bytes that are not UTF-8 (read as U+FFFD) is not
  // the one SQLite holds, and Bun's SQLite would read it as a string literal for every row.
  if (columns.length === 0 || columns.some((c) => c.includes("\uFFFD"))) return unreadTable(table);
  const declarations = columnDeclarations(db, table);
  const witnesses = witnessedRowids(db, table, declarations, table === "messages" ? knownTop : 0);
  // Rowids may be 0 or negative (a raw SQL write): the range starts at the lowest. SQLite's
  // min() and max() read one cell each, which a damaged page may make any 64-bit number;
  // an index read whole bounds the rows better (a range of 2^62 rowids is never read).
  const lowest = rowidBound(db, table, "min");
  const highest = rowidBound(db, table, "max");
  const indexed = witnesses.indexes.length > 0;
  const lo = [raw.min, (indexed ? least(witnesses.rowids) : lowest) ?? 1, 1]
    .reduce((a, b) => (b < a ? b : a));
  const hi = [raw.max, (indexed ? greatest(witnesses.rowids) : highest) ?? 0, knownTop]
    .reduce((a, b) => (b > a ? b : a));
  const list = columns.map(quoteIdentifier).join(", ");
  let select: SqliteStatement;
  try {
    select = db.prepare(
      `SELECT CAST(rowid AS TEXT) AS hermes_rowid, ${list}, ${exactIntegersTerm(columns)} ` +
        `AS hermes_exact FROM ${table} WHERE rowid BETWEEN ? AND ? ORDER BY rowid`,
    );
  } catch (error) {
    // A damaged schema page: a column name that is not the one SQLite holds (bytes that are
    // not UTF-8 read as U+FFFD). The table is read from the pages.
    if (error instanceof SqliteError) return unreadTable(table);
    throw error;
  }
  const rows = new Map<Rowid, SqlValue[]>();
  const rawTexts = new Map<Rowid, Map<number, Uint8Array>>();
  const failed: Array<[Rowid, Rowid]> = [];
  let rejected = 0;
  const messageId = table === "messages" ? columns.indexOf("id") : -1;
  const valuesOf = (row: SqlRow): [Rowid, SqlValue[]] => {
    const digits = String(row.hermes_rowid);
    const rowid = digits.length < 16 ? Number(digits) : rowidOf(BigInt(digits));
    const values = columns.map((c) => row[c] ?? null);
    putExactIntegers(values, row.hermes_exact);
    // A message's id is its rowid (even when a damaged schema no longer says so).
    if (messageId >= 0) values[messageId] = rowid;
    return [rowid, values];
  };
  const keep = (rowid: Rowid, values: SqlValue[]): boolean => {
    if (!plausibleRow(table, columns, values, declarations)) return false;
    if (!agreesWithIndexes(witnesses, rowid, columns, values)) return false;
    rows.set(rowid, values);
    const texts = invalidTexts(db, table, columns, rowid, values);
    if (texts !== undefined) rawTexts.set(rowid, texts);
    return true;
  };
  // A rowid returned twice (a damaged cell repeating another's) is trusted in neither copy.
  const seen = new Set<Rowid>();
  const pending: Array<[bigint, bigint]> = hi >= lo ? [[BigInt(lo), BigInt(hi)]] : [];
  let queries = 0;
  while (pending.length > 0) {
    const [from, top] = pending.pop()!;
    if (queries++ >= QUERY_BUDGET) {
      failed.push(
        ...[[from, top], ...pending.splice(0)].map(([a, b]) => [rowidOf(a), rowidOf(b)]) as Array<
          [Rowid, Rowid]
        >,
      );
      break;
    }
    try {
      for (const [rowid, values] of select.all(from, top).map(valuesOf)) {
        if (rowid < from || rowid > top || seen.has(rowid)) {
          rejected++;
          rows.delete(rowid);
          rawTexts.delete(rowid);
        } else if (!keep(rowid, values)) rejected++;
        seen.add(rowid);
      }
    } catch (error) {
      if (!unreadable(error)) throw error;
      if (from === top) failed.push([rowidOf(from), rowidOf(from)]);
      else {
        const mid = middle(from, top);
        pending.push([mid + BigInt(1), top], [from, mid]);
      }
    }
  }
  // The rows the scan did not return though a witness lists them: each read alone.
  const alreadyFailed = failedIdTest(failed);
  const tried = new Set<Rowid>();
  for (const id of [...witnesses.rowids, ...onPages]) {
    if (rows.has(id) || tried.has(id) || alreadyFailed(id)) continue;
    tried.add(id);
    if (queries++ >= QUERY_BUDGET) {
      failed.push([id, id]);
      continue;
    }
    try {
      const found = select.all(BigInt(id), BigInt(id)).map(valuesOf);
      if (found.length === 1 && found[0][0] === id && keep(id, found[0][1])) continue;
    } catch (error) {
      if (!unreadable(error)) throw error;
    }
    failed.push([id, id]);
  }
  const topKnown = highest !== undefined || knownTop !== 0;
  return {
    columns,
    rows,
    rawTexts,
    failed,
    readable: true,
    topKnown,
    declarations,
    rejected,
    witnesses,
  };
}

/**
 * A table SQLite could not read at all.
 *
 * @param table The table.
 * @param columns Its columns (v11's by default).
 * @returns A read with no row.
 */
export function unreadTable(
  table: RecoveredTable,
  columns: string[] = declaredColumns(table),
): TableRead {
  return {
    columns,
    rows: new Map(),
    rawTexts: new Map(),
    failed: [],
    readable: false,
    topKnown: false,
    declarations: new Map(),
    rejected: 0,
    witnesses: { rowids: new Set(), indexes: [] },
  };
}
