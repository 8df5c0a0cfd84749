/**
 * A message's text damaged in place (a bad sector, bit rot: bytes
 * overwritten inside the row, every page still sound), found by the
 * coverage check as a search row holding other text than its message.
 * Each full-text table keeps its own copy of what it indexed
 * (`content ‖ ' ' ‖ tool_name ‖ ' ' ‖ tool_calls`): where the message's
 * text is no longer valid UTF-8 and that copy, the same length, is, the copy
 * is the text as Hermes wrote it. `doctor --fix` takes it back from there
 * before rebuilding the index, which would otherwise index the damage and
 * drop the only sound copy.
 *
 * A text Hermes changed (an edit, a redaction) is always valid UTF-8: it is
 * never taken for damage, whatever an index that fell behind holds.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { type FtsTable, indexedTextSql } from "../sqlite/schema/schema_sql.ts";
import { hasTable } from "../sqlite/schema/has_table.ts";
import { hasNewerLayout } from "../sqlite/schema/fts_layout.ts";
import type { TimedWriter } from "./transaction.ts";
import { isInvalidUtf8, strictUtf8Text } from "../sqlite/exact_values.ts";

/** A message whose text the index holds whole. */
export interface DamagedText {
  /** The message. */
  readonly id: number;
  /** Its text as the index holds it. */
  readonly text: string;
  /** Its damaged bytes, as the file holds them. */
  readonly damaged: Uint8Array;
}

/** The start of a coverage detail naming such a message: `message 27: text damaged in place`. */
export const DAMAGED_TEXT_DETAIL = "text damaged in place";

/** A column read as a BLOB, as UTF-8 text; `undefined` when it is not valid UTF-8 (or no bytes). */
function utf8(bytes: unknown): string | undefined {
  if (!(bytes instanceof Uint8Array)) return typeof bytes === "string" ? bytes : undefined;
  return strictUtf8Text(bytes);
}

/**
 * The messages among `ids` whose text is damaged in place while `table`
 * holds it whole (see the module's note).
 *
 * @param db The connection.
 * @param table The full-text table whose copy is read.
 * @param ids Messages whose row in `table` holds other text than theirs.
 * @returns Those the copy gives back, each with the text and the damaged bytes.
 */
export function textDamagedInPlace(
  db: SqliteConnection,
  table: FtsTable,
  ids: readonly number[],
): DamagedText[] {
  if (ids.length === 0) return [];
  const read = db.prepare(
    `SELECT CAST(m.content AS BLOB) AS content, CAST(m.tool_name AS BLOB) AS tool_name,
            CAST(m.tool_calls AS BLOB) AS tool_calls, CAST(f.content AS BLOB) AS indexed
     FROM messages m JOIN ${table} f ON f.rowid = m.id WHERE m.id = ?`,
  );
  const found: DamagedText[] = [];
  for (const id of ids) {
    const row = read.get(id);
    if (!(row?.content instanceof Uint8Array) || !isInvalidUtf8(row.content)) continue;
    const indexed = utf8(row.indexed);
    const toolName = row.tool_name === null ? "" : utf8(row.tool_name);
    const toolCalls = row.tool_calls === null ? "" : utf8(row.tool_calls);
    if (indexed === undefined || toolName === undefined || toolCalls === undefined) continue;
    const rest = ` ${toolName} ${toolCalls}`;
    if (!indexed.endsWith(rest)) continue;
    const text = indexed.slice(0, indexed.length - rest.length);
    // Overwritten in place: as many bytes as before.
    if (new TextEncoder().encode(text).length !== row.content.length) continue;
    found.push({ id, text, damaged: row.content });
  }
  return found;
}

/**
 * Every message whose text is damaged in place while one of `tables`
 * holds it whole, over all messages (a check may have sampled them, and
 * names 20 at most): asked before a rebuild, which would drop each copy.
 * A table laid out by a newer Hermes, or missing, is not read.
 *
 * @param db The connection.
 * @param tables The full-text tables to read, in order: the first that gives a message's text back wins.
 * @returns The messages found, each with its text.
 */
export function allTextDamagedInPlace(
  db: SqliteConnection,
  tables: readonly FtsTable[],
): DamagedText[] {
  const found = new Map<number, DamagedText>();
  for (const table of tables) {
    if (!hasTable(db, table) || hasNewerLayout(db, table)) continue;
    const ids = db.prepare(
      `SELECT m.id AS id FROM messages m JOIN ${table} f ON f.rowid = m.id
       WHERE f.content IS NOT (${indexedTextSql("m")}) ORDER BY m.id`,
    ).all().map((row) => Number(row.id)).filter((id) => !found.has(id));
    for (const text of textDamagedInPlace(db, table, ids)) found.set(text.id, text);
  }
  return [...found.values()];
}

/**
 * Writes back the text of each message `damaged` names, in one transaction,
 * where its bytes are still the damaged ones (a writer may have changed the
 * message since). The message's triggers index it anew.
 *
 * @param db The connection.
 * @param writer The timed write path.
 * @param damaged What {@linkcode textDamagedInPlace} found.
 * @returns The messages written back.
 */
export async function restoreDamagedText(
  db: SqliteConnection,
  writer: TimedWriter,
  damaged: readonly DamagedText[],
): Promise<number> {
  const update = db.prepare(
    "UPDATE messages SET content = ? WHERE id = ? AND CAST(content AS BLOB) = ?",
  );
  let restored = 0;
  await writer.runAsync(() => {
    for (const { id, text, damaged: bytes } of damaged) {
      restored += Number(update.run(text, id, bytes).changes);
    }
  });
  return restored;
}
