/**
 * Bulk inserts at the speed of the index: a large batch of messages is
 * inserted with the two full-text insert triggers set aside, and both
 * full-text tables are then filled for exactly the new rows with one
 * `INSERT … SELECT` each, which writes what the triggers would have written
 * (the same rowid, the same text) at about twice the rate.
 *
 * All of it runs inside the caller's write transaction (`BEGIN IMMEDIATE`),
 * so another connection sees either the file before the batch or the whole
 * batch with its triggers back, never the triggers missing; on any failure
 * the transaction is rolled back, triggers included. The triggers are
 * recreated from the file's own SQL as `sqlite_master` holds it, so their
 * text comes back byte for byte.
 *
 * The fast path is taken only when it is provably the same: the file's
 * insert triggers on `messages` are exactly the two v11 ones (SPEC §2),
 * whose effect the fill reproduces. Any other insert trigger (an older
 * external-content file, a newer Hermes's own) and the batch is inserted
 * with the triggers firing, as before.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { FTS_TABLES, type FtsTable, ftsTriggersSql, indexedTextSql } from "./schema/schema_sql.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";

/** Batches of at least this many messages set the triggers aside. */
export const BULK_INDEX_THRESHOLD = 64;

const INSERT_TRIGGERS_SQL = `SELECT name, sql FROM sqlite_master
WHERE type = 'trigger' AND tbl_name = 'messages' ORDER BY name`;

/** SQLite keeps CREATE text as written, minus `IF NOT EXISTS`; compare without layout. */
function normalize(sql: string): string {
  return sql.replace(/^CREATE TRIGGER IF NOT EXISTS/, "CREATE TRIGGER")
    .replace(/;\s*$/, "").replace(/\s+/g, " ").trim();
}

let v11Insert: Map<string, string> | undefined;

/** The v11 insert triggers, by name, normalized. */
function v11InsertTriggers(): Map<string, string> {
  if (v11Insert) return v11Insert;
  v11Insert = new Map();
  for (const table of FTS_TABLES) {
    for (const statement of ftsTriggersSql(table).split(/(?<=END;)/)) {
      const name = /CREATE TRIGGER IF NOT EXISTS (\w+_insert) /.exec(statement)?.[1];
      if (name) v11Insert.set(name, normalize(statement.trim()));
    }
  }
  return v11Insert;
}

/** True when a trigger's header (before BEGIN) makes it fire on INSERT. */
function firesOnInsert(sql: string): boolean {
  const header = sql.split(/\bBEGIN\b/i, 1)[0];
  return /\bINSERT\b/i.test(header);
}

/** One saved trigger. */
interface SavedTrigger {
  readonly name: string;
  readonly sql: string;
}

/**
 * The file's insert triggers on `messages` when they are exactly the two
 * v11 ones, else `undefined`.
 */
function replaceableTriggers(store: Store): SavedTrigger[] | undefined {
  const wanted = v11InsertTriggers();
  const found: SavedTrigger[] = [];
  for (const row of store.statement(INSERT_TRIGGERS_SQL).all()) {
    const sql = String(row.sql ?? "");
    if (!firesOnInsert(sql)) continue;
    const name = String(row.name);
    if (wanted.get(name) !== normalize(sql)) return undefined;
    found.push({ name, sql });
  }
  return found.length === wanted.size ? found : undefined;
}

function fillSql(table: FtsTable): string {
  return `INSERT INTO ${table}(rowid, content)
SELECT m.id, ${indexedTextSql("m")}
FROM json_each(?) n JOIN messages m ON m.id = n.value
ORDER BY m.id`;
}

/**
 * Runs `insert` (which inserts `count` messages into `messages` and returns
 * their ids) inside the current write transaction, with the full-text
 * insert triggers set aside when the batch is large enough and the
 * triggers are the v11 ones; both full-text tables then hold exactly what
 * the triggers would have written.
 *
 * @param store The open store, inside `store.write`.
 * @param count How many messages `insert` will insert.
 * @param insert Inserts them and returns their ids (nothing else may be
 *   inserted into `messages` meanwhile).
 * @returns What `insert` returned.
 * @throws {SqliteError} On a storage failure (the caller's transaction rolls everything back).
 */
export function insertIndexedAfter<T extends readonly number[]>(
  store: Store,
  count: number,
  insert: () => T,
): T {
  if (count < BULK_INDEX_THRESHOLD) return insert();
  const triggers = replaceableTriggers(store);
  if (triggers === undefined) return insert();
  for (const trigger of triggers) store.db.exec(`DROP TRIGGER ${quoteIdentifier(trigger.name)}`);
  const ids = insert();
  const list = JSON.stringify(ids);
  for (const table of FTS_TABLES) store.statement(fillSql(table)).run(list);
  for (const trigger of triggers) store.db.exec(trigger.sql);
  return ids;
}
