/**
 * `importSession` and `restoreParentLinks` on PostgreSQL: the checks, the
 * outcomes and the stored values of `lib/sqlite/import.ts` (original message ids
 * kept when they are free, the id sequence moved past them). The columns a
 * newer Hermes added go to `extra_columns` (`_extra.ts`): none is dropped.
 *
 * @module
 */
import { replaceModelUsage } from "./_sync_model_usage.ts";
import { hasModelUsageTable } from "./_usage.ts";
import { recordWithBlobText } from "../core/blob_text.ts";
import {
  carriedTextReadsAs,
  checkImportRecord,
  type ImportRecord,
  messageImportValue,
  messageWriteOrder,
  namedParent,
  originalMessageIds,
  sessionImportValues,
  skippedImport,
  storedTitle,
  withTitle,
} from "../core/import_record.ts";
import { nextLineageTitle, stemToFit, titleStem } from "../core/titles.ts";
import { escapeLike } from "../core/like_pattern.ts";
import type { ImportOptions, ImportResult, ParentLink } from "../core/transfer_options.ts";
import { isUniqueViolation } from "./_pg_errors.ts";
import type { PgQuery, PgValue } from "./_client_types.ts";
import { TitleError } from "../core/errors.ts";
import {
  COUNTER_COLUMNS,
  insertMessagesSql,
  MESSAGE_COLUMN_NAMES,
  MESSAGE_COLUMN_SET,
  SESSION_COLUMN_NAMES,
  SESSION_COLUMN_SET,
} from "./_rows.ts";
import { EXTRA_COLUMN, extraColumnsJson } from "./_extra.ts";
import { deleteMessagesSql } from "./_delete.ts";
import { gramsVector, searchDocument, wordsVector } from "./text_search.ts";
import { jsonParam } from "./_text_codec.ts";
import { quotedValue } from "../core/shown_value.ts";
import { storedBytesOf } from "../core/stored_bytes.ts";
import { MAX_VALUE_DEPTH, nestedDeeperThan } from "../core/exact_json.ts";

/** Messages per multi-row INSERT (18 parameters each; PostgreSQL allows 65,535). */
const INSERT_ROWS = 500;

const SESSION_CASTS: Record<string, string> = {
  started_at: "double precision",
  ended_at: "double precision",
  estimated_cost_usd: "double precision",
  actual_cost_usd: "double precision",
  ...Object.fromEntries(COUNTER_COLUMNS.map((c) => [c, "numeric"])),
  [EXTRA_COLUMN]: "text::jsonb",
};

const MESSAGE_CASTS: Record<string, string> = {
  id: "bigint",
  timestamp: "double precision",
  token_count: "numeric",
  search_words: "tsvector",
  search_grams: "tsvector",
  [EXTRA_COLUMN]: "text::jsonb",
};

function cast(column: string, casts: Record<string, string>): string {
  return `::${casts[column] ?? "text"}`;
}

async function sessionExists(query: PgQuery, id: string): Promise<boolean> {
  return (await query("SELECT 1 FROM sessions WHERE id = $1", [id])).length > 0;
}

/**
 * True when every message has an id of its own and none is taken: the
 * record keeps them. The sequence is moved past them first, so that no
 * append is handed one of them from then on, and they are looked up again
 * after. A record one of whose ids is taken already leaves the sequence as
 * it was: its messages are numbered from where it stands, as the SQLite
 * engine numbers them after its largest id (moved first, it numbered them
 * past the record's ids, and every append after them too).
 */
async function originalIdsFree(
  query: PgQuery,
  messages: readonly Record<string, unknown>[],
): Promise<boolean> {
  if (messages.length === 0) return true;
  const ids = originalMessageIds(messages);
  if (ids === undefined) return false;
  const anyTaken = async () =>
    (await query(
      "SELECT 1 FROM messages WHERE id IN (SELECT json_array_elements_text($1::text::json)::bigint) LIMIT 1",
      [jsonParam(ids)],
    )).length > 0;
  if (await anyTaken()) return false;
  const highest = ids.reduce((a, b) => (a > b ? a : b), 0);
  if (!await advanceSequencePast(query, highest)) return false;
  return !await anyTaken();
}

async function writeSessionRow(
  query: PgQuery,
  checked: ImportRecord,
  parent: string | null,
  exists: boolean,
): Promise<void> {
  const { columns, values } = sessionImportValues(checked, SESSION_COLUMN_NAMES, parent);
  columns.push(EXTRA_COLUMN);
  values.push(extraColumnsJson(checked.row, SESSION_COLUMN_SET));
  const marks = columns.map((c, i) => `$${i + 2}${cast(c, SESSION_CASTS)}`);
  if (exists) {
    const assignments = columns.map((c, i) => `${c} = ${marks[i]}`).join(", ");
    await query(`UPDATE sessions SET ${assignments} WHERE id = $1`, [checked.id, ...values]);
  } else {
    await query(
      `INSERT INTO sessions (id, ${columns.join(", ")}) VALUES ($1, ${marks.join(", ")})`,
      [checked.id, ...values],
    );
  }
}

async function writeMessages(query: PgQuery, checked: ImportRecord): Promise<void> {
  const keepIds = await originalIdsFree(query, checked.messages);
  const columns = MESSAGE_COLUMN_NAMES.filter((c) => c !== "id" && c !== "session_id");
  // Consecutive messages with the same columns go in one multi-row INSERT (in write order, so
  // new ids follow it: see messageWriteOrder).
  let pending: { names: string[]; rows: PgValue[][] } | undefined;
  const flush = async () => {
    if (pending === undefined || pending.rows.length === 0) return;
    const { names, rows } = pending;
    pending = undefined;
    const params: PgValue[] = [];
    const tuples = rows.map((values) => {
      const marks = values.map((value, i) => {
        params.push(value);
        return `$${params.length}${cast(names[i], MESSAGE_CASTS)}`;
      });
      return `(${marks.join(", ")})`;
    });
    await query(insertMessagesSql(names, `VALUES ${tuples.join(", ")}`), params);
  };
  for (const index of messageWriteOrder(checked.messages)) {
    const message = checked.messages[index];
    const names = ["session_id"];
    const values: PgValue[] = [checked.id];
    if (keepIds) {
      names.push("id");
      values.push(message.id as number);
    }
    const stored: Record<string, PgValue> = {};
    for (const column of columns) {
      if (!(column in message)) continue;
      names.push(column);
      const value = carriedText(message, column) ?? messageImportValue(
        column,
        message[column],
        `messages[${index}].${column}`,
        message,
      );
      if (column === "token_count") checkServerNumber(message, column, value, index);
      stored[column] = value;
      values.push(value);
    }
    names.push(EXTRA_COLUMN);
    values.push(extraColumnsJson(message, MESSAGE_COLUMN_SET));
    const doc = searchDocument(
      stored.content == null ? null : String(stored.content),
      stored.tool_name == null ? null : String(stored.tool_name),
      stored.tool_calls == null ? null : String(stored.tool_calls),
    );
    names.push("search_words", "search_grams");
    values.push(wordsVector(doc), gramsVector(doc));
    if (
      pending !== undefined &&
      (pending.rows.length >= INSERT_ROWS || pending.names.join() !== names.join())
    ) {
      await flush();
    }
    pending ??= { names, rows: [] };
    pending.rows.push(values);
  }
  await flush();
}

/**
 * The text a message carries for `content` or `tool_calls` as stored
 * bytes (`hermes_state_bytes`: text another writer stored that writing the
 * value again would change, as JSON that does not parse, `{bad`), when it
 * still reads as the message's value: the column holds it, as a file's
 * import writes it, so the server's reads and search see what the file's
 * do (written NULL, `tool_calls` read as `null` where the file gives `[]`,
 * and a word of it not found). The bytes stay carried in `extra_columns`.
 */
function carriedText(message: Record<string, unknown>, column: string): string | undefined {
  if (column !== "content" && column !== "tool_calls") return undefined;
  const stored = storedBytesOf(message)?.get(column);
  if (stored?.kind !== "text") return undefined;
  const text = new TextDecoder().decode(stored.bytes);
  // JSON nested too deep for the server's readers to give back (as before: only carried).
  if (nestedDeeperThan(text, MAX_VALUE_DEPTH)) return undefined;
  return carriedTextReadsAs(column, text, message[column]) ? text : undefined;
}

/**
 * Refuses a value the server's numeric column cannot hold, which a file may
 * (SQLite keeps text or a BLOB in an INTEGER column, and an export carries
 * it): it failed as "invalid input syntax for type numeric: """. A BLOB is
 * refused whatever its bytes, as `sync` refuses it (one of digits became
 * that number).
 *
 * @throws {TypeError} Naming the field and the value.
 */
function checkServerNumber(
  message: Record<string, unknown>,
  column: string,
  value: PgValue,
  index: number,
): void {
  const field = `messages[${index}].${column}`;
  const bytes = storedBytesOf(message)?.get(column);
  if (bytes?.kind === "blob") {
    throw new TypeError(
      `Cannot import session into PostgreSQL: ${field} holds a BLOB of ${bytes.bytes.length} ` +
        `bytes, where the server keeps a number`,
    );
  }
  if (value === null || typeof value === "number" || typeof value === "bigint") return;
  if (typeof value === "string" && /^-?\d+(\.\d*)?([eE][-+]?\d+)?$/.test(value)) return;
  throw new TypeError(
    `Cannot import session into PostgreSQL: ${field} holds ${
      quotedValue(value)
    }, where the server keeps a number`,
  );
}

/** Ids the sequence is moved forward by, at most, to keep a record's ids. */
const MAX_IDS_SKIPPED = 1_000_000;

/**
 * Moves the message id sequence past `highest`, before the rows that keep
 * their ids are looked up and written, so that no append is handed one of
 * them. By taking values (`nextval` is atomic: the sequence only ever moves
 * forward, however many imports and appends run at once), where reading it
 * and then calling `setval` let two imports race, the later one's lower
 * value moving it back under ids already written. About a microsecond per
 * id skipped; a record whose ids lie further ahead than
 * {@linkcode MAX_IDS_SKIPPED} gets new ids instead.
 *
 * @returns False when `highest` is too far ahead (the sequence is left as it was).
 */
async function advanceSequencePast(query: PgQuery, highest: number): Promise<boolean> {
  const [row] = await query(
    `SELECT $1::bigint - last_value + CASE WHEN is_called THEN 0 ELSE 1 END AS gap
     FROM messages_id_seq`,
    [highest],
  );
  const gap = Number(row?.gap ?? 0);
  if (gap > MAX_IDS_SKIPPED) return false;
  if (gap > 0) {
    await query(
      "SELECT max(nextval('messages_id_seq')) FROM generate_series(1, $1::bigint)",
      [gap],
    );
  }
  return true;
}

/** Times an import is run again when another writer took its title meanwhile. */
const TITLE_ATTEMPTS = 5;

/**
 * Imports one exported session record, as `SessionDB.importSession` does.
 *
 * @param transaction Runs a function in one transaction.
 * @param record One record of a JSONL export.
 * @param options `replace` an existing session instead of skipping it.
 * @returns What happened.
 * @throws {TypeError} When the record is not a valid session export.
 * @throws {TitleError} When other writers kept taking the free title it
 * was given ({@linkcode TITLE_ATTEMPTS} times; nothing is written).
 */
export async function importSessionPg(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  record: unknown,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const checked = withCarriedBlobsAsText(checkImportRecord(record));
  for (let attempt = 1;; attempt++) {
    try {
      return await importChecked(transaction, checked, options);
    } catch (error) {
      if (!isUniqueViolation(error, "idx_sessions_title_unique")) throw error;
      // Another writer took the title between the look-up and the write: look again.
      if (attempt >= TITLE_ATTEMPTS) throw titleTaken(checked);
    }
  }
}

/**
 * `checked` with each column its records carry as a BLOB (`hermes_state_bytes`,
 * the column itself `null`) holding the BLOB's text, as the file's own
 * readers show it: PostgreSQL text cannot hold bytes, and a `null` there left
 * the session without its source (refused), title or model, and a message
 * without its content (not found by search). The bytes stay carried in
 * `extra_columns`, so an export gives them back exactly.
 */
function withCarriedBlobsAsText(checked: ImportRecord): ImportRecord {
  return {
    id: checked.id,
    row: recordWithBlobText(checked.row),
    messages: checked.messages.map(recordWithBlobText),
  };
}

/**
 * The title the record's session gets: its own, unless another session has
 * it; then the lineage's next numbered title (as `getNextTitleInLineage`
 * numbers it, the session's own titles left out), as on SQLite.
 *
 * @returns The new title, or `null` when the record's is kept.
 */
async function freeTitle(query: PgQuery, checked: ImportRecord): Promise<string | null> {
  const title = storedTitle(checked);
  if (title === null) return null;
  const holder = await query("SELECT 1 FROM sessions WHERE title = $1 AND id <> $2 LIMIT 1", [
    title,
    checked.id,
  ]);
  if (holder.length === 0) return null;
  // ILIKE in the "C" collation folds ASCII letters only, as SQLite's LIKE: both number alike.
  const next = async (stem: string) => {
    const taken = await query(
      `SELECT title FROM sessions
       WHERE (title = $1 OR title ILIKE $2 COLLATE "C" ESCAPE E'\\\\') AND id <> $3`,
      [stem, `${escapeLike(stem)} #%`, checked.id],
    );
    return nextLineageTitle(stem, taken.map((row) => row.title));
  };
  const stem = titleStem(title);
  const numbered = await next(stem);
  const shorter = stemToFit(stem, numbered);
  if (shorter === undefined) return numbered;
  // Numbered even when the cut stem is free: the title says it is not the one given.
  const again = await next(shorter);
  return again === shorter ? `${shorter} #2` : again;
}

/** The error when other writers kept taking the title (`setSessionTitle`'s words). */
function titleTaken(checked: ImportRecord): TitleError {
  return new TitleError(
    `Title '${String(checked.row.title)}' is already in use by another session`,
  );
}

async function importChecked(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  checked: ImportRecord,
  options: ImportOptions,
): Promise<ImportResult> {
  return await transaction(async (query) => {
    const exists = await sessionExists(query, checked.id);
    const named = namedParent(checked);
    if (exists && !options.replace) return await skip(query, checked.id, named);
    const parentPresent = named === null || named === checked.id ||
      await sessionExists(query, named);
    const parent = parentPresent ? named : null;
    const renamedTo = await freeTitle(query, checked);
    const written = renamedTo === null ? checked : withTitle(checked, renamedTo);
    if (exists) await query(deleteMessagesSql("session_id = $1"), [checked.id]);
    if (!exists && parent === checked.id) {
      // A row cannot name itself before it exists: insert, then link.
      await writeSessionRow(query, written, null, false);
      await query("UPDATE sessions SET parent_session_id = id WHERE id = $1", [checked.id]);
    } else {
      await writeSessionRow(query, written, parent, exists);
    }
    await writeMessages(query, written);
    // Checked by the store, which made the table when any row is given.
    const usage = options.modelUsage;
    if (usage !== undefined && (usage.length > 0 || await hasModelUsageTable(query))) {
      await replaceModelUsage(query, [{ id: checked.id, usage }]);
    }
    return {
      outcome: exists ? "replaced" : "imported",
      id: checked.id,
      messages: checked.messages.length,
      deferredParent: parentPresent ? null : named,
      // A newer Hermes's columns are kept in `extra_columns`: nothing is dropped.
      droppedColumns: [],
      relinked: false,
      renamedTo,
    };
  });
}

/**
 * A session already present is left as it is, except for a parent link an
 * earlier import could not make: made when the parent is in now, deferred
 * otherwise (as `importSession` on SQLite).
 */
async function skip(query: PgQuery, id: string, named: string | null): Promise<ImportResult> {
  const result = skippedImport(id);
  if (named === null || named === id) return result;
  const rows = await query("SELECT parent_session_id AS parent FROM sessions WHERE id = $1", [id]);
  if (rows[0]?.parent !== null && rows[0]?.parent !== undefined) return result;
  if (!await sessionExists(query, named)) return { ...result, deferredParent: named };
  const linked = await query(
    `UPDATE sessions SET parent_session_id = $1 WHERE id = $2 AND parent_session_id IS NULL
     AND EXISTS (SELECT 1 FROM sessions WHERE id = $1) RETURNING id`,
    [named, id],
  );
  return { ...result, relinked: linked.length > 0 };
}

/**
 * Links imported sessions to parents imported after them.
 *
 * @param transaction Runs a function in one transaction.
 * @param links The deferred links.
 * @returns How many were linked.
 */
export async function restoreParentLinksPg(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  links: readonly ParentLink[],
): Promise<number> {
  if (links.length === 0) return 0;
  return await transaction(async (query) => {
    let linked = 0;
    for (const { id, parentId } of links) {
      const rows = await query(
        `UPDATE sessions SET parent_session_id = $1 WHERE id = $2 AND parent_session_id IS NULL
         AND EXISTS (SELECT 1 FROM sessions WHERE id = $1) RETURNING id`,
        [parentId, id],
      );
      linked += rows.length;
    }
    return linked;
  });
}
