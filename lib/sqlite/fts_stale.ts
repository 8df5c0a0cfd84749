/**
 * A damaged full-text index never costs a message. The `messages` table is
 * the truth and both FTS5 tables are derived from it, so when a write fails
 * because one of them is damaged, the write is made anyway: in the same
 * transaction the table's three triggers are dropped and `state_meta`
 * records the table as stale under `fts_stale:<table>`, with the value
 * `{"reason": "…", "at": <Unix seconds>}` (JSON). Search then reads that
 * table's messages by substring instead (see `search/search.ts`), and
 * `doctor --fix` rebuilds the table and recreates its triggers from the
 * schema, byte for byte, and removes the key.
 *
 * A Python Hermes writing the file meanwhile keeps working: without the
 * triggers its inserts are simply not indexed until the rebuild.
 *
 * A table a newer Hermes laid out its own way (`schema/fts_layout.ts`) is
 * that Hermes's to rebuild: there the mark is its own, `fts_stale` = `1`,
 * which its next writable start rebuilds from (and removes); its marks
 * (`fts_stale`, `fts_trigram_stale`) are read as stale tables too.
 *
 * A newer Hermes may keep a third index, `messages_fts_cjk`, whose
 * tokenizer is a loadable extension of its own: in any other process its
 * triggers fail every write to `messages`. That Hermes's own answer, which
 * a write here gives too, is to drop those triggers and set `fts_cjk_stale`
 * (it rebuilds the index where the tokenizer is).
 *
 * @module
 */
import { SQLITE, SqliteError } from "./driver/sqlite_error.ts";
import type { SqliteConnection } from "./driver/types.ts";
import { FTS_TABLES, type FtsTable, UPSERT_META_SQL } from "./schema/schema_sql.ts";
import { dropFtsTriggers, ftsTriggerNames } from "./schema/fts_triggers.ts";
import type { StaleFtsTable } from "../core/database_info.ts";
import { hasNewerLayout, NEWER_STALE_KEY, newerStaleMark } from "./schema/fts_layout.ts";

/** The `state_meta` key prefix of a stale full-text table: `fts_stale:messages_fts`. */
export const FTS_STALE_PREFIX = "fts_stale:";

function isFtsTable(name: string): name is FtsTable {
  return (FTS_TABLES as readonly string[]).includes(name);
}

/**
 * Reads the stale full-text tables recorded in `state_meta`. A file without
 * `state_meta` has none.
 *
 * @param db The connection.
 * @returns The stale tables, in table order.
 */
export function staleFtsTables(db: SqliteConnection): StaleFtsTable[] {
  let rows: Record<string, unknown>[];
  try {
    rows = db.prepare(
      "SELECT key, value FROM state_meta WHERE substr(key, 1, length(?)) = ? ORDER BY key",
    ).all(FTS_STALE_PREFIX, FTS_STALE_PREFIX);
  } catch (error) {
    if (error instanceof SqliteError && /no such table/.test(error.message)) return [];
    throw error;
  }
  const stale: StaleFtsTable[] = [];
  for (const row of rows) {
    const table = String(row.key).slice(FTS_STALE_PREFIX.length);
    if (!isFtsTable(table)) continue;
    stale.push({ table, ...parseValue(row.value) });
  }
  for (const table of FTS_TABLES) {
    const key = newerStaleMark(db, table);
    if (key === undefined || stale.some((entry) => entry.table === table)) continue;
    const reason =
      `${key} is set: the newer Hermes that wrote this file rebuilds it on its next start`;
    stale.push({ table, reason, at: null });
  }
  return stale.sort((a, b) => FTS_TABLES.indexOf(a.table) - FTS_TABLES.indexOf(b.table));
}

function parseValue(value: unknown): { reason: string; at: number | null } {
  try {
    const parsed = JSON.parse(String(value));
    if (typeof parsed?.reason === "string") {
      return { reason: parsed.reason, at: typeof parsed.at === "number" ? parsed.at : null };
    }
  } catch {
    // A value another tool wrote: kept as the reason.
  }
  return { reason: String(value), at: null };
}

/** SQLITE_CORRUPT_VTAB: the corruption was found inside a virtual table (FTS5). */
const SQLITE_CORRUPT_VTAB = 267;

/**
 * True when `error` carries FTS provenance: SQLite's `SQLITE_CORRUPT_VTAB`,
 * or an FTS5 message (`fts5: corrupt structure record for table …`). A bare
 * `SQLITE_CORRUPT` ("database disk image is malformed") does not count: it
 * names no object, and the Python Hermes learned in the field that treating
 * it as index damage kept a structurally corrupt file accepting writes
 * (NousResearch/hermes-agent#97940, #99652). Such a write fails.
 *
 * @param error Anything thrown.
 * @returns Whether the error comes from a damaged full-text table.
 */
export function isFtsDamage(error: unknown): error is SqliteError {
  if (!(error instanceof SqliteError)) return false;
  return error.extendedCode === SQLITE_CORRUPT_VTAB || /\bfts5\b/i.test(error.message);
}

/**
 * True when a read may have failed because a full-text table is damaged:
 * FTS provenance, or any `SQLITE_CORRUPT`. Search then reads `messages`
 * instead, which throws in turn when the damage is there.
 *
 * @param error Anything thrown.
 * @returns Whether reading around the full-text tables is worth a try.
 */
export function mayBeFtsDamage(error: unknown): error is SqliteError {
  return isFtsDamage(error) || (error instanceof SqliteError && error.code === SQLITE.CORRUPT);
}

/** Whether a full-text table fails a read of its structure (a row that cannot exist). */
function failsProbe(db: SqliteConnection, table: FtsTable): boolean {
  try {
    db.prepare(`SELECT 1 AS one FROM ${table} WHERE rowid = -1`).get();
    return false;
  } catch (error) {
    return mayBeFtsDamage(error);
  }
}

/**
 * Whether any of the three triggers that index `table` is there (a table
 * marked stale has none).
 *
 * @param db The connection.
 * @param table The full-text table.
 * @returns True when one of them is.
 */
export function hasTriggers(db: SqliteConnection, table: string): boolean {
  return db.prepare(
    "SELECT 1 AS one FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?, ?)",
  ).get(...ftsTriggerNames(table)) !== undefined;
}

/** Sets a full-text table aside: its three triggers dropped, `key` set to `value`. */
function setAside(db: SqliteConnection, table: string, key: string, value: string): void {
  dropFtsTriggers(db, table);
  db.prepare(UPSERT_META_SQL).run(key, value);
}

/**
 * The full-text table whose damage failed a write, or `undefined` when the
 * error is not FTS damage (or the table is already stale). The table named
 * by the message (`fts5: corrupt structure record for table "messages_fts"`)
 * wins; otherwise each table that still has triggers is probed with a read.
 *
 * @param db The connection.
 * @param error What the write threw.
 * @param except Tables already being marked, left out.
 * @returns The damaged table.
 */
export function damagedFtsTable(
  db: SqliteConnection,
  error: unknown,
  except: readonly FtsTable[] = [],
): FtsTable | undefined {
  if (!isFtsDamage(error)) return undefined;
  const candidates = FTS_TABLES.filter((table) =>
    !except.includes(table) && hasTriggers(db, table)
  );
  const named = /for table "([^"]+)"/.exec(error.message)?.[1];
  if (named !== undefined && candidates.includes(named as FtsTable)) return named as FtsTable;
  return candidates.find((table) => failsProbe(db, table));
}

/** The CJK index of a newer Hermes, kept with a loadable tokenizer no SQLite here has. */
export const NEWER_CJK_TABLE = "messages_fts_cjk";

/** The `state_meta` key that Hermes reads as "rebuild the CJK index from scratch". */
export const NEWER_CJK_STALE_KEY = "fts_cjk_stale";

/**
 * True when a write failed because the triggers of a newer Hermes's CJK
 * index need its tokenizer (`no such tokenizer: cjk_unicode61`), which only
 * a process that loaded that Hermes's extension has.
 *
 * @param db The connection.
 * @param error What the write threw.
 * @returns Whether {@linkcode setNewerCjkIndexAside} lets the write through.
 */
export function needsNewerCjkTokenizer(db: SqliteConnection, error: unknown): boolean {
  if (!(error instanceof SqliteError)) return false;
  const tokenizer = /^no such tokenizer: (\w+)/.exec(error.message)?.[1];
  if (tokenizer === undefined) return false;
  const table = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(NEWER_CJK_TABLE);
  return table !== undefined && new RegExp(`\\b${tokenizer}\\b`).test(String(table.sql)) &&
    hasTriggers(db, NEWER_CJK_TABLE);
}

/**
 * Does what that Hermes itself does in a process without its tokenizer:
 * drops the three triggers of its CJK index and sets `fts_cjk_stale` to
 * `"1"`, so the index is not used until that Hermes rebuilds it (its
 * `optimize-storage`, on a host with the tokenizer). Messages stay whole;
 * only that index, which hermes-state never reads, falls behind. Call
 * inside a write transaction, then redo the write.
 *
 * @param db The connection.
 */
export function setNewerCjkIndexAside(db: SqliteConnection): void {
  setAside(db, NEWER_CJK_TABLE, NEWER_CJK_STALE_KEY, "1");
}

/**
 * Marks a full-text table stale: drops its three triggers and records
 * `fts_stale:<table>` (or, for a table of a newer Hermes's layout, that
 * Hermes's `fts_stale` = `1`). Call inside a write transaction, then redo the write.
 *
 * @param db The connection.
 * @param table The damaged table.
 * @param options The error that failed the write, and the time.
 */
export function markFtsStale(
  db: SqliteConnection,
  table: FtsTable,
  options: { readonly reason: string; readonly at: number },
): void {
  if (hasNewerLayout(db, table)) setAside(db, table, NEWER_STALE_KEY, "1");
  else setAside(db, table, `${FTS_STALE_PREFIX}${table}`, JSON.stringify(options));
}
