/**
 * Full-text tables laid out by a newer Hermes. Since its schema 23 Hermes
 * may keep `messages_fts` and `messages_fts_trigram` in a layout of its own:
 * external-content tables reading views (`messages_fts_src`,
 * `messages_fts_trigram_src`), several columns, triggers of its own text.
 * The views decide what is indexed: the newer trigram view leaves out tool
 * rows and the messages of `cron` and `subagent` sessions, and the newer
 * words view keeps only the first 8,192 characters of a tool row.
 *
 * Such a table belongs to that Hermes. hermes-state reads it as it is (the
 * file's triggers keep it in step with every write), never rebuilds it or
 * its triggers in the v11 layout, and answers from it only what it holds:
 * a search that needs rows its view leaves out reads messages by substring
 * instead (see `search/missing_index.ts`); the words fallback, which may
 * keep to the rows its trigram view selects, asks that table for them
 * ({@linkcode holdsItsViewsRows}). While that Hermes refills its
 * tables (`state_meta` key `fts_rebuild_high_water`), or has marked one
 * stale to rebuild it on its next start (`fts_stale` the words table,
 * `fts_trigram_stale` the trigram one), they miss rows.
 *
 * @module
 */
import type { SqliteConnection } from "../driver/types.ts";
import { type FtsTable, ftsTableSql, SCHEMA_VERSION } from "./schema_sql.ts";
import { readSchemaVersion } from "./schema_version.ts";

/** The `state_meta` key a newer Hermes keeps while it refills its full-text tables. */
export const NEWER_REFILL_KEY = "fts_rebuild_high_water";

/**
 * The `state_meta` key by which a newer Hermes marks its full-text tables
 * stale (their triggers set aside): its next writable start rebuilds them
 * and removes the key. hermes-state sets it too, in place of its own
 * `fts_stale:<table>`, when a write meets damage in a table of that layout.
 */
export const NEWER_STALE_KEY = "fts_stale";

/** The key by which a newer Hermes sets its trigram table aside alone. */
const NEWER_TRIGRAM_STALE_KEY = "fts_trigram_stale";

/** Every key by which a newer Hermes marks a table of its layout stale. */
export const NEWER_STALE_KEYS: readonly string[] = [NEWER_STALE_KEY, NEWER_TRIGRAM_STALE_KEY];

/**
 * The key that marks a table of the newer layout stale (`"0"`: not stale).
 * `fts_stale` is read for the words table: the trigram table keeps its own
 * mark, and its triggers, when they are set aside, are named by `doctor`.
 */
function staleKey(table: FtsTable): string {
  return table === "messages_fts_trigram" ? NEWER_TRIGRAM_STALE_KEY : NEWER_STALE_KEY;
}

/** A CREATE text without `IF NOT EXISTS`, quotes and runs of white space. */
function normalized(sql: string): string {
  return sql.replace(/\bIF NOT EXISTS\s+/i, "").replace(/["'`]/g, "").replace(/;\s*$/, "")
    .replace(/\s+/g, " ").trim();
}

const V11_TEXT = new Map<string, string>();

function v11Text(table: FtsTable): string {
  let text = V11_TEXT.get(table);
  if (text === undefined) V11_TEXT.set(table, text = normalized(ftsTableSql(table)));
  return text;
}

function objectSql(db: SqliteConnection, name: string): string | undefined {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(name);
  return row?.sql == null ? undefined : String(row.sql);
}

/**
 * The file's schema version when a newer Hermes wrote it (above 11).
 *
 * @param db The connection.
 * @returns The version, or `undefined` for a v11 or older file.
 */
export function newerSchemaVersion(db: SqliteConnection): number | undefined {
  const version = readSchemaVersion(db);
  return version != null && version > SCHEMA_VERSION ? version : undefined;
}

/**
 * Whether `table` is laid out by a newer Hermes: the file's schema version
 * is above 11 and the table's CREATE text is not the v11 one.
 *
 * @param db The connection.
 * @param table The full-text table.
 * @returns False for a missing table, or one in the v11 layout.
 */
export function hasNewerLayout(db: SqliteConnection, table: FtsTable): boolean {
  return isNewerText(db, table, objectSql(db, table));
}

/** Whether `sql`, the CREATE text of `table` as stored, is a newer Hermes's. */
function isNewerText(db: SqliteConnection, table: FtsTable, sql: string | undefined): boolean {
  if (sql === undefined || normalized(sql) === v11Text(table)) return false;
  return newerSchemaVersion(db) !== undefined;
}

/**
 * The columns after `content` of a full-text table whose long texts'
 * snippets may be cut in TypeScript (`search/long_snippet.ts`): none in the
 * v11 layout; a newer Hermes's others (`tool_name`, `tool_calls`) when
 * `content` is its first column, every column is indexed, and it tokenizes
 * as the v11 table does, with no option but its content source. Any other
 * layout keeps FTS5's `snippet()`.
 *
 * @param db The connection.
 * @param table The full-text table.
 * @returns The other columns' names, or `undefined` when its snippets are FTS5's.
 */
export function longTextColumns(db: SqliteConnection, table: FtsTable): string[] | undefined {
  const sql = objectSql(db, table);
  if (sql === undefined) return undefined;
  if (normalized(sql) === v11Text(table)) return [];
  const args = /\bUSING\s+fts5\s*\(([^)]*)\)\s*;?\s*$/i.exec(sql)?.[1];
  if (args === undefined) return undefined;
  const columns: Array<string | undefined> = [];
  const options: string[] = [];
  for (const arg of args.split(",").map((text) => text.trim())) {
    if (arg.includes("=")) options.push(arg.replace(/["'`\s]/g, "").toLowerCase());
    // A plain name, or one in one pair of quotes: anything else (`tool_calls UNINDEXED`) is not.
    else columns.push(/^(?:(\w+)|"(\w+)"|`(\w+)`|\[(\w+)\])$/.exec(arg)?.slice(1).find(Boolean));
  }
  const tokenizer = table === "messages_fts_trigram" ? ["tokenize=trigram"] : [];
  const plain = options.filter((option) => !/^content(_rowid)?=\w*$/.test(option));
  if (columns[0] !== "content" || columns.some((column) => column === undefined)) return undefined;
  return plain.join() === tokenizer.join() ? (columns as string[]).slice(1) : undefined;
}

/** The content table or view an FTS5 CREATE text names (`undefined`: the table keeps its own text). */
export function contentSourceOf(sql: string): string | undefined {
  const match = /\bcontent\s*=\s*(['"]?)(\w*)\1/i.exec(sql);
  return match === null || match[2] === "" ? undefined : match[2];
}

/**
 * Whether `table` leaves messages out by design: it reads its text from a
 * view that selects only some rows (a `WHERE` in the view), or a newer
 * Hermes is refilling it or has marked it stale. An index that keeps its
 * own text, or reads `messages` itself, holds every message its triggers
 * gave it.
 *
 * @param db The connection.
 * @param table The full-text table (present).
 * @returns True when some messages are not in it.
 */
export function leavesMessagesOut(db: SqliteConnection, table: FtsTable): boolean {
  const sql = objectSql(db, table);
  if (sql === undefined) return true;
  const source = contentSourceOf(sql);
  if (source !== undefined && source !== "messages") {
    const view = objectSql(db, source);
    if (view === undefined || /\bWHERE\b/i.test(view)) return true;
  }
  if (!isNewerText(db, table, sql)) return false;
  return metaValue(db, NEWER_REFILL_KEY) !== undefined || isMarked(db, staleKey(table));
}

/**
 * Whether `table` is a newer Hermes's index that leaves messages out by
 * design only: its text comes by message id from a view (which selects the
 * rows it holds), tokenized as the v11 table is, and it is neither being
 * refilled nor marked stale. It then holds every message its view selects,
 * so a search that may keep to those messages can ask it for candidates.
 *
 * @param db The connection.
 * @param table The full-text table.
 * @returns False for the v11 layout, a missing table, and any other.
 */
export function holdsItsViewsRows(db: SqliteConnection, table: FtsTable): boolean {
  const sql = objectSql(db, table);
  if (sql === undefined || !isNewerText(db, table, sql)) return false;
  if (longTextColumns(db, table) === undefined) return false;
  if (!/\bcontent_rowid\s*=\s*(['"]?)id\1(?!\w)/i.test(sql)) return false;
  const source = contentSourceOf(sql);
  if (source === undefined || source === "messages" || objectSql(db, source) === undefined) {
    return false;
  }
  return metaValue(db, NEWER_REFILL_KEY) === undefined && !isMarked(db, staleKey(table));
}

/**
 * The key by which a newer Hermes marked `table`, of its layout, stale, or
 * `undefined` (also for a table in the v11 layout, whose marks are
 * hermes-state's own `fts_stale:<table>`).
 *
 * @param db The connection.
 * @param table The full-text table.
 * @returns `fts_stale` or `fts_trigram_stale`, or `undefined`.
 */
export function newerStaleMark(db: SqliteConnection, table: FtsTable): string | undefined {
  const key = staleKey(table);
  return hasNewerLayout(db, table) && isMarked(db, key) ? key : undefined;
}

/** Whether `key` is in `state_meta` with a value other than `"0"`. */
function isMarked(db: SqliteConnection, key: string): boolean {
  const value = metaValue(db, key);
  return value !== undefined && value !== "0";
}

/** The `state_meta` value of `key`, or `undefined` (also when the file has no `state_meta`). */
function metaValue(db: SqliteConnection, key: string): string | undefined {
  try {
    const row = db.prepare("SELECT value FROM state_meta WHERE key = ?").get(key);
    return row === undefined ? undefined : String(row.value);
  } catch {
    return undefined; // no state_meta: nothing marked
  }
}
