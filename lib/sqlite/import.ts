/**
 * Importing what `exportSession`/`exportAll` wrote (one line of a JSONL
 * export): the session row with its original columns, its messages with
 * their original timestamps (and ids, when they are free), all or nothing.
 *
 * @module
 */
import { importedModelUsage } from "../core/session_model_usage.ts";
import { writeSessionModelUsage } from "./session_model_usage.ts";
import { MODEL_USAGE_TABLE } from "../core/usage_by_model.ts";
import type { SqlValue } from "./driver/types.ts";
import { ReadonlyError } from "../core/errors.ts";
import { nextLineageTitle, stemToFit, titleStem } from "../core/titles.ts";
import { escapeLike } from "../core/like_pattern.ts";
import type { Store } from "./store.ts";
import { insertIndexedAfter } from "./fts_bulk.ts";
import { noteIdsBelowLast } from "./message_ids.ts";
import type { ImportOptions, ImportResult, ParentLink } from "../core/transfer_options.ts";
import {
  carriedTextReadsAs,
  checkImportRecord,
  checkParentLinks,
  type ImportRecord,
  messageImportValue,
  messageWriteOrder,
  namedParent,
  originalMessageIds,
  sessionImportValues,
  skippedImport,
  storedTitle,
  unknownColumns,
  withTitle,
} from "../core/import_record.ts";
import { STORED_BYTES_KEY, type StoredBytes, storedBytesOf } from "../core/stored_bytes.ts";
import { withStoredTextOf } from "../core/stored_text.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";

/** Each column's exact bytes (`hermes_state_bytes`) of the session row and of each message. */
interface RecordBytes {
  readonly session?: ReadonlyMap<string, StoredBytes>;
  readonly messages: readonly (ReadonlyMap<string, StoredBytes> | undefined)[];
}

/** The record without its `hermes_state_bytes`, and those bytes, checked. */
function takeStoredBytes(checked: ImportRecord): { record: ImportRecord; bytes: RecordBytes } {
  const strip = (row: Record<string, unknown>) => {
    if (!(STORED_BYTES_KEY in row)) return row;
    const { [STORED_BYTES_KEY]: _bytes, ...rest } = row;
    // The text a copy's source stored for the other columns goes along.
    return withStoredTextOf(row, rest);
  };
  const session = keyColumnsRefused(storedBytesOf(checked.row), "");
  const messages = checked.messages.map((message, index) =>
    keyColumnsRefused(storedBytesOf(message, `messages[${index}]`), `messages[${index}].`)
  );
  return {
    record: { id: checked.id, row: strip(checked.row), messages: checked.messages.map(strip) },
    bytes: { session, messages },
  };
}

/** Refuses bytes for the key columns: a session id must be text that is valid UTF-8. */
function keyColumnsRefused(
  bytes: Map<string, StoredBytes> | undefined,
  field: string,
): Map<string, StoredBytes> | undefined {
  for (const column of ["id", "session_id"]) {
    if (bytes?.has(column)) {
      throw new TypeError(
        `Cannot import session: ${field}${STORED_BYTES_KEY}.${column}: ` +
          "an id that is not valid UTF-8 text cannot be imported",
      );
    }
  }
  return bytes;
}

/**
 * The bytes carried for a message column, unless they are the text of
 * `content` or `tool_calls` that no longer reads as the record's value
 * (edited since the export): that value is written then.
 */
function carried(
  bytes: StoredBytes | undefined,
  column: string,
  value: unknown,
): StoredBytes | undefined {
  if (bytes?.kind !== "text" || (column !== "content" && column !== "tool_calls")) return bytes;
  const text = new TextDecoder().decode(bytes.bytes);
  return carriedTextReadsAs(column, text, value) ? bytes : undefined;
}

/** The placeholder of a value: text bytes are bound as a BLOB and stored as TEXT. */
function markOf(bytes: StoredBytes | undefined): string {
  return bytes?.kind === "text" ? "CAST(? AS TEXT)" : "?";
}

/** The record's columns that `store` has no place for. */
function droppedColumns(store: Store, checked: ImportRecord): string[] {
  return unknownColumns(checked.row, checked.messages, {
    sessions: new Set(liveColumns(store, "sessions")),
    messages: new Set(liveColumns(store, "messages")),
  });
}

/** The columns of `table` in file order (the store reads them once per connection). */
function liveColumns(store: Store, table: "sessions" | "messages"): string[] {
  return [...store.columns(table)];
}

function sessionExists(store: Store, id: string): boolean {
  return store.statement("SELECT 1 AS one FROM sessions WHERE id = ?").get(id) !== undefined;
}

/**
 * The highest message id an import keeps; a record with a higher one gets
 * new ids, as one whose ids are taken does. SQLite gives a new message the
 * id after the highest a file ever held (AUTOINCREMENT) and fails every
 * append once that was 2^63 - 1: one line with that id left a file where
 * no message could be written again, Hermes's included ("database or disk
 * is full"). Half the range leaves room for more messages than any file holds.
 */
const HIGHEST_KEPT_ID = 2n ** 62n;

/** The messages' own ids when each is a distinct integer id that no row uses yet. */
function freeOriginalIds(
  store: Store,
  messages: readonly Record<string, unknown>[],
): (number | bigint)[] | undefined {
  const ids = originalMessageIds(messages, true);
  if (ids === undefined || ids.some((id) => BigInt(id) > HIGHEST_KEPT_ID)) return undefined;
  const taken = store.statement("SELECT 1 AS one FROM messages WHERE id = ?");
  return ids.every((id) => taken.get(id) === undefined) ? ids : undefined;
}

/**
 * The title the record's session gets: its own, unless another session has
 * it; then the lineage's next numbered title (as `getNextTitleInLineage`
 * numbers it, the session's own titles left out), so that the session is
 * imported whole rather than refused.
 *
 * @returns The new title, or `null` when the record's is kept.
 */
function freeTitle(store: Store, checked: ImportRecord): string | null {
  const title = storedTitle(checked);
  if (title === null) return null;
  const holder = store.statement("SELECT 1 AS one FROM sessions WHERE title = ? AND id <> ?")
    .get(title, checked.id);
  if (holder === undefined) return null;
  const next = (stem: string) => {
    const taken = store.statement(
      "SELECT title FROM sessions WHERE (title = ? OR title LIKE ? ESCAPE '\\') AND id <> ?",
    ).all(stem, `${escapeLike(stem)} #%`, checked.id);
    return nextLineageTitle(stem, taken.map((row) => row.title));
  };
  const stem = titleStem(title);
  const numbered = next(stem);
  const shorter = stemToFit(stem, numbered);
  if (shorter === undefined) return numbered;
  // Numbered even when the cut stem is free: the title says it is not the one given.
  const again = next(shorter);
  return again === shorter ? `${shorter} #2` : again;
}

function writeSessionRow(
  store: Store,
  checked: ImportRecord,
  parent: string | null,
  exists: boolean,
  exact?: ReadonlyMap<string, StoredBytes>,
): void {
  const { columns, values: read } = sessionImportValues(
    checked,
    liveColumns(store, "sessions"),
    parent,
  );
  const values: SqlValue[] = read.map((value, i) => exact?.get(columns[i])?.bytes ?? value);
  const mark = (column: string) => markOf(exact?.get(column));
  keepPromptRow(store, columns, values);
  if (exists) {
    const assignments = columns.map((column) => `${quoteIdentifier(column)} = ${mark(column)}`)
      .join(", ");
    store.statement(`UPDATE sessions SET ${assignments} WHERE id = ?`).run(...values, checked.id);
  } else {
    const names = ["id", ...columns].map(quoteIdentifier).join(", ");
    const marks = ["?", ...columns.map(mark)].join(", ");
    store.statement(`INSERT INTO sessions (${names}) VALUES (${marks})`).run(
      checked.id,
      ...values,
    );
  }
}

/**
 * A newer Hermes keeps each system prompt once, in `system_prompts (hash,
 * prompt)`, and a session's `system_prompt_hash` must name a row there (a
 * foreign key in its files): the record has the prompt itself (read through
 * that table, `schema/read_views.ts`), so a file that lacks the row gets it
 * before the session's row names it. A row already there is kept.
 */
function keepPromptRow(
  store: Store,
  columns: readonly string[],
  values: readonly SqlValue[],
): void {
  const at = (name: string) => {
    const i = columns.indexOf(name);
    return i === -1 ? null : values[i];
  };
  const hash = at("system_prompt_hash");
  const prompt = at("system_prompt");
  if (hash === null || prompt === null || !store.hasTable("system_prompts")) return;
  store.statement("INSERT OR IGNORE INTO system_prompts (hash, prompt) VALUES (?, ?)")
    .run(hash, prompt);
}

function writeMessages(store: Store, checked: ImportRecord, bytes: RecordBytes): void {
  const ids = freeOriginalIds(store, checked.messages);
  if (ids !== undefined) noteIdsBelowLast(store, ids);
  const columns = liveColumns(store, "messages").filter((c) => c !== "id" && c !== "session_id");
  // The bulk indexing names the new rows by number: an id beyond 2^53 is left to the triggers.
  const bulk = ids?.some((id) => typeof id === "bigint") ? 0 : checked.messages.length;
  insertIndexedAfter(
    store,
    bulk,
    () =>
      messageWriteOrder(checked.messages).map((index) => {
        const message = checked.messages[index];
        const exact = bytes.messages[index];
        const names = ["session_id"];
        const values: SqlValue[] = [checked.id];
        const marks = ["?"];
        if (ids !== undefined) {
          names.push("id");
          values.push(message.id as number | bigint);
          marks.push("?");
        }
        for (const column of columns) {
          const stored = carried(exact?.get(column), column, message[column]);
          if (!(column in message) && stored === undefined) continue;
          names.push(column);
          marks.push(markOf(stored));
          values.push(
            stored?.bytes ??
              messageImportValue(column, message[column], `messages[${index}].${column}`, message),
          );
        }
        return Number(
          store.statement(
            `INSERT INTO messages (${names.map(quoteIdentifier).join(", ")}) VALUES (${
              marks.join(", ")
            })`,
          ).run(...values).lastInsertRowid,
        );
      }),
  );
}

/** Implements `SessionDB.importSession`: checks the record, then writes it in one transaction. */
export function importSession(
  store: Store,
  record: unknown,
  options: ImportOptions = {},
): ImportResult {
  const { record: checked, bytes } = takeStoredBytes(checkImportRecord(record));
  const usage = importedModelUsage(record, options.modelUsage);
  return store.write(() => {
    const exists = sessionExists(store, checked.id);
    const named = namedParent(checked);
    if (exists && !options.replace) return skip(store, checked.id, named);
    const parentPresent = named === null || named === checked.id || sessionExists(store, named);
    const parent = parentPresent ? named : null;
    const renamedTo = freeTitle(store, checked);
    const written = renamedTo === null ? checked : withTitle(checked, renamedTo);
    if (exists) store.statement("DELETE FROM messages WHERE session_id = ?").run(checked.id);
    writeSessionRow(store, written, parent, exists, bytes.session);
    writeMessages(store, written, bytes);
    const dropped = droppedColumns(store, checked);
    if (
      usage !== undefined && !writeSessionModelUsage(store, checked.id, usage) && usage.length > 0
    ) {
      dropped.push(MODEL_USAGE_TABLE);
    }
    return {
      outcome: exists ? "replaced" : "imported",
      id: checked.id,
      messages: checked.messages.length,
      deferredParent: parentPresent ? null : named,
      droppedColumns: dropped,
      relinked: false,
      renamedTo,
    };
  });
}

/** Links a session that has no parent to an existing parent. */
const LINK_SQL = "UPDATE sessions SET parent_session_id = ? WHERE id = ? " +
  "AND parent_session_id IS NULL AND EXISTS (SELECT 1 FROM sessions WHERE id = ?)";

/**
 * A session already present is left as it is, except for a parent link an
 * earlier, interrupted or partial import could not make: it is made when
 * the parent is in the file now, and deferred otherwise.
 */
function skip(store: Store, id: string, named: string | null): ImportResult {
  const result = skippedImport(id);
  if (named === null || named === id) return result;
  const current = store.statement("SELECT parent_session_id AS parent FROM sessions WHERE id = ?")
    .get(id)?.parent;
  if (current !== null && current !== undefined) return result;
  if (!sessionExists(store, named)) return { ...result, deferredParent: named };
  store.statement(LINK_SQL).run(named, id, named);
  return { ...result, relinked: true };
}

/** Implements `SessionDB.restoreParentLinks`: links still-orphaned children to present parents. */
export function restoreParentLinks(store: Store, links: readonly ParentLink[]): number {
  checkParentLinks(links);
  // A read-only store refuses every write, an empty one too (as `appendMessages` does).
  if (store.readonly) throw new ReadonlyError(store.path);
  if (links.length === 0) return 0;
  return store.write(() => {
    const link = store.statement(LINK_SQL);
    let linked = 0;
    for (const { id, parentId } of links) linked += link.run(parentId, id, parentId).changes;
    return linked;
  });
}
