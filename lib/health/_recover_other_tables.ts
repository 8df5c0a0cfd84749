/**
 * The tables a newer Hermes added, in `recover`: its per-model usage
 * (`session_model_usage`), its system prompts kept once each
 * (`system_prompts`, which its sessions name by `system_prompt_hash`), its
 * delegations and routing state… Each is read as SQLite reads it (by rowid
 * ranges, halving every range that fails; a `WITHOUT ROWID` table whole)
 * and written into the new file as the source declares it, with its
 * indexes. What the pages alone hold of them is not read: their layouts are
 * not known here. Rows that name a row the new file lacks (usage of a lost
 * session) are left out and counted; a session whose system prompt could
 * not be read has its link cleared, and is counted.
 *
 * @module
 */
import type { SqliteConnection, SqlValue } from "../sqlite/driver/types.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { bindable, exactIntegersTerm, middle, putExactIntegers } from "./_exact_values.ts";
import { unreadable } from "./_recover_table_read.ts";

/** The tables `recover` salvages itself, or the new file makes. */
const OWN_TABLES = new Set(["sessions", "messages", "state_meta", "schema_version"]);

/** Range reads one table may take before the rest is given up. */
const QUERY_BUDGET = 100_000;

/** One table of a newer Hermes as read from the damaged file. */
export interface OtherTable {
  /** Its name. */
  readonly name: string;
  /** Its `CREATE TABLE` statement in the source. */
  readonly sql: string;
  /** Its indexes' `CREATE INDEX` statements. */
  readonly indexes: readonly string[];
  /** Its columns, in the order of each row's values. */
  readonly columns: readonly string[];
  /** The rows SQLite returned. */
  readonly rows: readonly SqlValue[][];
  /** False when a part of it could not be read (how many rows it held there is not known). */
  readonly whole: boolean;
}

/** What the new file holds of one such table. */
export interface OtherTableReport {
  /** The table. */
  readonly table: string;
  /** Its rows in the new file. */
  readonly rows: number;
  /**
   * Rows read but left out: a row that names a row the new file lacks (the
   * usage of a lost session), whose key another row holds, or that breaks a
   * constraint of the table (a value of a damaged cell).
   */
  readonly leftOut: number;
  /**
   * False when rows of it may be lost: a part of it could not be read, or
   * the new file could not make it as the source declares it (then it holds none).
   */
  readonly whole: boolean;
}

/**
 * Reads every table of `db` that is not one of the state.db's own, nor a
 * search table or its shadow tables, nor SQLite's.
 *
 * @param db The damaged file, its schema readable.
 * @returns The tables, in the schema's order.
 * @throws {SqliteError} A busy one when another process holds the file: the
 *   read may be made again from the start.
 */
export function readOtherTables(db: SqliteConnection): OtherTable[] {
  let schema: Array<{ type: string; name: string; tbl_name: string; sql: string }>;
  try {
    schema = db.prepare(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid",
    ).all() as unknown as typeof schema;
  } catch (error) {
    if (!unreadable(error)) throw error;
    return [];
  }
  const virtual = schema.filter((o) => o.type === "table" && /^\s*CREATE\s+VIRTUAL\b/i.test(o.sql))
    .map((o) => o.name);
  const other = schema.filter((o) =>
    o.type === "table" && !OWN_TABLES.has(o.name) && !o.name.startsWith("sqlite_") &&
    !virtual.some((name) => o.name === name || o.name.startsWith(`${name}_`))
  );
  return other.map((table) => {
    const indexes = schema.filter((o) => o.type === "index" && o.tbl_name === table.name)
      .map((o) => o.sql);
    return { ...readTable(db, table.name, table.sql), indexes };
  });
}

/** One table's columns and rows; none when its columns cannot be read. */
function readTable(
  db: SqliteConnection,
  name: string,
  sql: string,
): Omit<OtherTable, "indexes"> {
  let columns: string[];
  try {
    columns = db.prepare("SELECT name FROM pragma_table_info(?)").all(name)
      .map((row) => String(row.name));
  } catch (error) {
    if (!unreadable(error)) throw error;
    return { name, sql, columns: [], rows: [], whole: false };
  }
  const list = columns.map(quoteIdentifier).join(", ");
  const select = `SELECT ${list}, ${exactIntegersTerm(columns)} AS hermes_exact FROM ${
    quoteIdentifier(name)
  }`;
  const valuesOf = (row: Record<string, SqlValue>): SqlValue[] => {
    const values = columns.map((column) => row[column] ?? null);
    putExactIntegers(values, row.hermes_exact);
    return values;
  };
  const rows: SqlValue[][] = [];
  if (/WITHOUT\s+ROWID\s*$/i.test(sql)) {
    try {
      for (const row of db.prepare(select).all()) rows.push(valuesOf(row));
      return { name, sql, columns, rows, whole: true };
    } catch (error) {
      if (!unreadable(error)) throw error;
      return { name, sql, columns, rows: [], whole: false };
    }
  }
  const bounds = rowidBounds(db, name);
  if (bounds === undefined) return { name, sql, columns, rows, whole: false };
  if (bounds === "empty") return { name, sql, columns, rows, whole: true };
  const whole = readRanges(db, select, bounds, (row) => rows.push(valuesOf(row)));
  return { name, sql, columns, rows, whole };
}

/** The lowest and highest rowid; `undefined` when they cannot be read. */
function rowidBounds(db: SqliteConnection, name: string): [bigint, bigint] | "empty" | undefined {
  try {
    const row = db.prepare(
      `SELECT CAST(min(rowid) AS TEXT) AS lo, CAST(max(rowid) AS TEXT) AS hi FROM ${
        quoteIdentifier(name)
      }`,
    ).get();
    if (row?.lo === null || row?.lo === undefined) return "empty";
    return [BigInt(String(row.lo)), BigInt(String(row.hi))];
  } catch (error) {
    if (!unreadable(error)) throw error;
    return undefined;
  }
}

/**
 * Reads `lo`–`hi`, halving every range that fails down to single rowids.
 *
 * @returns False when a rowid could not be read (or the budget ran out).
 */
function readRanges(
  db: SqliteConnection,
  select: string,
  [lo, hi]: [bigint, bigint],
  keep: (row: Record<string, SqlValue>) => void,
): boolean {
  const range = db.prepare(`${select} WHERE rowid BETWEEN ? AND ? ORDER BY rowid`);
  // One rowid is sought alone: a range read steps on to the next row, and so onto a damaged
  // page after the last row of a sound one.
  const one = db.prepare(`${select} WHERE rowid = ?`);
  const pending: Array<[bigint, bigint]> = [[lo, hi]];
  let whole = true;
  for (let queries = 0; pending.length > 0; queries++) {
    if (queries >= QUERY_BUDGET) return false;
    const [from, top] = pending.pop()!;
    let found: Array<Record<string, SqlValue>>;
    try {
      found = from === top ? one.all(from) : range.all(from, top);
    } catch (error) {
      if (!unreadable(error)) throw error;
      if (from === top) whole = false;
      else {
        const mid = middle(from, top);
        pending.push([mid + BigInt(1), top], [from, mid]);
      }
      continue;
    }
    for (const row of found) keep(row);
  }
  return whole;
}

/**
 * Makes each table in the new file as the source declares it, with its
 * indexes, and inserts its rows: a row whose key another holds, or that
 * breaks a constraint of the table (a value of a damaged cell), is left
 * out. A table whose statement fails, or whose name the new file already
 * has, is not made.
 *
 * @param db The new file, in a transaction, foreign keys off.
 * @param tables What was read.
 * @returns Each table made, with the rows left out of it.
 */
export function writeOtherTables(
  db: SqliteConnection,
  tables: readonly OtherTable[],
): Map<string, number> {
  const made = new Map<string, number>();
  for (const table of tables) {
    if (table.columns.length === 0 || !createTable(db, table)) continue;
    const names = table.columns.map(quoteIdentifier).join(", ");
    const insert = db.prepare(
      `INSERT OR IGNORE INTO ${quoteIdentifier(table.name)} (${names}) VALUES (${
        table.columns.map(() => "?").join(", ")
      })`,
    );
    let leftOut = 0;
    for (const row of table.rows) {
      if (insert.run(...row.map(bindable)).changes === 0) leftOut++;
    }
    made.set(table.name, leftOut);
  }
  return made;
}

/**
 * Makes the table and its indexes; false (nothing made) when its statement
 * fails or makes another table than the one read (a statement damaged in
 * place: another name, or a column the rows have missing).
 */
function createTable(db: SqliteConnection, table: OtherTable): boolean {
  const exists = db.prepare("SELECT 1 AS found FROM sqlite_master WHERE name = ?").get(table.name);
  if (exists !== undefined) return false;
  db.exec("SAVEPOINT recover_table");
  try {
    db.exec(table.sql);
    const made = new Set(
      db.prepare("SELECT name FROM pragma_table_info(?)").all(table.name).map((r) => r.name),
    );
    if (!table.columns.every((column) => made.has(column))) {
      throw new Error(`${table.name} was not made as it was read`);
    }
    db.exec("RELEASE recover_table");
  } catch {
    // A statement damaged in place (or naming another table): the table is not made.
    db.exec("ROLLBACK TO recover_table");
    db.exec("RELEASE recover_table");
    return false;
  }
  for (const sql of table.indexes) {
    db.exec("SAVEPOINT recover_index");
    try {
      db.exec(sql);
    } catch {
      // An index the new file cannot make (a function it lacks) is left out; the rows are not.
      db.exec("ROLLBACK TO recover_index");
    }
    db.exec("RELEASE recover_index");
  }
  return true;
}

/**
 * After every row is in the new file: clears each session's link to a
 * system prompt the file does not hold, and leaves out each row of the
 * tables made that names a row the file lacks.
 *
 * @param db The new file, in a transaction, foreign keys off.
 * @param tables What was read.
 * @param made The tables {@linkcode writeOtherTables} made, with the rows it left out.
 * @returns The sessions whose prompt link was cleared, and each table's report.
 */
export function settleOtherTables(
  db: SqliteConnection,
  tables: readonly OtherTable[],
  made: ReadonlyMap<string, number>,
): { clearedPrompts: number; reports: OtherTableReport[] } {
  const linked = db.prepare("SELECT 1 AS found FROM pragma_table_info('sessions') WHERE name = ?")
    .get("system_prompt_hash") !== undefined;
  if (linked && !made.has("system_prompts")) {
    db.exec(
      "CREATE TABLE IF NOT EXISTS system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)",
    );
  }
  const clearedPrompts = linked
    ? db.prepare(
      `UPDATE sessions SET system_prompt_hash = NULL WHERE system_prompt_hash IS NOT NULL
       AND system_prompt_hash NOT IN (SELECT hash FROM system_prompts)`,
    ).run().changes
    : 0;
  const reports = tables.map((table): OtherTableReport => {
    if (!made.has(table.name)) {
      return { table: table.name, rows: 0, leftOut: table.rows.length, whole: false };
    }
    const name = quoteIdentifier(table.name);
    let leftOut = made.get(table.name)!;
    for (const { rowid } of orphansOf(db, name)) {
      // A WITHOUT ROWID table's row has none to name it: it stays.
      if (rowid === null || rowid === undefined) continue;
      leftOut += db.prepare(`DELETE FROM ${name} WHERE rowid = ?`).run(bindable(rowid)).changes;
    }
    const rows = Number(db.prepare(`SELECT count(*) AS n FROM ${name}`).get()?.n ?? 0);
    return { table: table.name, rows, leftOut, whole: table.whole };
  });
  return { clearedPrompts, reports };
}

/**
 * The rows of `name` that name a row the file lacks; none when SQLite
 * cannot tell (a foreign key naming columns its parent does not key, "foreign
 * key mismatch": the rows are then kept as they are).
 */
function orphansOf(db: SqliteConnection, name: string): Array<{ rowid?: SqlValue }> {
  try {
    return db.prepare(`PRAGMA foreign_key_check(${name})`).all();
  } catch {
    return [];
  }
}
