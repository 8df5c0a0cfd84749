/**
 * A newer Hermes's system prompts in `recover`. Since its schema 25 that
 * Hermes keeps each distinct prompt once, in `system_prompts (hash, prompt)`,
 * and a session names it by `system_prompt_hash` (its `tool_names` may be
 * such a hash too): the session row alone no longer holds its prompt. So the
 * table is read (by rowid ranges, halving every range that fails, as the
 * other tables are) and written into the new file as the source declares it;
 * a session whose prompt could not be read loses the link, which the report
 * counts, as it counts parent links to lost sessions.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { middle } from "./_exact_values.ts";
import { unreadable } from "./_recover_table_read.ts";

const TABLE = "system_prompts";

/** The table as that Hermes creates it: what the new file gets when the source's statement is unreadable. */
const KNOWN_SQL = `CREATE TABLE ${TABLE} (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)`;

/** Range reads one table's rows may take before the rest is given up. */
const QUERY_BUDGET = 100_000;

/** The prompts `recover` read from a source that keeps them apart. */
export interface RecoveredPrompts {
  /** The source's `CREATE TABLE` statement, when it reads. */
  readonly sql: string | undefined;
  /** Each prompt by its hash (the first row of a hash given twice). */
  readonly rows: ReadonlyMap<string, string>;
}

/**
 * Reads `system_prompts` from the damaged file: every row SQLite returns
 * with a text hash and a text prompt.
 *
 * @param db The damaged file.
 * @returns The prompts; `undefined` when the file has no such table (or its
 *   columns cannot be read).
 * @throws {SqliteError} A busy one when another process holds the file: the
 *   read may be made again from the start.
 */
export function readPrompts(db: SqliteConnection): RecoveredPrompts | undefined {
  let columns: Set<string>;
  try {
    columns = new Set(
      db.prepare(`SELECT name FROM pragma_table_info('${TABLE}')`).all().map((r) => String(r.name)),
    );
  } catch (error) {
    if (!unreadable(error)) throw error;
    return undefined;
  }
  if (!columns.has("hash") || !columns.has("prompt")) return undefined;
  const rows = new Map<string, string>();
  const bounds = rowidBounds(db);
  if (bounds !== undefined) readRanges(db, bounds, rows);
  return { sql: tableSql(db), rows };
}

/** The source's statement for the table; `undefined` when it cannot be read. */
function tableSql(db: SqliteConnection): string | undefined {
  try {
    const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(TABLE)?.sql;
    return typeof sql === "string" ? sql : undefined;
  } catch (error) {
    if (!unreadable(error)) throw error;
    return undefined;
  }
}

/** The lowest and highest rowid; `undefined` for an empty table or one whose bounds cannot be read. */
function rowidBounds(db: SqliteConnection): [bigint, bigint] | undefined {
  try {
    const row = db.prepare(
      `SELECT CAST(min(rowid) AS TEXT) AS lo, CAST(max(rowid) AS TEXT) AS hi FROM ${TABLE}`,
    ).get();
    if (typeof row?.lo !== "string" || typeof row?.hi !== "string") return undefined;
    return [BigInt(row.lo), BigInt(row.hi)];
  } catch (error) {
    if (!unreadable(error)) throw error;
    return undefined;
  }
}

/** Reads `lo`–`hi` into `rows`, halving every range that fails down to single rowids. */
function readRanges(
  db: SqliteConnection,
  [lo, hi]: [bigint, bigint],
  rows: Map<string, string>,
): void {
  const range = db.prepare(
    `SELECT hash, prompt FROM ${TABLE} WHERE rowid BETWEEN ? AND ? ORDER BY rowid`,
  );
  // One rowid is sought alone: a range read steps on to the next row, and so onto a damaged
  // page after the last row of a sound one.
  const one = db.prepare(`SELECT hash, prompt FROM ${TABLE} WHERE rowid = ?`);
  const pending: Array<[bigint, bigint]> = [[lo, hi]];
  for (let queries = 0; pending.length > 0 && queries < QUERY_BUDGET; queries++) {
    const [from, top] = pending.pop()!;
    let found: Array<Record<string, unknown>>;
    try {
      found = from === top ? one.all(from) : range.all(from, top);
    } catch (error) {
      if (!unreadable(error)) throw error;
      if (from !== top) {
        const mid = middle(from, top);
        pending.push([mid + BigInt(1), top], [from, mid]);
      }
      continue;
    }
    for (const { hash, prompt } of found) {
      if (typeof hash === "string" && typeof prompt === "string" && !rows.has(hash)) {
        rows.set(hash, prompt);
      }
    }
  }
}

/**
 * Writes the prompts into the new file, inside its write, and clears each
 * session's link to a prompt it does not hold. A new file whose sessions
 * have no `system_prompt_hash` column is left as it is.
 *
 * @param db The new file, in a transaction, foreign keys off.
 * @param prompts What was read (`undefined`: the source's table could not be read).
 * @returns How many sessions lost the link to their prompt.
 */
export function writePrompts(db: SqliteConnection, prompts: RecoveredPrompts | undefined): number {
  const linked = db.prepare("SELECT 1 AS found FROM pragma_table_info('sessions') WHERE name = ?")
    .get("system_prompt_hash") !== undefined;
  if (prompts === undefined && !linked) return 0;
  createTable(db, prompts?.sql);
  const insert = db.prepare(`INSERT OR IGNORE INTO ${TABLE} (hash, prompt) VALUES (?, ?)`);
  for (const [hash, prompt] of prompts?.rows ?? []) insert.run(hash, prompt);
  if (!linked) return 0;
  return db.prepare(
    `UPDATE sessions SET system_prompt_hash = NULL WHERE system_prompt_hash IS NOT NULL
     AND system_prompt_hash NOT IN (SELECT hash FROM ${TABLE})`,
  ).run().changes;
}

/** Creates the table as the source declares it, or as that Hermes does when that statement fails. */
function createTable(db: SqliteConnection, sql: string | undefined): void {
  if (sql !== undefined && /^\s*CREATE\s+TABLE\b/i.test(sql)) {
    db.exec("SAVEPOINT recover_prompts");
    try {
      db.exec(sql);
      if (fillable(db)) {
        db.exec("RELEASE recover_prompts");
        return;
      }
    } catch {
      // A statement damaged in place: the table that Hermes creates instead.
    }
    db.exec("ROLLBACK TO recover_prompts");
    db.exec("RELEASE recover_prompts");
  }
  db.exec(KNOWN_SQL);
}

/** Whether the table made holds `hash` and `prompt` and needs no other value in a row. */
function fillable(db: SqliteConnection): boolean {
  const columns = db.prepare(
    `SELECT name, "notnull" AS required, dflt_value FROM pragma_table_info('${TABLE}')`,
  ).all();
  const names = columns.map((column) => String(column.name));
  return names.includes("hash") && names.includes("prompt") &&
    columns.every((column) =>
      column.name === "hash" || column.name === "prompt" || column.required === 0 ||
      column.dflt_value !== null
    );
}
