/**
 * SQLite's own checks: `PRAGMA quick_check` / `integrity_check` and
 * `PRAGMA foreign_key_check`. Shared by `info` and `doctor`.
 *
 * Since SQLite 3.44 both integrity pragmas also run each FTS5 table's
 * integrity check; their lines about FTS tables are returned apart, so the
 * FTS check can tell a known condition from damage. That check compares
 * every index entry with the text it came from (FTS5 makes no quick
 * version of it): about 37 seconds per million messages here, against 2–3
 * for the b-trees of the whole file. `searchIndexes: false` checks the
 * b-trees alone, table by table (FTS5's own tables included, as b-trees).
 *
 * @module
 */
import { SQLITE, SqliteError } from "./driver/sqlite_error.ts";
import type { SqliteConnection } from "./driver/types.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { inOneRead } from "./one_read.ts";

/** Lines of a result kept at most. */
const MAX_LINES = 100;

/** Options of {@linkcode integrityCheck}. */
export interface IntegrityOptions {
  /**
   * Run `integrity_check` (also checks every index against its table)
   * instead of the faster `quick_check`.
   * @default {false}
   */
  readonly full?: boolean;
  /**
   * Also verify each FTS5 index against its text. When false, every
   * ordinary table (the schema table and FTS5's shadow tables included) and
   * its indexes are checked one table at a time: the same b-tree checks,
   * except the two that need the whole file at once (pages on the free list
   * and pages no b-tree uses), which only a check of everything makes.
   * @default {true}
   */
  readonly searchIndexes?: boolean;
}

/** The answer of {@linkcode integrityCheck}. */
export interface IntegrityResult {
  /** `["ok"]` when sound, else SQLite's lines about the b-trees (FTS lines left out). */
  readonly lines: string[];
  /** Lines SQLite wrote about each FTS5 table, by table name. */
  readonly fts: Record<string, string[]>;
  /**
   * The pragma stopped before its end, at damage it could not read past
   * (its one line is the error's) or at its limit of lines: an FTS5 table it
   * had not reached has no line, checked or not.
   */
  readonly stopped: boolean;
}

/** True for a damaged page or header, which a check reports instead of throwing. */
export function isCorruption(error: unknown): error is SqliteError {
  return error instanceof SqliteError &&
    (error.code === SQLITE.CORRUPT || error.code === SQLITE.NOTADB);
}

/**
 * A line about one FTS5 table: its own check's ("FTS5 table x …"), or a
 * corrupt or mismatched shadow-table blob (`fts5: … table "x"`).
 */
const FTS_LINE = /FTS5 table (?:\w+\.)?(\w+)|^fts5: .*\btable "(\w+)"$/;

/**
 * Runs `PRAGMA quick_check` (or `integrity_check` when `full`), over the
 * whole file or, with `searchIndexes: false`, one table at a time.
 *
 * @param db The connection (read-only is enough).
 * @param options `full`, `searchIndexes`.
 * @returns The b-tree lines (`["ok"]` when sound) and the FTS lines apart.
 *
 * @example
 * ```ts
 * import { loadDriver } from "./driver/load.ts";
 * import { integrityCheck } from "./integrity.ts";
 * const db = (await loadDriver())(":memory:");
 * console.assert(integrityCheck(db).lines[0] === "ok");
 * db.close();
 * ```
 */
export function integrityCheck(
  db: SqliteConnection,
  options: IntegrityOptions = {},
): IntegrityResult {
  const pragma = options.full ? "integrity_check" : "quick_check";
  let stopped = false;
  const raw = options.searchIndexes === false
    ? tableByTable(db, pragma)
    : withFreshFtsStructure(db, () => {
      const whole = wholeFile(db, pragma);
      stopped = whole.stopped;
      return whole.lines;
    });
  const lines: string[] = [];
  const fts: Record<string, string[]> = {};
  for (const line of raw) {
    const match = FTS_LINE.exec(line);
    const table = match?.[1] ?? match?.[2];
    if (table === undefined) lines.push(line);
    else (fts[table] ??= []).push(line);
  }
  if (lines.length === 0) lines.push("ok");
  else if (lines.length > 1) {
    const index = lines.indexOf("ok");
    if (index >= 0) lines.splice(index, 1);
  }
  return { lines, fts, stopped };
}

type IntegrityPragma = "quick_check" | "integrity_check";

/** The FTS5 tables of the file (none when even the schema cannot be read). */
const FTS5_TABLES_SQL = `SELECT name FROM sqlite_schema
WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'`;

/**
 * Runs `check` in one read transaction, after a cursor on each FTS5 table
 * has made that table read its structure anew. FTS5 keeps a table's
 * structure (which blobs hold the index) from one transaction to the next,
 * and its part of the integrity pragmas reads it without asking whether
 * another connection wrote the index since: after a writer's commit it
 * looked for blobs that were no longer there and reported them as damage
 * (`fts5: corruption found reading blob …`) on a sound file. Opening a
 * cursor checks, and in the same transaction nothing can move after it.
 */
function withFreshFtsStructure<T>(db: SqliteConnection, check: () => T): T {
  return inOneRead(db, () => {
    let tables: string[] = [];
    try {
      tables = db.prepare(FTS5_TABLES_SQL).all().map((row) => String(row.name));
    } catch (error) {
      if (!isCorruption(error)) throw error;
    }
    for (const table of tables) {
      try {
        db.prepare(`SELECT rowid FROM ${quoteIdentifier(table)} WHERE rowid = 0`).all();
      } catch {
        // A table that cannot be read is the check's to report.
      }
    }
    return check();
  });
}

/** The lines of the pragma over the whole file, or the error of the damage that stopped it. */
function wholeFile(
  db: SqliteConnection,
  pragma: IntegrityPragma,
): { lines: string[]; stopped: boolean } {
  try {
    const lines = db.prepare(`PRAGMA ${pragma}(${MAX_LINES})`).all().map((row) =>
      String(Object.values(row)[0])
    );
    // At its line limit the pragma stops too, before the FTS5 tables (checked last).
    return { lines, stopped: lines.length >= MAX_LINES };
  } catch (error) {
    if (!isCorruption(error)) throw error;
    return { lines: [error.message], stopped: true };
  }
}

/** Ordinary tables: every b-tree but the virtual tables' (whose check is FTS5's). */
const ORDINARY_TABLES_SQL = `SELECT name FROM sqlite_schema
WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY rootpage`;

/**
 * The pragma's lines for each ordinary table in turn, `ok` lines left out
 * (none when every table is sound). A table whose pages cannot be read
 * gives its error's message, and the others are still checked.
 */
function tableByTable(db: SqliteConnection, pragma: IntegrityPragma): string[] {
  const lines: string[] = [];
  let names: string[];
  try {
    names = db.prepare(ORDINARY_TABLES_SQL).all().map((row) => String(row.name));
  } catch (error) {
    if (!isCorruption(error)) throw error;
    return [error.message];
  }
  for (const name of ["sqlite_schema", ...names]) {
    try {
      const rows = db.prepare(`PRAGMA ${pragma}(${quoteIdentifier(name)})`).all();
      for (const row of rows) {
        const line = String(Object.values(row)[0]);
        if (line !== "ok") lines.push(line);
      }
    } catch (error) {
      if (!isCorruption(error)) throw error;
      if (!lines.includes(error.message)) lines.push(error.message);
    }
    if (lines.length >= MAX_LINES) return lines.slice(0, MAX_LINES);
  }
  return lines;
}

/** One row of `PRAGMA foreign_key_check`. */
export interface ForeignKeyViolation {
  /** The table holding the row. */
  readonly table: string;
  /** Its rowid. */
  readonly rowid: number;
  /** The table it points at. */
  readonly parent: string;
}

/**
 * Runs `PRAGMA foreign_key_check`.
 *
 * @param db The connection.
 * @param limit Violations returned at most.
 * @returns The violations found (none on a sound file).
 */
export function foreignKeyCheck(db: SqliteConnection, limit = 1000): ForeignKeyViolation[] {
  const found: ForeignKeyViolation[] = [];
  for (const row of db.prepare("PRAGMA foreign_key_check").iterate()) {
    found.push({
      table: String(row.table),
      rowid: Number(row.rowid),
      parent: String(row.parent),
    });
    if (found.length >= limit) break;
  }
  return found;
}
