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
 * may still hold them; the rest are lost). A read that meets another
 * process's lock keeps nothing of itself, and the table's read goes on from
 * it when called again (`TableReader`), so `recover` waits for the lock
 * rather than failing or reading the table twice.
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
import { nextReadSize, type RecoveredRows, ROWS_PER_READ, RowsInMemory } from "./_recover_rows.ts";
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
  readonly rows: RecoveredRows;
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

/**
 * Whether `id` is one of `failed` (a single rowid or within a range).
 *
 * @param failed Single rowids and ranges, as {@linkcode TableRead.failed} holds them.
 * @returns The test.
 */
export function failedIdTest(failed: ReadonlyArray<[Rowid, Rowid]>): (id: Rowid) => boolean {
  const singles = new Set<Rowid>();
  const spans: Array<[Rowid, Rowid]> = [];
  for (const [from, to] of failed) {
    if (from === to) singles.add(from);
    else spans.push([from, to]);
  }
  return (id) => singles.has(id) || spans.some(([from, to]) => id >= from && id <= to);
}

/** Where {@linkcode TableReader} reads a table from, besides SQLite. */
export interface TableReaderOptions {
  /** The lowest and highest rowids the page scan found for the table. */
  readonly raw: { readonly min: Rowid; readonly max: Rowid };
  /** The highest rowid known otherwise (the message id sequence), or 0. */
  readonly knownTop: Rowid;
  /**
   * Rowids the page scan found for the table on pages SQLite reads (none
   * when SQLite reads a `-wal` too: the file's own pages may hold rows it
   * deleted since).
   */
  readonly onPages: Iterable<Rowid>;
  /** Where the rows read are kept (in memory unless given). */
  readonly rows?: RecoveredRows;
}

/** What a range read gave, judged row by row before anything is kept. */
type Judged =
  | { readonly rowid: Rowid; readonly verdict: "outside" }
  | { readonly rowid: Rowid; readonly verdict: "rejected" }
  | {
    readonly rowid: Rowid;
    readonly verdict: "kept";
    readonly values: SqlValue[];
    readonly texts: Map<number, Uint8Array> | undefined;
  };

/**
 * Reads one table by rowid ranges, halving every range that fails down to
 * single rowids, then reads alone every rowid a witness gives that the
 * ranges did not return. Every value comes back exact: integers beyond
 * 2^53 as `bigint`s, text that is not valid UTF-8 as its bytes (`rawTexts`).
 *
 * A read that meets another process's lock (a busy error) throws it having
 * kept nothing of that read; {@linkcode TableReader.read} called again
 * goes on from that read, so a caller may wait for the lock and try again
 * without reading anything twice.
 */
export class TableReader {
  readonly #db: SqliteConnection;
  readonly #table: RecoveredTable;
  readonly #options: TableReaderOptions;
  #result: TableRead | undefined;
  // The steps done so far, each kept once it is.
  #columns: string[] | null | undefined;
  #declarations: Map<string, ColumnDeclaration> | undefined;
  #witnesses: Witnesses | undefined;
  #lowest: { readonly rowid: Rowid | undefined } | undefined;
  #highest: { readonly rowid: Rowid | undefined } | undefined;
  #select: SqliteStatement | null | undefined;
  #pending: Array<[bigint, bigint]> | undefined;
  #alreadyFailed: ((id: Rowid) => boolean) | undefined;
  #candidates: Rowid[] | undefined;
  #next = 0;
  readonly #rows: RecoveredRows;
  readonly #rawTexts = new Map<Rowid, Map<number, Uint8Array>>();
  readonly #failed: Array<[Rowid, Rowid]> = [];
  // A rowid returned twice (a damaged cell repeating another's) is trusted in neither copy.
  readonly #seen = new Set<Rowid>();
  readonly #tried = new Set<Rowid>();
  #rejected = 0;
  #queries = 0;
  #perRead: number = ROWS_PER_READ.first;

  /**
   * Prepares the read of `table` (nothing is read yet).
   *
   * @param db The damaged file.
   * @param table The table.
   * @param options What the page scan and the message id sequence say of it.
   */
  constructor(db: SqliteConnection, table: RecoveredTable, options: TableReaderOptions) {
    this.#db = db;
    this.#table = table;
    this.#options = options;
    this.#rows = options.rows ?? new RowsInMemory();
  }

  /**
   * Reads the table, or goes on reading it from the read that met a lock.
   *
   * @returns The rows, and what failed.
   * @throws {SqliteError} A busy one when another process holds the file: call again to go on.
   */
  read(): TableRead {
    this.#result ??= this.#readRest();
    return this.#result;
  }

  #readRest(): TableRead {
    const db = this.#db;
    const table = this.#table;
    const { raw, knownTop } = this.#options;
    if (this.#columns === undefined) this.#columns = this.#readColumns();
    const columns = this.#columns;
    // A damaged schema page: a column name in bytes that are not UTF-8 (read as U+FFFD) is not
    // the one SQLite holds, and Bun's SQLite would read it as a string literal for every row.
    if (columns === null || columns.length === 0 || columns.some((c) => c.includes("\uFFFD"))) {
      return unreadTable(table);
    }
    const declarations = this.#declarations ??= columnDeclarations(db, table);
    // A witness read that met a lock throws it (not taken for a damaged index): tried again.
    const witnesses = this.#witnesses ??= witnessedRowids(
      db,
      table,
      declarations,
      table === "messages" ? knownTop : 0,
    );
    // Rowids may be 0 or negative (a raw SQL write): the range starts at the lowest. SQLite's
    // min() and max() read one cell each, which a damaged page may make any 64-bit number;
    // an index read whole bounds the rows better (a range of 2^62 rowids is never read).
    const lowest = (this.#lowest ??= { rowid: rowidBound(db, table, "min") }).rowid;
    const highest = (this.#highest ??= { rowid: rowidBound(db, table, "max") }).rowid;
    if (this.#select === undefined) this.#select = this.#prepareSelect(columns);
    // A damaged schema page: a column name that is not the one SQLite holds (bytes that are
    // not UTF-8 read as U+FFFD). The table is read from the pages.
    if (this.#select === null) return unreadTable(table);
    if (this.#pending === undefined) {
      const indexed = witnesses.indexes.length > 0;
      const lo = [raw.min, (indexed ? least(witnesses.rowids) : lowest) ?? 1, 1]
        .reduce((a, b) => (b < a ? b : a));
      const hi = [raw.max, (indexed ? greatest(witnesses.rowids) : highest) ?? 0, knownTop]
        .reduce((a, b) => (b > a ? b : a));
      this.#pending = hi >= lo ? [[BigInt(lo), BigInt(hi)]] : [];
    }
    this.#readRanges(this.#pending, columns, declarations, witnesses);
    this.#readWitnessed(columns, declarations, witnesses);
    return {
      columns,
      rows: this.#rows,
      rawTexts: this.#rawTexts,
      failed: this.#failed,
      readable: true,
      topKnown: highest !== undefined || knownTop !== 0,
      declarations,
      rejected: this.#rejected,
      witnesses,
    };
  }

  /** The table's column names; `null` when the schema cannot be read. */
  #readColumns(): string[] | null {
    try {
      return this.#db.prepare(`SELECT name FROM pragma_table_info('${this.#table}')`).all()
        .map((r) => String(r.name));
    } catch (error) {
      if (!unreadable(error)) throw error;
      return null;
    }
  }

  /** The range query; `null` when SQLite refuses it (a damaged schema page). */
  #prepareSelect(columns: readonly string[]): SqliteStatement | null {
    const list = columns.map(quoteIdentifier).join(", ");
    try {
      return this.#db.prepare(
        `SELECT CAST(rowid AS TEXT) AS hermes_rowid, ${list}, ${exactIntegersTerm(columns)} ` +
          `AS hermes_exact FROM ${this.#table} WHERE rowid BETWEEN ? AND ? ORDER BY rowid LIMIT ?`,
      );
    } catch (error) {
      if (error instanceof SqliteError && !error.isBusy) return null;
      throw error;
    }
  }

  #valuesOf(row: SqlRow, columns: readonly string[]): [Rowid, SqlValue[]] {
    const digits = String(row.hermes_rowid);
    const rowid = digits.length < 16 ? Number(digits) : rowidOf(BigInt(digits));
    const values = columns.map((c) => row[c] ?? null);
    putExactIntegers(values, row.hermes_exact);
    // A message's id is its rowid (even when a damaged schema no longer says so).
    if (this.#table === "messages") {
      const messageId = columns.indexOf("id");
      if (messageId >= 0) values[messageId] = rowid;
    }
    return [rowid, values];
  }

  /** Whether a row may be kept: plausible, and as its indexes hold it. */
  #plausible(
    rowid: Rowid,
    values: readonly SqlValue[],
    columns: readonly string[],
    declarations: Map<string, ColumnDeclaration>,
    witnesses: Witnesses,
  ): boolean {
    return plausibleRow(this.#table, columns, values, declarations) &&
      agreesWithIndexes(witnesses, rowid, columns, values);
  }

  /** The ranges still to read, the last first; each read is kept whole or not at all. */
  #readRanges(
    pending: Array<[bigint, bigint]>,
    columns: readonly string[],
    declarations: Map<string, ColumnDeclaration>,
    witnesses: Witnesses,
  ): void {
    while (pending.length > 0) {
      const [from, top] = pending.at(-1)!;
      if (this.#queries >= QUERY_BUDGET) {
        const last = pending.pop()!;
        this.#failed.push(
          ...[last, ...pending.splice(0)].map(([a, b]) => [rowidOf(a), rowidOf(b)]) as Array<
            [Rowid, Rowid]
          >,
        );
        return;
      }
      let judged: Judged[];
      let broken: [Rowid, SqlValue[]] | undefined;
      let full: boolean;
      try {
        [judged, broken, full] = this.#judgeRange(from, top, columns, declarations, witnesses);
      } catch (error) {
        if (!unreadable(error)) throw error;
        pending.pop();
        this.#queries++;
        this.#halve(pending, from, top);
        continue;
      }
      pending.pop();
      this.#queries++;
      for (const row of judged) {
        if (row.verdict === "outside") {
          this.#rejected++;
          this.#rows.delete(row.rowid);
          this.#rawTexts.delete(row.rowid);
        } else if (row.verdict === "rejected") this.#rejected++;
        else {
          this.#rows.set(row.rowid, row.values);
          if (row.texts !== undefined) this.#rawTexts.set(row.rowid, row.texts);
        }
        this.#seen.add(row.rowid);
      }
      // A row whose text bytes could not be read again stays (as read), and the range is
      // narrowed as one that failed.
      if (broken !== undefined) {
        this.#rows.set(broken[0], broken[1]);
        this.#halve(pending, from, top);
      } else if (full) this.#continue(pending, from, top, judged);
    }
  }

  /**
   * A read that returned as many rows as it was let: the rest of its range
   * is read next, after the last row returned inside it (a damaged cell may
   * give a rowid outside the range). Read again, the rows kept would count
   * as repeated, so a read with no row inside the range leaves the rest to
   * the page scan, as a range that failed.
   */
  #continue(
    pending: Array<[bigint, bigint]>,
    from: bigint,
    top: bigint,
    judged: readonly Judged[],
  ): void {
    const inside = judged.map((row) => BigInt(row.rowid)).filter((id) => id >= from && id <= top);
    if (inside.length === 0) {
      this.#failed.push([rowidOf(from), rowidOf(top)]);
      return;
    }
    const after = inside.at(-1)!;
    if (after < top) pending.push([after + BigInt(1), top]);
  }

  /** A failed range: halved, or, a single rowid, failed. */
  #halve(pending: Array<[bigint, bigint]>, from: bigint, top: bigint): void {
    if (from === top) this.#failed.push([rowidOf(from), rowidOf(from)]);
    else {
      const mid = middle(from, top);
      pending.push([mid + BigInt(1), top], [from, mid]);
    }
  }

  /**
   * Reads the rows of `from`–`top` (as many as one read is let return)
   * and judges each, changing nothing: a rowid outside the range or given
   * twice, a row no Hermes wrote, a row kept (with the bytes of its texts
   * that are not UTF-8). The row whose bytes could not be read again ends
   * the judging (`broken`). Says too whether the read returned as many rows
   * as it was let (`full`: the rest of the range is still to read).
   */
  #judgeRange(
    from: bigint,
    top: bigint,
    columns: readonly string[],
    declarations: Map<string, ColumnDeclaration>,
    witnesses: Witnesses,
  ): [Judged[], [Rowid, SqlValue[]] | undefined, boolean] {
    const limit = this.#perRead;
    const found = this.#select!.all(from, top, limit).map((row) => this.#valuesOf(row, columns));
    const full = found.length >= limit;
    // A range is read a few MB at a time: read whole, it held every message's text twice.
    this.#perRead = nextReadSize(limit, found.map(([, values]) => values));
    const judged: Judged[] = [];
    const here = new Set<Rowid>();
    for (const [rowid, values] of found) {
      if (rowid < from || rowid > top || this.#seen.has(rowid) || here.has(rowid)) {
        judged.push({ rowid, verdict: "outside" });
      } else if (!this.#plausible(rowid, values, columns, declarations, witnesses)) {
        judged.push({ rowid, verdict: "rejected" });
      } else {
        let texts: Map<number, Uint8Array> | undefined;
        try {
          texts = invalidTexts(this.#db, this.#table, columns, rowid, values);
        } catch (error) {
          if (!unreadable(error)) throw error;
          return [judged, [rowid, values], full];
        }
        judged.push({ rowid, verdict: "kept", values, texts });
      }
      here.add(rowid);
    }
    return [judged, undefined, full];
  }

  /** The rows the ranges did not return though a witness lists them: each read alone. */
  #readWitnessed(
    columns: readonly string[],
    declarations: Map<string, ColumnDeclaration>,
    witnesses: Witnesses,
  ): void {
    const alreadyFailed = this.#alreadyFailed ??= failedIdTest(this.#failed);
    const candidates = this.#candidates ??= [...witnesses.rowids, ...this.#options.onPages];
    for (; this.#next < candidates.length; this.#next++) {
      const id = candidates[this.#next];
      if (this.#rows.has(id) || this.#tried.has(id) || alreadyFailed(id)) continue;
      let kept = false;
      if (this.#queries < QUERY_BUDGET) {
        kept = this.#readAlone(id, columns, declarations, witnesses);
        this.#queries++;
      }
      this.#tried.add(id);
      if (!kept) this.#failed.push([id, id]);
    }
  }

  /** Reads rowid `id` alone; keeps its row when it is plausible. */
  #readAlone(
    id: Rowid,
    columns: readonly string[],
    declarations: Map<string, ColumnDeclaration>,
    witnesses: Witnesses,
  ): boolean {
    let found: Array<[Rowid, SqlValue[]]>;
    try {
      found = this.#select!.all(BigInt(id), BigInt(id), 2).map((row) =>
        this.#valuesOf(row, columns)
      );
    } catch (error) {
      if (!unreadable(error)) throw error;
      return false;
    }
    if (found.length !== 1 || found[0][0] !== id) return false;
    const values = found[0][1];
    if (!this.#plausible(id, values, columns, declarations, witnesses)) return false;
    let texts: Map<number, Uint8Array> | undefined;
    try {
      texts = invalidTexts(this.#db, this.#table, columns, id, values);
    } catch (error) {
      if (!unreadable(error)) throw error;
      // Kept as read, and failed too: its bytes could not be read again.
      this.#rows.set(id, values);
      return false;
    }
    this.#rows.set(id, values);
    if (texts !== undefined) this.#rawTexts.set(id, texts);
    return true;
  }
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
    rows: new RowsInMemory(),
    rawTexts: new Map(),
    failed: [],
    readable: false,
    topKnown: false,
    declarations: new Map(),
    rejected: 0,
    witnesses: { rowids: new Set(), indexes: [] },
  };
}
