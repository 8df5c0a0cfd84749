/**
 * Where `recover` keeps the rows it read through SQLite until the new file
 * is written. Held in memory they cost about 2 KB of heap per message (a
 * file of some two million messages ran out of it); past a few thousand
 * rows of a table they go to a scratch SQLite file beside the destination
 * (no journal, no sync: it is removed when `recover` ends, whatever
 * happens), and only their rowids stay in memory. Values come back exactly
 * as they went in: integers beyond 2^53 as `bigint`s, text with U+0000,
 * bytes as bytes.
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import type {
  SqliteConnection,
  SqliteDriver,
  SqliteStatement,
  SqlValue,
} from "../sqlite/driver/types.ts";
import {
  bindable,
  byRowid,
  exactIntegersTerm,
  putExactIntegers,
  type Rowid,
  rowidOf,
} from "./_exact_values.ts";
import { removeWithSidecars } from "./_temp_files.ts";
import { RecoverError } from "../core/errors.ts";
import { diskFullReason, isDiskFull } from "../sqlite/disk_space.ts";

/** Rows, and bytes of their text, a table keeps in memory before they go to the scratch file. */
export const IN_MEMORY = { rows: 4096, bytes: 16 * 1024 * 1024 } as const;

/** How many rows one read of rows may return: at first, at the least, at the most. */
export const ROWS_PER_READ = { first: 32, least: 1, most: 4096 } as const;

/** The text and bytes one read of rows aims to hold. */
const READ_BYTES = 8 * 1024 * 1024;

/**
 * How many rows the next read may return, from what this one held: halved
 * while a read's text passes a few MB, doubled while it stays under a
 * quarter of that, so that one read holds a few MB whatever the rows.
 *
 * @param current How many this read could return.
 * @param rows What it returned.
 * @returns How many the next may.
 */
export function nextReadSize(current: number, rows: Iterable<readonly SqlValue[]>): number {
  let bytes = 0;
  for (const values of rows) bytes += bytesOf(values);
  if (bytes > READ_BYTES) return Math.max(ROWS_PER_READ.least, current >> 1);
  if (bytes < READ_BYTES / 4) return Math.min(ROWS_PER_READ.most, current * 2);
  return current;
}

/** About what the text and bytes of `values` take in memory. */
function bytesOf(values: readonly SqlValue[]): number {
  let bytes = 0;
  for (const value of values) {
    if (typeof value === "string") bytes += value.length * 2;
    else if (value instanceof Uint8Array) bytes += value.byteLength;
  }
  return bytes;
}

/** The rows of one table, by rowid. */
export interface RecoveredRows {
  /** How many rows there are. */
  readonly size: number;
  /** Whether `rowid` has a row. */
  has(rowid: Rowid): boolean;
  /** The row of `rowid`, if any. */
  get(rowid: Rowid): SqlValue[] | undefined;
  /** Keeps `values` as the row of `rowid` (replacing one there). */
  set(rowid: Rowid, values: SqlValue[]): void;
  /** Drops the row of `rowid`, if any. */
  delete(rowid: Rowid): void;
  /** Every row, by rowid ascending. */
  ordered(): Iterable<[Rowid, SqlValue[]]>;
}

/** Rows held in memory only: a table that never grows past a few thousand. */
export class RowsInMemory implements RecoveredRows {
  readonly #rows = new Map<Rowid, SqlValue[]>();

  /** How many rows there are. */
  get size(): number {
    return this.#rows.size;
  }

  /** Whether `rowid` has a row. */
  has(rowid: Rowid): boolean {
    return this.#rows.has(rowid);
  }

  /** The row of `rowid`, if any. */
  get(rowid: Rowid): SqlValue[] | undefined {
    return this.#rows.get(rowid);
  }

  /** Keeps `values` as the row of `rowid`. */
  set(rowid: Rowid, values: SqlValue[]): void {
    this.#rows.set(rowid, values);
  }

  /** Drops the row of `rowid`. */
  delete(rowid: Rowid): void {
    this.#rows.delete(rowid);
  }

  /** Every row, by rowid ascending. */
  ordered(): Iterable<[Rowid, SqlValue[]]> {
    return [...this.#rows].sort((a, b) => byRowid(a[0], b[0]));
  }
}

/** The scratch file the rows of every table of one `recover` go to, opened on first use. */
export class RowSpill {
  readonly #path: string;
  readonly #openDriver: SqliteDriver;
  #db: SqliteConnection | undefined;
  /** Whether this run made the scratch file (only then is it removed). */
  #made = false;

  /**
   * @param path The scratch file (a temporary name beside the destination).
   * @param openDriver Opens it.
   */
  constructor(path: string, openDriver: SqliteDriver) {
    this.#path = path;
    this.#openDriver = openDriver;
  }

  /**
   * The rows of `table`: in memory up to {@linkcode IN_MEMORY}, then in
   * the scratch file.
   *
   * @param table The table (names the scratch table).
   * @returns An empty set of rows.
   */
  rowsOf(table: string): RecoveredRows {
    return new SpillingRows(
      () => this.#connection(),
      `rows_${table}`,
      (error) => this.#failed(error),
    );
  }

  /** What a failed write of the scratch file throws: it names the file. */
  #failed(error: unknown): RecoverError {
    const reason = isDiskFull(error, this.#path)
      ? diskFullReason(this.#path)
      : error instanceof Error
      ? error.message
      : String(error);
    return new RecoverError(
      `Cannot keep the rows read in ${this.#path} (beside the new file): ${reason}`,
      { cause: error },
    );
  }

  #connection(): SqliteConnection {
    if (this.#db === undefined) {
      removeWithSidecars(this.#path);
      // Mode 0600 before SQLite opens it: it holds the sessions' text, as a state.db does.
      writeFileSync(this.#path, "", { mode: 0o600, flag: "wx" });
      this.#made = true;
      const db = this.#openDriver(this.#path);
      db.exec("PRAGMA journal_mode = OFF");
      db.exec("PRAGMA synchronous = OFF");
      db.exec("PRAGMA locking_mode = EXCLUSIVE");
      db.exec("BEGIN");
      this.#db = db;
    }
    return this.#db;
  }

  /** Closes the scratch file and removes it (nothing of it is ever kept). */
  remove(): void {
    try {
      this.#db?.close();
    } finally {
      this.#db = undefined;
      if (this.#made) removeWithSidecars(this.#path);
    }
  }
}

/** Rows in memory until there are too many, then in a table of the scratch file. */
class SpillingRows implements RecoveredRows {
  readonly #connect: () => SqliteConnection;
  readonly #table: string;
  #memory: RowsInMemory | undefined = new RowsInMemory();
  /** About what the rows in memory take (a row replaced or dropped still counts). */
  #memoryBytes = 0;
  /** The rowids in the scratch table (its rows' text is not held). */
  readonly #ids = new Set<Rowid>();
  #width = 0;
  #statements:
    | {
      put: SqliteStatement;
      drop: SqliteStatement;
      one: SqliteStatement;
      first: SqliteStatement;
      after: SqliteStatement;
    }
    | undefined;

  readonly #failed: (error: unknown) => Error;

  constructor(
    connect: () => SqliteConnection,
    table: string,
    failed: (error: unknown) => Error,
  ) {
    this.#connect = connect;
    this.#table = table;
    this.#failed = failed;
  }

  get size(): number {
    return this.#memory?.size ?? this.#ids.size;
  }

  has(rowid: Rowid): boolean {
    return this.#memory?.has(rowid) ?? this.#ids.has(rowid);
  }

  get(rowid: Rowid): SqlValue[] | undefined {
    if (this.#memory !== undefined) return this.#memory.get(rowid);
    if (!this.#ids.has(rowid)) return undefined;
    const row = this.#statements!.one.get(bindable(rowid));
    return row === undefined ? undefined : this.#valuesOf(row);
  }

  set(rowid: Rowid, values: SqlValue[]): void {
    if (this.#memory !== undefined) {
      this.#memory.set(rowid, values);
      this.#memoryBytes += bytesOf(values);
      if (this.#memory.size > IN_MEMORY.rows || this.#memoryBytes > IN_MEMORY.bytes) {
        this.#writing(() => this.#spill(values.length));
      }
      return;
    }
    this.#writing(() => this.#put(rowid, values));
  }

  /** Runs a write of the scratch file; its failure (a full disk) names the file. */
  #writing(write: () => void): void {
    try {
      write();
    } catch (error) {
      throw this.#failed(error);
    }
  }

  delete(rowid: Rowid): void {
    if (this.#memory !== undefined) {
      this.#memory.delete(rowid);
      return;
    }
    if (this.#ids.delete(rowid)) this.#statements!.drop.run(bindable(rowid));
  }

  *ordered(): Iterable<[Rowid, SqlValue[]]> {
    if (this.#memory !== undefined) {
      yield* this.#memory.ordered();
      return;
    }
    // Read a few MB at a time (a driver's iterate() may read the whole result at once).
    const { first, after } = this.#statements!;
    let size: number = ROWS_PER_READ.first;
    let page = first.all(size);
    while (page.length > 0) {
      const rows = page.map((row): [Rowid, SqlValue[]] => [
        rowidOf(BigInt(String(row.hermes_rowid))),
        this.#valuesOf(row),
      ]);
      yield* rows;
      if (page.length < size) return;
      size = nextReadSize(size, rows.map(([, values]) => values));
      page = after.all(bindable(rows.at(-1)![0]), size);
    }
  }

  /** Moves the rows in memory to the scratch table, and every later one. */
  #spill(width: number): void {
    const db = this.#connect();
    this.#width = width;
    const columns = this.#columns();
    const table = `"${this.#table}"`;
    db.exec(`CREATE TABLE ${table} (rid INTEGER PRIMARY KEY, ${columns.join(", ")})`);
    const values = columns.map(() => "?").join(", ");
    const exact = `${exactIntegersTerm(columns)} AS hermes_exact`;
    const read = `${columns.join(", ")}, ${exact}`;
    this.#statements = {
      put: db.prepare(
        `INSERT OR REPLACE INTO ${table} (rid, ${columns.join(", ")}) VALUES (?, ${values})`,
      ),
      drop: db.prepare(`DELETE FROM ${table} WHERE rid = ?`),
      one: db.prepare(`SELECT ${read} FROM ${table} WHERE rid = ?`),
      first: db.prepare(
        `SELECT CAST(rid AS TEXT) AS hermes_rowid, ${read} FROM ${table} ORDER BY rid LIMIT ?`,
      ),
      after: db.prepare(
        `SELECT CAST(rid AS TEXT) AS hermes_rowid, ${read} FROM ${table} WHERE rid > ? ` +
          "ORDER BY rid LIMIT ?",
      ),
    };
    const memory = this.#memory!;
    this.#memory = undefined;
    for (const [rowid, row] of memory.ordered()) this.#put(rowid, row);
  }

  #put(rowid: Rowid, values: SqlValue[]): void {
    if (values.length !== this.#width) {
      throw new Error(`a row of ${values.length} values for ${this.#width} columns`);
    }
    this.#statements!.put.run(bindable(rowid), ...values.map(bindable));
    this.#ids.add(rowid);
  }

  #columns(): string[] {
    return Array.from({ length: this.#width }, (_, i) => `c${i}`);
  }

  #valuesOf(row: Record<string, SqlValue>): SqlValue[] {
    const values = this.#columns().map((column) => row[column] ?? null);
    putExactIntegers(values, row.hermes_exact);
    return values;
  }
}
