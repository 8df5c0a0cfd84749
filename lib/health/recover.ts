/**
 * `recoverDatabase(source, dest)`: salvage from a damaged state.db into a
 * new one. Every table is read through SQLite by rowid ranges, narrowing
 * the range around each page that fails, so every row SQLite can still
 * reach is kept; the rows it cannot reach (below a damaged interior page,
 * or all of them when the header page is gone) are taken from the
 * table-leaf pages that still parse, read without SQLite. The new file
 * gets the v11 schema, the rows, placeholder sessions for messages whose
 * session was lost, rebuilt FTS tables and recounted counters.
 *
 * Limits: rows on a damaged leaf page are lost (their rowid ranges are
 * reported); when the header page is lost, free pages cannot be told from
 * live ones, so a deleted row may come back; extra tables of a newer Hermes
 * are not copied (their extra columns are).
 *
 * @module
 */
import { chmodSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { loadDriver } from "../sqlite/driver/load.ts";
import { chooseReadAccess, driverOptionsFor } from "../sqlite/read_access.ts";
import { SqliteError } from "../sqlite/driver/sqlite_error.ts";
import type { SqliteConnection, SqliteDriver, SqlValue } from "../sqlite/driver/types.ts";
import { OpenError, RecoverError } from "../core/errors.ts";
import {
  DECLARED_COLUMNS,
  FTS_TABLES,
  ftsBackfillSql,
  ftsTriggersSql,
  SCHEMA_VERSION,
} from "../sqlite/schema/schema_sql.ts";
import { SessionDB } from "../sqlite/session_db.ts";
import { type RawRecord, scanPages } from "./_page_scan.ts";
import { fileIdentity, isDatabaseFile } from "../files/same_file.ts";
import { TOOL_CALLS_ADDED_SQL } from "./counter_check.ts";
import { readSchemaVersion } from "../sqlite/schema/schema_version.ts";

/** The tables recovered. */
const TABLES = ["sessions", "messages", "state_meta"] as const;
type Table = typeof TABLES[number];

/** SQLite codes that mean "this part of the file cannot be read". */
const UNREADABLE = new Set([10, 11, 26]);

/** SQLite queries the narrowing may run per table before it leaves the rest to the page scan. */
const QUERY_BUDGET = 400_000;

/** Options of {@linkcode recoverDatabase}. */
export interface RecoverOptions {
  /**
   * Replace `dest` when it exists.
   * @default {false}
   */
  readonly force?: boolean;
  /** The driver opener; the running runtime's by default. */
  readonly openDriver?: SqliteDriver;
}

/** Rowids of one table that could not be read (they may also be ids never used). */
export interface LostRange {
  /** The table. */
  readonly table: string;
  /** First rowid of the range. */
  readonly from: number;
  /** Last rowid of the range. */
  readonly to: number;
}

/** What {@linkcode recoverDatabase} saved. */
export interface RecoverResult {
  /** The damaged file. */
  readonly source: string;
  /** The new file. */
  readonly dest: string;
  /** Sessions in the new file (placeholders included). */
  readonly sessions: number;
  /** Messages in the new file. */
  readonly messages: number;
  /** `state_meta` rows in the new file. */
  readonly metaKeys: number;
  /** Rows read from the pages directly (SQLite could not reach them), by table. */
  readonly fromPages: {
    readonly sessions: number;
    readonly messages: number;
    readonly state_meta: number;
  };
  /** Sessions created for messages whose session was lost (source `unknown`). */
  readonly placeholderSessions: number;
  /** Parent links cleared because the parent was lost. */
  readonly clearedParents: number;
  /** Rowid ranges that could not be read, by table. */
  readonly lost: LostRange[];
  /** True when SQLite could read the schema at all. */
  readonly schemaReadable: boolean;
}

function unreadable(error: unknown): boolean {
  return error instanceof SqliteError && UNREADABLE.has(error.code);
}

/** One table as read: rows by rowid, the column names of the source, and what failed. */
interface TableRead {
  readonly columns: string[];
  readonly rows: Map<number, SqlValue[]>;
  /** Single rowids whose reads failed, and ranges left unexplored when the budget ran out. */
  readonly failed: Array<[number, number]>;
  readonly readable: boolean;
}

function declaredColumns(table: Table): string[] {
  return DECLARED_COLUMNS.filter((c) => c.table === table).map((c) => c.name);
}

/** Reads `table` by rowid ranges, halving every range that fails down to single rowids. */
function readTable(db: SqliteConnection, table: Table, rawMax: number): TableRead {
  let columns: string[];
  try {
    columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all().map((r) =>
      String(r.name)
    );
  } catch (error) {
    if (!unreadable(error)) throw error;
    return { columns: declaredColumns(table), rows: new Map(), failed: [], readable: false };
  }
  if (columns.length === 0) {
    return { columns: declaredColumns(table), rows: new Map(), failed: [], readable: false };
  }
  let hi = rawMax;
  try {
    hi = Math.max(hi, Number(db.prepare(`SELECT max(rowid) AS n FROM ${table}`).get()?.n ?? 0));
  } catch (error) {
    if (!unreadable(error)) throw error;
  }
  const list = columns.map((c) => `"${c.replaceAll('"', '""')}"`).join(", ");
  const select = db.prepare(
    `SELECT rowid AS hermes_rowid, ${list} FROM ${table} WHERE rowid BETWEEN ? AND ? ORDER BY rowid`,
  );
  const rows = new Map<number, SqlValue[]>();
  const failed: Array<[number, number]> = [];
  const pending: Array<[number, number]> = hi >= 1 ? [[1, hi]] : [];
  let queries = 0;
  while (pending.length > 0) {
    const [lo, top] = pending.pop()!;
    if (queries++ >= QUERY_BUDGET) {
      failed.push([lo, top], ...pending.splice(0));
      break;
    }
    try {
      for (const row of select.all(lo, top)) {
        rows.set(Number(row.hermes_rowid), columns.map((c) => row[c] ?? null));
      }
    } catch (error) {
      if (!unreadable(error)) throw error;
      if (lo === top) failed.push([lo, lo]);
      else {
        const mid = Math.floor((lo + top) / 2);
        pending.push([mid + 1, top], [lo, mid]);
      }
    }
  }
  return { columns, rows, failed, readable: true };
}

/** Which table a record of the page scan belongs to, by its shape. */
function tableOf(record: RawRecord, columns: Record<Table, string[]>): Table | undefined {
  const v = record.values;
  const isText = (x: SqlValue) => typeof x === "string";
  const isNumber = (x: SqlValue) => typeof x === "number";
  if (v.length === columns.messages.length && v[0] === null && isText(v[1]) && isText(v[2])) {
    return isNumber(v[columns.messages.indexOf("timestamp")]) ? "messages" : undefined;
  }
  if (v.length === columns.sessions.length && isText(v[0]) && isText(v[1])) {
    return isNumber(v[columns.sessions.indexOf("started_at")]) ? "sessions" : undefined;
  }
  if (v.length === 2 && isText(v[0]) && (isText(v[1]) || v[1] === null)) return "state_meta";
  return undefined;
}

/** The failed spans as ranges, without the rowids the page scan found. */
function lostRanges(table: Table, read: TableRead, found: Set<number>): LostRange[] {
  const spans = read.failed.slice().sort((a, b) => a[0] - b[0]);
  const lost: LostRange[] = [];
  for (const [from, to] of spans) {
    let start: number | undefined;
    const limit = Math.min(to, from + 10_000_000);
    for (let id = from; id <= limit + 1; id++) {
      const gone = id <= limit && !found.has(id);
      if (gone && start === undefined) start = id;
      if (!gone && start !== undefined) {
        const last = lost.at(-1);
        if (last !== undefined && last.to === start - 1) {
          lost[lost.length - 1] = { table, from: last.from, to: id - 1 };
        } else lost.push({ table, from: start, to: id - 1 });
        start = undefined;
      }
    }
  }
  return lost;
}

/** Writes the salvaged rows into a new v11 file at `path`. */
async function writeDest(
  path: string,
  openDriver: SqliteDriver,
  tables: Record<Table, { columns: string[]; rows: SqlValue[][] }>,
  sourceVersion: number | undefined,
): Promise<{ placeholders: number; clearedParents: number }> {
  const newer = sourceVersion !== undefined && sourceVersion > SCHEMA_VERSION;
  (await SessionDB.open({ path, openDriver })).close();
  const db = openDriver(path);
  try {
    for (const table of TABLES) {
      const have = new Set(
        db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all().map((r) =>
          String(r.name)
        ),
      );
      for (const column of tables[table].columns) {
        if (!have.has(column)) {
          db.exec(`ALTER TABLE ${table} ADD COLUMN "${column.replaceAll('"', '""')}"`);
        }
      }
    }
    db.exec("PRAGMA foreign_keys = OFF");
    db.exec("BEGIN IMMEDIATE");
    for (const table of FTS_TABLES) {
      for (const event of ["insert", "delete", "update"]) db.exec(`DROP TRIGGER ${table}_${event}`);
    }
    for (const table of TABLES) {
      const { columns, rows } = tables[table];
      const names = columns.map((c) => `"${c.replaceAll('"', '""')}"`).join(", ");
      const insert = db.prepare(
        `INSERT OR IGNORE INTO ${table} (${names}) VALUES (${columns.map(() => "?").join(", ")})`,
      );
      const title = columns.indexOf("title");
      for (const row of rows) {
        if (insert.run(...row).changes === 0 && table === "sessions" && title >= 0) {
          // A title another recovered session holds (the title index is unique): keep the session.
          insert.run(...row.map((value, i) => (i === title ? null : value)));
        }
      }
    }
    const placeholders = db.prepare(
      `INSERT OR IGNORE INTO sessions (id, source, started_at)
       SELECT session_id, 'unknown', min(timestamp) FROM messages
       WHERE session_id NOT IN (SELECT id FROM sessions) GROUP BY session_id`,
    ).run().changes;
    const clearedParents = db.prepare(
      `UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IS NOT NULL
       AND parent_session_id NOT IN (SELECT id FROM sessions)`,
    ).run().changes;
    if (newer) {
      // A newer Hermes counts by its own rules (and would migrate a file stamped 11 again).
      db.prepare("UPDATE schema_version SET version = ?").run(sourceVersion);
    } else {
      db.exec(`UPDATE sessions SET
        message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id),
        tool_call_count = (SELECT COALESCE(sum(${TOOL_CALLS_ADDED_SQL}), 0)
          FROM messages m WHERE m.session_id = sessions.id)`);
    }
    for (const table of FTS_TABLES) {
      db.exec(`DELETE FROM ${table}`);
      db.exec(ftsBackfillSql(table));
      db.exec(ftsTriggersSql(table));
    }
    db.exec("COMMIT");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return { placeholders, clearedParents };
  } catch (error) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // Nothing was open: the error came before BEGIN or after COMMIT.
    }
    throw error;
  } finally {
    db.close();
  }
}

function count(db: SqliteConnection, table: string): number {
  return Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0);
}

/**
 * Salvages the sessions, messages and meta keys of a damaged file into a
 * new state.db.
 *
 * @param source The damaged file (stop the writers first; it is only read).
 * @param dest The new file.
 * @param options `force`.
 * @returns Counts, rows read from pages, lost rowid ranges.
 * @throws {OpenError} When the source does not exist.
 * @throws {RecoverError} When `dest` is the source or exists (without `force`).
 *
 * @example
 * ```ts
 * import { SessionDB } from "../sqlite/session_db.ts";
 * import { recoverDatabase } from "./recover.ts";
 * const dir = await Deno.makeTempDir();
 * const db = await SessionDB.open({ path: `${dir}/state.db` });
 * db.createSession("s1", "cli");
 * db.appendMessage("s1", { role: "user", content: "hello" });
 * db.close();
 * const result = await recoverDatabase(`${dir}/state.db`, `${dir}/new.db`);
 * console.assert(result.messages === 1 && result.lost.length === 0);
 * ```
 */
export async function recoverDatabase(
  source: string,
  dest: string,
  options: RecoverOptions = {},
): Promise<RecoverResult> {
  if (fileIdentity(source) === undefined) throw new OpenError(source, "no such file");
  const destId = fileIdentity(dest);
  if (isDatabaseFile(dest, source)) {
    throw new RecoverError(`Cannot recover into ${dest}: it is the damaged file itself`);
  }
  if (destId !== undefined && !options.force) {
    throw new RecoverError(`Cannot recover into ${dest}: it exists (give --force to replace it)`);
  }
  const openDriver = options.openDriver ?? await loadDriver();

  // 1. The pages, read directly while no connection of this process holds the file.
  const scan = scanPages(source);

  // 2. Through SQLite, by rowid ranges.
  const reads = {} as Record<Table, TableRead>;
  let schemaReadable = true;
  let sourceVersion: number | undefined;
  // Read as the read commands read: nothing changes, not even a -wal left behind.
  const access = chooseReadAccess(source);
  const db = openDriver(source, driverOptionsFor(access));
  try {
    try {
      db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
    } catch (error) {
      if (!unreadable(error)) throw error;
      schemaReadable = false;
    }
    const columns = {
      sessions: declaredColumns("sessions"),
      messages: declaredColumns("messages"),
      state_meta: declaredColumns("state_meta"),
    };
    if (schemaReadable) {
      try {
        sourceVersion = readSchemaVersion(db) ?? undefined;
      } catch (error) {
        if (!unreadable(error)) throw error;
      }
    }
    for (const table of TABLES) {
      if (!schemaReadable) {
        reads[table] = { columns: columns[table], rows: new Map(), failed: [], readable: false };
        continue;
      }
      const rawMax = Math.max(
        0,
        ...scan.records.filter((r) => tableOf(r, columns) === table).map((r) => r.rowid),
      );
      reads[table] = readTable(db, table, rawMax);
      columns[table] = reads[table].columns;
    }
  } finally {
    db.close();
  }

  // 3. Rows SQLite could not reach, from the pages.
  const columnsOf = {
    sessions: reads.sessions.columns,
    messages: reads.messages.columns,
    state_meta: reads.state_meta.columns,
  };
  const fromPages = { sessions: 0, messages: 0, state_meta: 0 };
  const foundOnPages = {
    sessions: new Set<number>(),
    messages: new Set<number>(),
    state_meta: new Set<number>(),
  };
  const failedIds = new Map<Table, (id: number) => boolean>();
  for (const table of TABLES) {
    const singles = new Set<number>();
    const spans: Array<[number, number]> = [];
    for (const [from, to] of reads[table].failed) {
      if (from === to) singles.add(from);
      else spans.push([from, to]);
    }
    failedIds.set(
      table,
      (id) => singles.has(id) || spans.some(([from, to]) => id >= from && id <= to),
    );
  }
  for (const record of scan.records) {
    const table = tableOf(record, columnsOf);
    if (table === undefined) continue;
    const read = reads[table];
    if (read.rows.has(record.rowid)) continue;
    if (read.readable && !failedIds.get(table)!(record.rowid)) continue;
    const values = record.values.slice();
    if (table === "messages") values[read.columns.indexOf("id")] = record.rowid;
    read.rows.set(record.rowid, values);
    foundOnPages[table].add(record.rowid);
    fromPages[table]++;
  }
  // A table SQLite could not read at all: the ids up to the highest known
  // (found, or `sqlite_sequence`'s for messages) that no page gave are lost.
  const sequence = scan.records.find((r) =>
    r.values.length === 2 && r.values[0] === "messages" && typeof r.values[1] === "number"
  );
  for (const table of TABLES) {
    const read = reads[table];
    if (read.readable) continue;
    const top = Math.max(
      0,
      ...foundOnPages[table],
      table === "messages" ? Number(sequence?.values[1] ?? 0) : 0,
    );
    if (top > 0) read.failed.push([1, top]);
  }
  const lost = TABLES.flatMap((table) => lostRanges(table, reads[table], foundOnPages[table]));

  // 4. The new file, written beside dest and renamed into place.
  const temp = join(dirname(dest), `.${basename(dest)}.${process.pid}.recover`);
  for (const file of [temp, `${temp}-wal`, `${temp}-shm`]) rmSync(file, { force: true });
  try {
    const tables = {} as Record<Table, { columns: string[]; rows: SqlValue[][] }>;
    for (const table of TABLES) {
      const rows = [...reads[table].rows.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
      tables[table] = { columns: reads[table].columns, rows };
    }
    const { placeholders, clearedParents } = await writeDest(
      temp,
      openDriver,
      tables,
      sourceVersion,
    );
    const check = openDriver(temp, { readonly: true });
    let counts: [number, number, number];
    try {
      counts = [count(check, "sessions"), count(check, "messages"), count(check, "state_meta")];
    } finally {
      check.close();
    }
    if (options.force) {
      for (const file of [`${dest}-wal`, `${dest}-shm`]) rmSync(file, { force: true });
    }
    renameSync(temp, dest);
    chmodSync(dest, 0o600);
    return {
      source,
      dest,
      sessions: counts[0],
      messages: counts[1],
      metaKeys: counts[2],
      fromPages,
      placeholderSessions: placeholders,
      clearedParents,
      lost,
      schemaReadable,
    };
  } finally {
    for (const file of [temp, `${temp}-wal`, `${temp}-shm`]) rmSync(file, { force: true });
  }
}
