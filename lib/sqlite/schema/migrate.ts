/**
 * The schema step run on every writable open (SPEC §2, "Opening"): create
 * what is missing, add missing columns, upgrade old versions, never touch a
 * newer one.
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";
import { SQLITE, SqliteError } from "../driver/sqlite_error.ts";
import {
  DECLARED_COLUMNS,
  FTS_TABLES,
  ftsBackfillSql,
  type FtsTable,
  ftsTableSql,
  ftsTriggersSql,
  INDEXES_SQL,
  SCHEMA_VERSION,
  TABLES_SQL,
  TITLE_INDEX_SQL,
} from "./schema_sql.ts";
import { beginFtsBackfill, FTS_BACKFILL_PREFIX, pendingBackfills } from "./fts_backfill.ts";
import { readSchemaVersion } from "./schema_version.ts";
import { hasTable } from "./has_table.ts";

/** What the schema step found and did. */
export interface MigrationReport {
  /** The version before the step; `undefined` for a new file. */
  readonly versionBefore: number | undefined;
  /** The version after it. */
  readonly versionAfter: number;
}

/**
 * Brings the file to schema version 11, except for the rows of an old file
 * still to be copied into the new full-text tables (then `versionAfter` is
 * still the old version: `finishFtsBackfill` copies them and sets 11). Call
 * inside a write transaction.
 *
 * @param db The connection.
 * @returns The versions before and after.
 */
export function migrate(db: SqliteConnection): MigrationReport {
  db.exec(TABLES_SQL);
  addMissingColumns(db);
  db.exec(INDEXES_SQL);
  const before = readSchemaVersion(db) ?? undefined;
  let after = before ?? SCHEMA_VERSION;
  if (before === undefined) {
    db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(SCHEMA_VERSION);
  } else if (before < SCHEMA_VERSION) {
    // The v10 step (a trigram table) is part of the v11 rebuild. Rows are
    // copied into the new tables after this transaction, in short ones:
    // see `fts_backfill.ts` (a file whose copy was interrupted resumes it).
    const resuming = pendingBackfills(db).length > 0;
    if (resuming || beginFtsBackfill(db)) {
      after = before;
    } else {
      after = SCHEMA_VERSION;
    }
  }
  db.exec(TITLE_INDEX_SQL);
  // A newer Hermes owns its full-text layout, and may have dropped a table
  // on purpose (to refill it): a v11 table in its place would take its rows.
  if (after <= SCHEMA_VERSION) { for (const table of FTS_TABLES) createFtsTable(db, table); }
  return { versionBefore: before, versionAfter: after };
}

/** Every table and index the schema step creates when missing, by name (full-text tables apart). */
const OBJECT_NAMES: readonly string[] = [
  ...[...TABLES_SQL.matchAll(/CREATE TABLE IF NOT EXISTS (\w+)/g)].map((m) => m[1]),
  ...[...`${INDEXES_SQL}\n${TITLE_INDEX_SQL}`.matchAll(/INDEX IF NOT EXISTS (\w+)/g)].map((m) =>
    m[1]
  ),
];

const quoted = (names: readonly string[]) => names.map((name) => `'${name}'`).join(", ");

/**
 * One read that tells whether the schema step has anything to do: the
 * version (from the one row `migrate` reads), how many of the objects and
 * declared columns exist, and how many backfill keys are left. Built from
 * the schema's own constants, never from input.
 */
const CURRENT_SQL = `SELECT (SELECT version FROM schema_version LIMIT 1) AS version,
  (SELECT count(*) FROM sqlite_master WHERE name IN (${quoted(OBJECT_NAMES)})) AS objects,
  (SELECT count(*) FROM sqlite_master WHERE name IN (${quoted(FTS_TABLES)})) AS fts,
  ${
  [...new Set(DECLARED_COLUMNS.map((c) => c.table))].map((table) =>
    `(SELECT count(*) FROM pragma_table_info('${table}') WHERE name IN (${
      quoted(DECLARED_COLUMNS.filter((c) => c.table === table).map((c) => c.name))
    }))`
  ).join(" +\n  ")
} AS columns,
  (SELECT count(*) FROM state_meta WHERE substr(key, 1, ${FTS_BACKFILL_PREFIX.length}) = '${FTS_BACKFILL_PREFIX}') AS pending`;

/**
 * The file's schema version when the schema step would change nothing (at
 * version 11 or newer, every table, index and declared column present, both
 * full-text tables too unless the version is newer, no backfill pending),
 * read without a write lock; else
 * `undefined`, and {@linkcode migrate} must run.
 *
 * @param db The connection.
 * @returns The version, or `undefined`.
 * @throws {SqliteError} On a storage failure other than a missing table.
 */
export function currentSchemaVersion(db: SqliteConnection): number | undefined {
  let row;
  try {
    row = db.prepare(CURRENT_SQL).get();
  } catch (error) {
    if (error instanceof SqliteError && /no such table/.test(error.message)) return undefined;
    throw error;
  }
  const version = Number(row?.version);
  const current = Number.isSafeInteger(version) && version >= SCHEMA_VERSION &&
    Number(row?.objects) === OBJECT_NAMES.length &&
    (version > SCHEMA_VERSION || Number(row?.fts) === FTS_TABLES.length) &&
    Number(row?.columns) === DECLARED_COLUMNS.length && Number(row?.pending) === 0;
  return current ? version : undefined;
}

function liveColumns(db: SqliteConnection, table: string): Set<string> {
  const rows = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all();
  return new Set(rows.map((row) => String(row.name)));
}

/** Adds each declared column a live table lacks; extra columns are kept. */
function addMissingColumns(db: SqliteConnection): void {
  const live = new Map<string, Set<string>>();
  for (const column of DECLARED_COLUMNS) {
    let names = live.get(column.table);
    if (!names) live.set(column.table, names = liveColumns(db, column.table));
    if (names.has(column.name)) continue;
    try {
      db.exec(
        `ALTER TABLE ${column.table} ADD COLUMN "${column.name}" ${column.definition}`,
      );
    } catch (error) {
      // SQLite cannot add some columns to a live table (a PRIMARY KEY, NOT NULL
      // without a default). Python ignores those too; anything else is real.
      if (!isUnaddableColumn(error)) throw error;
    }
  }
}

/** SQLite's refusals of an `ADD COLUMN` that no live table can take. */
const UNADDABLE_COLUMN =
  /Cannot add a (PRIMARY KEY|UNIQUE|NOT NULL|STORED|REFERENCES) column|Cannot add a column with non-constant default|duplicate column name/;

/** True when `error` is SQLite refusing a column it cannot add to a live table. */
function isUnaddableColumn(error: unknown): boolean {
  return error instanceof SqliteError && error.code === SQLITE.ERROR &&
    UNADDABLE_COLUMN.test(error.message);
}

/** Creates a missing full-text table with its triggers, filled from every message. */
function createFtsTable(db: SqliteConnection, table: FtsTable): void {
  if (hasTable(db, table)) return;
  db.exec(ftsTableSql(table));
  db.exec(ftsTriggersSql(table));
  db.exec(ftsBackfillSql(table));
}
