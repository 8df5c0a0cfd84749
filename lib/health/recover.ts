/**
 * `recoverDatabase(source, dest)`: salvage from a damaged state.db into a
 * new one. Every table is read through SQLite by rowid ranges, narrowing
 * the range around each page that fails, so every row SQLite can still
 * reach is kept; the rows it cannot reach (below a damaged interior page,
 * or all of them when the header page is gone) are taken from the
 * table-leaf pages that still parse, read without SQLite. What SQLite
 * returns is cross-checked against the file's other witnesses (its indexes,
 * the search tables, the page scan: `_recover_table_read.ts`), and a row is
 * kept only when a Hermes could have written it (`_recover_plausible.ts`):
 * a row the witnesses list that no read gives is reported lost. The new file
 * gets the v11 schema, the rows, placeholder sessions for messages whose
 * session was lost, rebuilt FTS tables and recounted counters.
 *
 * A 0-byte file beside a `-wal` that holds commits is read from the
 * `-wal`'s committed frames alone (SQLite would delete that `-wal`). A file
 * beside a `-wal` of another database (`foreign_wal.ts`) is read alone,
 * that `-wal` left out and reported. Commits of a `-wal` past a frame that
 * fails its checksum are salvaged when a later commit wrote that frame's
 * page again: the image of the last commit, checked, is recovered from
 * instead (`wal_salvage.ts`, `_recover_wal_salvage.ts`).
 *
 * The new file keeps what the source said of its rows beyond their values:
 * the declarations of a newer Hermes's extra columns (so integers stay
 * INTEGER), the message id sequence past every id known to have existed
 * (a lost message's id is never given again), and every title (a second
 * session of one title is renamed `"title #2"` and reported).
 *
 * Every value is carried exactly (`_exact_values.ts`): integers beyond 2^53,
 * zero and negative ids, text that is not valid UTF-8. What was lost is
 * counted, or said to be uncountable (`lossUnknownIn`: pages missing or
 * unparsed, and no record of a table's highest rowid); a row whose key
 * another recovered row holds is left out and counted (`duplicates`).
 *
 * Limits: rows on a damaged leaf page are lost (their rowid ranges are
 * reported); when the header page is lost, free pages cannot be told from
 * live ones, so a deleted row may come back; extra tables of a newer Hermes
 * are not copied (their extra columns are).
 *
 * @module
 */
import { chmodSync, renameSync, statSync } from "node:fs";
import { loadDriver } from "../sqlite/driver/load.ts";
import { chooseWholeReadAccess, openForReading } from "../sqlite/read_access.ts";
export type { RetitledSession } from "./_recovered_titles.ts";
export type { OtherTableReport } from "./_recover_other_tables.ts";
import type { SqliteConnection, SqliteDriver, SqlValue } from "../sqlite/driver/types.ts";
import { OpenError, RecoverError } from "../core/errors.ts";
import {
  FTS_TABLES,
  ftsBackfillSql,
  ftsTriggersSql,
  SCHEMA_VERSION,
} from "../sqlite/schema/schema_sql.ts";
import { SessionDB } from "../sqlite/session_db.ts";
import {
  type PageScan,
  type RawRecord,
  type RecordVisitor,
  scanPages,
  scanWal,
} from "./_page_scan.ts";
import {
  linkIntoPlace,
  removeSidecars,
  removeStaleTemps,
  removeWithSidecars,
  stopIfAborted,
  tempName,
} from "./_temp_files.ts";
import { isDatabaseFile } from "../files/same_file.ts";
import { TOOL_CALLS_ADDED_SQL } from "./counter_check.ts";
import { readSchemaVersion } from "../sqlite/schema/schema_version.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { foreignWalReason, spoilingWal } from "../sqlite/foreign_wal.ts";
import { walCommitsPastBreak } from "./wal_break.ts";
import { salvageWalFile } from "./_recover_wal_salvage.ts";
import { assertMayRead, openFailureReason } from "../sqlite/open.ts";
import { isBusyError, retryWhileBusy, type StoreRetryOptions } from "../sqlite/store_retry.ts";
import { abortableDelay } from "../core/delay.ts";
import { deadWritersJournal } from "./_hot_journal.ts";
import { leftoverJournalAdvice } from "../sqlite/damaged_file.ts";
import {
  addDeclaredColumn,
  type ColumnDeclaration,
  columnDeclarations,
  extraColumnDeclaration,
} from "./_column_declarations.ts";
import { freeTitleLike, type RetitledSession } from "./_recovered_titles.ts";
import { bindable, byRowid, type Rowid, rowidOf } from "./_exact_values.ts";
import {
  declaredColumns,
  failedIdTest,
  type TableRead,
  TableReader,
  unreadable,
  unreadTable,
} from "./_recover_table_read.ts";
import { plausibleRow } from "./_recover_plausible.ts";
import { RowSpill } from "./_recover_rows.ts";
import {
  type OtherTable,
  type OtherTableReport,
  readOtherTables,
  settleOtherTables,
  writeOtherTables,
} from "./_recover_other_tables.ts";
import { agreesWithIndexes } from "./_recover_witnesses.ts";
import { allTextDamagedInPlace, type DamagedText } from "./damaged_text.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { checkOptionNames, type OptionNames } from "../core/option_names.ts";

/** The tables recovered. */
const TABLES = ["sessions", "messages", "state_meta"] as const;
type Table = typeof TABLES[number];

/**
 * The stages of {@linkcode recoverDatabase}, in order, as its `onStage`
 * option names them: the pages read without SQLite, the rows read through
 * it, the pages read again for the rows it missed (only when it missed
 * some), the new file's rows, and its two search indexes built from them
 * (most of the time on a large file).
 */
export type RecoverStage =
  | "reading pages"
  | "reading rows"
  | "reading missed rows from pages"
  | "writing the new file"
  | "building the search indexes";

/** Options of {@linkcode recoverDatabase}. */
export interface RecoverOptions {
  /**
   * Replace `dest` when it exists.
   * @default {false}
   */
  readonly force?: boolean;
  /** The driver opener; the running runtime's by default. */
  readonly openDriver?: SqliteDriver;
  /**
   * Stops the recovery between its stages (reading, writing the new file),
   * removing its temporary files; the promise rejects with the signal's
   * reason. A stage under way finishes first.
   */
  readonly signal?: AbortSignal;
  /**
   * How long to wait for a file another process holds whole (not even
   * reads can go on: a writer of a rollback-journal file writing its pages,
   * a connection recovering a crashed writer's WAL), in milliseconds
   * (`HERMES_STATE_LOCK_TIMEOUT`), at the open or at any read after it (the
   * read that met the lock is tried again; nothing read before it is read
   * again); then the recovery fails with a `WriteBusyError`, leaving no new
   * file. The signal ends the wait at once.
   * @default {15000}
   */
  readonly lockTimeoutMs?: number;
  /**
   * Called as each stage begins (see {@linkcode RecoverStage}), for a
   * progress display: a million messages take minutes, most of them in the
   * last stage.
   */
  readonly onStage?: (stage: RecoverStage) => void;
}

/** The options of the call, checked by name. */
const RECOVER_OPTION_NAMES: OptionNames<RecoverOptions> = {
  force: "boolean",
  openDriver: true,
  signal: true,
  lockTimeoutMs: true,
  onStage: true,
};

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
  /**
   * The tables a newer Hermes added (`session_model_usage`,
   * `system_prompts`…), read as SQLite reads them and made in the new file
   * as the source declares them, with what each holds there.
   */
  readonly otherTables: OtherTableReport[];
  /**
   * Sessions whose system prompt, kept apart in `system_prompts` by a newer
   * Hermes (since its schema 25), could not be read: their link to it
   * (`system_prompt_hash`) was cleared.
   */
  readonly clearedPrompts: number;
  /** Rowid ranges that could not be read, by table. */
  readonly lost: LostRange[];
  /** True when SQLite could read the schema at all. */
  readonly schemaReadable: boolean;
  /**
   * True when what was lost cannot be counted (`lossUnknownIn` names the
   * tables): `lost` is then a lower bound.
   */
  readonly lossUnknown: boolean;
  /**
   * The tables whose loss cannot be counted: SQLite could not read them
   * whole, nothing gives their highest rowid (for messages, `sqlite_sequence`
   * does), and pages of the file are missing (a file cut short) or did not
   * parse, so the rows they held leave no trace.
   */
  readonly lossUnknownIn: string[];
  /** Pages the header counts that the file no longer holds (a file cut short), 0 otherwise. */
  readonly missingPages: number;
  /**
   * Rows left out because another recovered row had the same key (a session
   * id, a message id, a meta key), by table: the first was kept.
   */
  readonly duplicates: {
    readonly sessions: number;
    readonly messages: number;
    readonly state_meta: number;
  };
  /** True when the main file was empty and every row came from its `-wal`. */
  readonly fromWal: boolean;
  /**
   * Why the `-wal` beside the file is another database's, when it is: the
   * file was then read alone and that `-wal` left out; `null` otherwise.
   */
  readonly foreignWal: string | null;
  /**
   * Commits of the `-wal` past a frame that fails its checksum, which SQLite
   * ignores (in the new file only when `walCommitsSalvaged` says so): where
   * it stops and how many follow; `null` when there are none.
   */
  readonly walCommitsIgnored: {
    /** The frame SQLite stops at (1 for the first). */
    readonly frame: number;
    /** Commits after it. */
    readonly commits: number;
  } | null;
  /**
   * Of those commits, how many the new file holds: when the broken frame's
   * page was written again by a later commit, the image of the last commit
   * is whole, and it was recovered from once it passed the integrity,
   * foreign key and search index checks (0 otherwise).
   */
  readonly walCommitsSalvaged: number;
  /** Why the commits past the broken frame were not salvaged; `null` when they were or there are none. */
  readonly walSalvageRefused: string | null;
  /** Sessions renamed because another recovered session had their title. */
  readonly retitled: RetitledSession[];
  /**
   * Messages whose text was damaged in place in the source (no longer valid
   * UTF-8, every page sound) and was taken back from the copy a search table
   * keeps of it, as `doctor --fix` takes it back: their ids.
   */
  readonly textsTakenBack: number[];
  /** The new file's message id sequence: past every message id known to have existed. */
  readonly messageSequence: number;
}

/**
 * The column orders Hermes files have had besides our v11 (Python's v21
 * and v6, the external-content v10 layout): a record
 * read from a page is matched against these when its file's own order is
 * unknown or differs. A record may hold fewer values than its table has
 * columns (rows written before an `ADD COLUMN`).
 */
const KNOWN_LAYOUTS: Record<"sessions" | "messages", readonly (readonly string[])[]> = {
  sessions: [
    // v21 (Python)
    [
      "id",
      "source",
      "user_id",
      "session_key",
      "chat_id",
      "chat_type",
      "thread_id",
      "display_name",
      "origin_json",
      "expiry_finalized",
      "model",
      "model_config",
      "system_prompt",
      "parent_session_id",
      "started_at",
      "ended_at",
      "end_reason",
      "message_count",
      "tool_call_count",
      "input_tokens",
      "output_tokens",
      "cache_read_tokens",
      "cache_write_tokens",
      "reasoning_tokens",
      "cwd",
      "git_branch",
      "git_repo_root",
      "billing_provider",
      "billing_base_url",
      "billing_mode",
      "estimated_cost_usd",
      "actual_cost_usd",
      "cost_status",
      "cost_source",
      "pricing_version",
      "title",
      "api_call_count",
      "handoff_state",
      "handoff_platform",
      "handoff_error",
      "compression_failure_cooldown_until",
      "compression_failure_error",
      "compression_fallback_streak",
      "rewind_count",
      "archived",
    ],
    // v10, external-content layout
    [
      "id",
      "source",
      "started_at",
      "ended_at",
      "title",
      "parent_session_id",
      "message_count",
      "tool_call_count",
      "api_call_count",
    ],
  ],
  messages: [
    // v21 (Python)
    [
      "id",
      "session_id",
      "role",
      "content",
      "tool_call_id",
      "tool_calls",
      "tool_name",
      "effect_disposition",
      "timestamp",
      "token_count",
      "finish_reason",
      "reasoning",
      "reasoning_content",
      "reasoning_details",
      "codex_reasoning_items",
      "codex_message_items",
      "platform_message_id",
      "observed",
      "active",
      "compacted",
    ],
    // v6 (Python): `reasoning_details` before any `reasoning_content`
    [
      "id",
      "session_id",
      "role",
      "content",
      "tool_call_id",
      "tool_calls",
      "tool_name",
      "timestamp",
      "token_count",
      "finish_reason",
      "reasoning",
      "reasoning_details",
      "codex_reasoning_items",
    ],
    // v10, external-content layout
    [
      "id",
      "session_id",
      "timestamp",
      "role",
      "content",
      "tool_name",
      "tool_calls",
      "tool_call_id",
      "token_count",
      "finish_reason",
      "reasoning",
      "reasoning_content",
      "reasoning_details",
      "codex_reasoning_items",
      "codex_message_items",
    ],
  ],
};

/**
 * The layouts a record of each table is tried against besides the file's
 * own: v11's, then {@linkcode KNOWN_LAYOUTS} (computed once: every record
 * of the page scan is matched, several times over).
 */
const OTHER_LAYOUTS: Record<Table, readonly (readonly string[])[]> = {
  sessions: [declaredColumns("sessions"), ...KNOWN_LAYOUTS.sessions],
  messages: [declaredColumns("messages"), ...KNOWN_LAYOUTS.messages],
  state_meta: [],
};

/** A record matched to a table, and the layout it fits. */
interface Matched {
  readonly table: Table;
  readonly layout: readonly string[];
  readonly values: readonly SqlValue[];
}

/** Whether `record` is `sqlite_sequence`'s row of the messages table. */
function isMessageSequence(record: RawRecord): boolean {
  const [name, seq] = record.values;
  return record.values.length === 2 && name === "messages" &&
    (typeof seq === "number" || typeof seq === "bigint");
}

/** A matched record's values by column name. */
function rowOf(matched: Matched): Map<string, SqlValue> {
  return new Map(matched.values.map((value, i) => [matched.layout[i], value]));
}

function fits(values: readonly SqlValue[], layout: readonly string[], table: Table): boolean {
  const isText = (x: SqlValue | undefined) => typeof x === "string";
  const isNumber = (x: SqlValue | undefined) => typeof x === "number";
  const at = (name: string) => {
    const i = layout.indexOf(name);
    return i < 0 ? undefined : values[i];
  };
  // Up to the column that tells the table apart; none beyond the layout's.
  if (values.length > layout.length) return false;
  // The shape first, then the values: a damaged cell may decode into the shape, never a row.
  if (table === "messages") {
    const ts = layout.indexOf("timestamp");
    return ts >= 0 && ts < values.length && values[layout.indexOf("id")] === null &&
      isText(at("session_id")) && isText(at("role")) && isNumber(at("timestamp")) &&
      plausibleRow(table, layout, values);
  }
  if (table === "sessions") {
    const started = layout.indexOf("started_at");
    return started >= 0 && started < values.length && isText(at("id")) && isText(at("source")) &&
      isNumber(at("started_at")) && plausibleRow(table, layout, values);
  }
  return values.length === 2 && isText(values[0]) && (isText(values[1]) || values[1] === null) &&
    !String(values[0]).includes("\u0000");
}

/**
 * Which table a record of the page scan belongs to, by its shape: the
 * file's own column order first, then the known layouts of Hermes files
 * (not for the tables whose own order the file gave: `ownOnly`).
 */
function tableOf(
  record: RawRecord,
  columns: Record<Table, string[]>,
  ownOnly: Partial<Record<Table, boolean>> = {},
): Matched | undefined {
  const values = record.values;
  for (const table of TABLES) {
    const own = columns[table];
    // A file's records hold its own columns (or the first of them): another layout would
    // only put a damaged record's values under other names. A record longer than its own
    // order, though, says that order was read from a damaged schema page.
    const known = !ownOnly[table]
      ? OTHER_LAYOUTS[table]
      : values.length > own.length
      ? OTHER_LAYOUTS[table].filter((layout) => layout.length === values.length)
      : [];
    const matches = (layout: readonly string[]) => fits(values, layout, table);
    // A layout of exactly the record's length (the file's own first), then the file's own
    // order, then a known one the record is a prefix of (rows older than an ADD COLUMN).
    const layout = (own.length === values.length && matches(own) ? own : undefined) ??
      known.find((l) => l.length === values.length && matches(l)) ??
      (matches(own) ? own : undefined) ??
      known.find((l) => l.length !== values.length && matches(l));
    if (layout !== undefined) return { table, layout, values };
  }
  return undefined;
}

/** The largest of `values`, or 0 (a loop: a spread of a million overflows the stack). */
function maxOf(values: Iterable<Rowid>): Rowid {
  let max: Rowid = 0;
  for (const value of values) if (value > max) max = value;
  return max;
}

/** The smallest of `values`, or 0. */
function minOf(values: Iterable<Rowid>): Rowid {
  let min: Rowid = 0;
  for (const value of values) if (value < min) min = value;
  return min;
}

/**
 * The failed spans as ranges, without the rowids the page scan found, in
 * exact arithmetic (a span may run past 2^53 or over 2^62 ids: it is cut
 * at the found rowids, never walked id by id).
 */
function lostRanges(table: Table, read: TableRead, found: Set<Rowid>): LostRange[] {
  const order = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
  const spans = read.failed.map(([a, b]) => [BigInt(a), BigInt(b)] as const)
    .sort((a, b) => order(a[0], b[0]));
  const kept = [...found].map((id) => BigInt(id)).sort(order);
  const one = BigInt(1);
  const lost: Array<[bigint, bigint]> = [];
  const add = (from: bigint, to: bigint) => {
    const last = lost.at(-1);
    if (last !== undefined && from <= last[1] + one) {
      if (to > last[1]) last[1] = to;
    } else lost.push([from, to]);
  };
  for (const [from, to] of spans) {
    let i = firstAtLeast(kept, from);
    let start = from;
    for (; i < kept.length && kept[i] <= to; i++) {
      if (kept[i] > start) add(start, kept[i] - one);
      start = kept[i] + one;
    }
    if (start <= to) add(start, to);
  }
  return lost.map(([from, to]) => ({ table, from: Number(from), to: Number(to) }));
}

/** The index of the first of the sorted `values` that is at least `value`. */
function firstAtLeast(values: readonly bigint[], value: bigint): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The rows SQLite read and those read from the pages (no rowid in both),
 * in one rowid order, each as wide as the new file's columns.
 */
function* byRowidOf(
  read: Iterable<[Rowid, SqlValue[]]>,
  fromPages: ReadonlyArray<[Rowid, SqlValue[]]>,
  width: number,
): Iterable<SqlValue[]> {
  const widened = (values: SqlValue[]) =>
    values.length === width ? values : Array.from({ length: width }, (_, i) => values[i] ?? null);
  let next = 0;
  for (const [rowid, values] of read) {
    for (; next < fromPages.length && byRowid(fromPages[next][0], rowid) < 0; next++) {
      yield fromPages[next][1];
    }
    yield widened(values);
  }
  for (; next < fromPages.length; next++) yield fromPages[next][1];
}

/** What {@linkcode writeDest} writes: per table, the columns, their source declarations, the rows. */
interface DestTable {
  readonly columns: string[];
  readonly declarations: Map<string, ColumnDeclaration>;
  /** In rowid order, read once. */
  readonly rows: Iterable<SqlValue[]>;
  /** Text values that are not valid UTF-8, written as their bytes: the row's key, column, bytes. */
  readonly rawTexts: Array<{ key: SqlValue; column: string; bytes: Uint8Array }>;
}

/** The column that names a row of each table in the new file. */
const KEY_COLUMN: Record<Table, string> = { sessions: "id", messages: "id", state_meta: "key" };

/**
 * Writes back the text values that are not valid UTF-8 as the bytes they
 * were (bound as they were read, the bytes would have become U+FFFD): a
 * BLOB cast to TEXT keeps its bytes. The key column itself is left decoded.
 */
function restoreRawTexts(db: SqliteConnection, table: Table, dest: DestTable): void {
  const key = quoteIdentifier(KEY_COLUMN[table]);
  for (const { key: value, column, bytes } of dest.rawTexts) {
    if (column === KEY_COLUMN[table]) continue;
    db.prepare(`UPDATE ${table} SET ${quoteIdentifier(column)} = CAST(? AS TEXT) WHERE ${key} = ?`)
      .run(bytes, bindable(value));
  }
}

/** The `VALUES` term of each column: a NULL in a `NOT NULL DEFAULT` column takes the default. */
function valueTerms(db: SqliteConnection, table: Table, columns: readonly string[]): string {
  const own = columnDeclarations(db, table);
  return columns.map((column) => {
    const declaration = own.get(column);
    return declaration?.notNull && declaration.defaultSql !== null
      ? `COALESCE(?, ${declaration.defaultSql})`
      : "?";
  }).join(", ");
}

/**
 * Inserts the rows of `table`; a session whose title another holds is
 * renamed (returned), a row whose key another row holds is left out
 * (counted).
 */
function insertRows(
  db: SqliteConnection,
  table: Table,
  dest: DestTable,
): { retitled: RetitledSession[]; duplicates: number } {
  const { columns, rows } = dest;
  const names = columns.map(quoteIdentifier).join(", ");
  const insert = db.prepare(
    `INSERT OR IGNORE INTO ${table} (${names}) VALUES (${valueTerms(db, table, columns)})`,
  );
  const title = table === "sessions" ? columns.indexOf("title") : -1;
  const id = columns.indexOf("id");
  const exists = title >= 0
    ? db.prepare("SELECT 1 AS found FROM sessions WHERE id = ?")
    : undefined;
  const titleTaken: SqlValue[][] = [];
  let duplicates = 0;
  for (const row of rows) {
    if (insert.run(...row.map(bindable)).changes > 0) continue;
    if (typeof row[title] === "string" && exists?.get(bindable(row[id])) === undefined) {
      titleTaken.push(row);
    } else duplicates++;
  }
  // After every other session: a renamed one never takes a title a later row holds.
  const retitled: RetitledSession[] = [];
  for (const row of titleTaken) {
    const from = String(row[title]);
    const to = freeTitleLike(db, from);
    if (insert.run(...row.map((value, i) => bindable(i === title ? to : value))).changes > 0) {
      retitled.push({ session: String(row[id]), from, to });
    } else duplicates++;
  }
  restoreRawTexts(db, table, dest);
  return { retitled, duplicates };
}

/**
 * Writes back each text damaged in place that the source's search tables
 * hold whole, where the new row holds the damaged bytes: the ids written.
 */
function takeBackTexts(db: SqliteConnection, damaged: readonly DamagedText[]): number[] {
  const update = db.prepare(
    "UPDATE messages SET content = ? WHERE id = ? AND CAST(content AS BLOB) = ?",
  );
  return damaged.filter(({ id, text, damaged: bytes }) => update.run(text, id, bytes).changes > 0)
    .map(({ id }) => id);
}

/** Sets the message id sequence to at least `top` (SQLite's own is the highest id inserted). */
function raiseMessageSequence(db: SqliteConnection, highest: Rowid): number {
  const top = BigInt(highest); // an INTEGER: the column is untyped, and a number binds as REAL
  db.prepare("UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'messages' AND seq < ?1").run(top);
  db.prepare(
    `INSERT INTO sqlite_sequence (name, seq) SELECT 'messages', ?1
     WHERE ?1 > 0 AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'messages')`,
  ).run(top);
  return Number(
    db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'messages'").get()?.seq ?? 0,
  );
}

/** Writes the salvaged rows into a new v11 file at `path`. */
async function writeDest(
  path: string,
  openDriver: SqliteDriver,
  tables: Record<Table, DestTable>,
  source: {
    readonly version: number | undefined;
    readonly messageTop: Rowid;
    readonly others: readonly OtherTable[];
    readonly damagedTexts: readonly DamagedText[];
  },
  onStage: (stage: RecoverStage) => void,
): Promise<{
  textsTakenBack: number[];
  placeholders: number;
  clearedParents: number;
  clearedPrompts: number;
  otherTables: OtherTableReport[];
  retitled: RetitledSession[];
  duplicates: Record<Table, number>;
  messageSequence: number;
}> {
  const sourceVersion = source.version;
  const newer = sourceVersion !== undefined && sourceVersion > SCHEMA_VERSION;
  (await SessionDB.open({ path, openDriver })).close();
  const db = openDriver(path);
  try {
    for (const table of TABLES) {
      const have = columnDeclarations(db, table);
      for (const name of tables[table].columns) {
        if (have.has(name)) continue;
        const declaration = extraColumnDeclaration(table, name, tables[table].declarations);
        addDeclaredColumn(db, table, { name, declaration });
      }
    }
    db.exec("PRAGMA foreign_keys = OFF");
    db.exec("BEGIN IMMEDIATE");
    for (const table of FTS_TABLES) {
      for (const event of ["insert", "delete", "update"]) db.exec(`DROP TRIGGER ${table}_${event}`);
    }
    const retitled: RetitledSession[] = [];
    const duplicates = { sessions: 0, messages: 0, state_meta: 0 };
    for (const table of TABLES) {
      const inserted = insertRows(db, table, tables[table]);
      retitled.push(...inserted.retitled);
      duplicates[table] = inserted.duplicates;
    }
    const textsTakenBack = takeBackTexts(db, source.damagedTexts);
    const made = writeOtherTables(db, source.others);
    const messageSequence = raiseMessageSequence(db, source.messageTop);
    const placeholders = db.prepare(
      `INSERT OR IGNORE INTO sessions (id, source, started_at)
       SELECT session_id, 'unknown', min(timestamp) FROM messages
       WHERE session_id NOT IN (SELECT id FROM sessions) GROUP BY session_id`,
    ).run().changes;
    const clearedParents = db.prepare(
      `UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IS NOT NULL
       AND parent_session_id NOT IN (SELECT id FROM sessions)`,
    ).run().changes;
    const { clearedPrompts, reports: otherTables } = settleOtherTables(db, source.others, made);
    if (newer) {
      // A newer Hermes counts by its own rules (and would migrate a file stamped 11 again).
      db.prepare("UPDATE schema_version SET version = ?").run(sourceVersion);
    } else {
      db.exec(`UPDATE sessions SET
        message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id),
        tool_call_count = (SELECT COALESCE(sum(${TOOL_CALLS_ADDED_SQL}), 0)
          FROM messages m WHERE m.session_id = sessions.id)`);
    }
    onStage("building the search indexes");
    for (const table of FTS_TABLES) {
      db.exec(`DELETE FROM ${table}`);
      db.exec(ftsBackfillSql(table));
      db.exec(ftsTriggersSql(table));
    }
    db.exec("COMMIT");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return {
      textsTakenBack,
      placeholders,
      clearedParents,
      clearedPrompts,
      otherTables,
      retitled,
      duplicates,
      messageSequence,
    };
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

/**
 * The source's message id sequence, exact (0 when it has none or it cannot
 * be read); a lock another process holds is thrown, to be waited for.
 */
function messageSequenceOf(db: SqliteConnection): Rowid {
  try {
    const row = db.prepare(
      "SELECT CAST(seq AS TEXT) AS seq FROM sqlite_sequence WHERE name = 'messages'",
    ).get();
    return row?.seq === null || row?.seq === undefined ? 0 : rowidOf(BigInt(String(row.seq)));
  } catch (error) {
    if (isBusyError(error)) throw error;
    return 0; // no sqlite_sequence (a v10 file Python migrated), or a damaged page
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
 * @throws {RecoverError} When `dest` is the source, exists (without `force`) or is a folder;
 *   when the source is a folder, is empty without a `-wal`, is not SQLite (no page holds a
 *   session or a message) or is a SQLite file without the Hermes tables.
 * @throws {WriteBusyError} When another process held the source whole past `lockTimeoutMs`
 *   (at the open or at a read after it); no new file is left.
 * @throws The reason of `signal` when it aborts (the temporary files are removed).
 * @throws {TypeError} When `options` is not an object or holds an option this call does not
 *   take, naming it; nothing is done.
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
  checkOptionNames("recover database", options, RECOVER_OPTION_NAMES);
  options ??= {};
  let sourceStat;
  try {
    sourceStat = statSync(source);
  } catch {
    throw new OpenError(source, "no such file");
  }
  if (!sourceStat.isFile()) {
    const what = sourceStat.isDirectory() ? "a folder" : "not a regular file";
    throw new RecoverError(`Cannot recover ${source}: it is ${what}`);
  }
  // The pages are read directly: a file this user may not read is said so, not thrown raw.
  assertMayRead(source);
  // The file is mid-transaction until a dead writer's journal is played back: its pages hold
  // half of one. A live writer's journal is only its transaction under way.
  const openDriver = options.openDriver ?? await loadDriver();
  if (deadWritersJournal(source, openDriver)) {
    throw new OpenError(source, leftoverJournalAdvice(source));
  }
  if (isDatabaseFile(dest, source)) {
    throw new RecoverError(`Cannot recover into ${dest}: it is the damaged file itself`);
  }
  const destStat = fileStat(dest);
  // A folder first: --force would not help.
  if (destStat !== undefined && !destStat.isFile()) {
    const what = destStat.isDirectory()
      ? "a folder, not a file"
      : "not a regular file (a device or a pipe): give a file's path";
    throw new RecoverError(`Cannot recover into ${dest}: it is ${what}`);
  }
  if (destStat !== undefined && !options.force) {
    throw new RecoverError(`Cannot recover into ${dest}: it exists (give --force to replace it)`);
  }
  const walPath = `${sqliteFilePath(source)}-wal`;
  const walSize = fileStat(walPath)?.size ?? 0;
  if (sourceStat.size === 0 && walSize === 0) {
    throw new RecoverError(`Cannot recover ${source}: the file is empty and has no -wal`);
  }

  // 1. The pages, read directly while no connection of this process holds the file. A 0-byte
  // file beside a -wal (SQLite would delete that -wal on open): the -wal's committed frames
  // are the database, and SQLite is not asked at all.
  const fromWal = sourceStat.size === 0;
  // Another database's -wal, or one that spoils a file sound alone: SQLite would mix its pages
  // with the file's. The file is read alone.
  const foreignWal = !fromWal && walSize > 0 ? walLeftOutReason(source, openDriver) : null;
  // Commits past a broken frame: SQLite (and the -wal's own scan) stop at that frame.
  const walCommitsIgnored = walSize > 0 && foreignWal === null
    ? walCommitsPastBreak(walPath) ?? null
    : null;
  // Their image, when it is whole and holds up, is recovered from instead (a temporary file
  // beside dest: the damaged file and its -wal are only read).
  let walSalvageRefused: string | null = null;
  if (walCommitsIgnored !== null && !fromWal) {
    removeStaleTemps(dest, ["walhonoured", "walsalvage"]);
    const salvage = salvageWalFile(source, walPath, dest, openDriver);
    if ("path" in salvage) {
      try {
        const inner = await recoverDatabase(salvage.path, dest, options);
        return { ...inner, source, walCommitsIgnored, walCommitsSalvaged: salvage.commits };
      } finally {
        removeWithSidecars(salvage.path);
      }
    }
    walSalvageRefused = salvage.refused;
  }
  // Read twice at the most, its records never held all at once (a file of gigabytes holds more
  // than memory): here for the rowids of each table, after SQLite's read for the rows it missed.
  const scanSource = (visit: RecordVisitor): PageScan =>
    fromWal ? scanWal(walPath, visit) : scanPages(source, visit);
  const columns = {
    sessions: declaredColumns("sessions"),
    messages: declaredColumns("messages"),
    state_meta: declaredColumns("state_meta"),
  };
  // Every layout of every table begins with its id (text for a session, the rowid's NULL for a
  // message) and a session's and a message's need more than two values: the table a record
  // fits is the same under any of the layouts the reads below may learn.
  const found: Record<Table, Rowid[]> = { sessions: [], messages: [], state_meta: [] };
  let sequence: RawRecord | undefined;
  const onStage = (stage: RecoverStage) => options.onStage?.(stage);
  onStage("reading pages");
  const scan = scanSource((record) => {
    const table = tableOf(record, columns)?.table;
    if (table !== undefined) found[table].push(record.rowid);
    if (sequence === undefined && isMessageSequence(record)) sequence = record;
  });
  await stopIfAborted(options.signal);

  // The rows SQLite reads wait in a scratch file beside DEST, removed whatever happens.
  removeStaleTemps(dest, ["recover-rows"]);
  const spill = new RowSpill(tempName(dest, "recover-rows"), openDriver);
  try {
    // 2. Through SQLite, by rowid ranges.
    onStage("reading rows");
    const reads = {} as Record<Table, TableRead>;
    let schemaReadable = !fromWal;
    let hermesTables = 0;
    let sourceVersion: number | undefined;
    let sourceSequence: Rowid = 0;
    let others: OtherTable[] = [];
    // Texts damaged in place, with the sound copy a search table keeps: the
    // new file's index is built from the text taken back, not from the damage.
    let damagedTexts: DamagedText[] = [];
    // Read as the read commands read: nothing changes, not even a -wal left behind. A file
    // another process holds whole is waited for, as backup and doctor wait: at the open, and at
    // every read after it (a writer of a rollback-journal file may take it between two reads).
    const wait: StoreRetryOptions = {
      timeoutMs: options.lockTimeoutMs,
      sleep: (ms) => abortableDelay(ms, options.signal),
    };
    let db: SqliteConnection | undefined;
    if (!fromWal) {
      const access = foreignWal !== null ? "immutable" : chooseWholeReadAccess(source);
      try {
        db = await retryWhileBusy(() => openUnlessHeld(openDriver, source, access), wait);
      } catch (error) {
        if (options.signal?.aborted && error === options.signal.reason) throw error;
        if (!unreadable(error)) throw sourceOpenError(source, error);
        schemaReadable = false;
      }
    }
    try {
      if (db !== undefined) {
        const open = db;
        hermesTables = await readWaitingOutLocks(() => {
          try {
            return Number(
              open.prepare(
                "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('sessions', 'messages')",
              ).get()?.n ?? 0,
            );
          } catch (error) {
            if (!unreadable(error)) throw sourceOpenError(source, error);
            schemaReadable = false;
            return 0;
          }
        }, wait);
      }
      if (db !== undefined && schemaReadable) {
        const open = db;
        if (hermesTables === 0) {
          throw new RecoverError(
            `Cannot recover ${source}: it is a SQLite database but not a Hermes state.db ` +
              "(no sessions or messages table)",
          );
        }
        sourceVersion = await readWaitingOutLocks(() => {
          try {
            return readSchemaVersion(open) ?? undefined;
          } catch (error) {
            if (!unreadable(error)) throw error;
            return undefined;
          }
        }, wait);
        sourceSequence = await readWaitingOutLocks(() => messageSequenceOf(open), wait);
      }
      for (const table of TABLES) {
        if (db === undefined || !schemaReadable) {
          reads[table] = unreadTable(table, columns[table]);
          continue;
        }
        const knownTop = table === "messages" ? sourceSequence : 0;
        // The rows on the file's pages are SQLite's own only when it reads no -wal with them.
        const onPages = walSize === 0 || foreignWal !== null ? found[table] : [];
        const reader = new TableReader(db, table, {
          raw: { min: minOf(found[table]), max: maxOf(found[table]) },
          knownTop,
          onPages,
          rows: spill.rowsOf(table),
        });
        reads[table] = await readWaitingOutLocks(() => reader.read(), wait);
        columns[table] = reads[table].columns;
      }
      if (db !== undefined && schemaReadable) {
        const open = db;
        others = await readWaitingOutLocks(() => readOtherTables(open), wait);
        damagedTexts = await readWaitingOutLocks(() => {
          try {
            return allTextDamagedInPlace(open, FTS_TABLES);
          } catch (error) {
            // A search table past reading holds no copy to take back.
            if (!unreadable(error)) throw error;
            return [];
          }
        }, wait);
      }
    } finally {
      db?.close();
    }

    // 3. Rows SQLite could not reach, from the pages (by column name: the page's layout may differ).
    const columnsOf = {
      sessions: reads.sessions.columns,
      messages: reads.messages.columns,
      state_meta: reads.state_meta.columns,
    };
    const ownColumns = {
      sessions: reads.sessions.readable,
      messages: reads.messages.readable,
      state_meta: reads.state_meta.readable,
    };
    const fromPages = { sessions: 0, messages: 0, state_meta: 0 };
    const foundOnPages = {
      sessions: new Set<Rowid>(),
      messages: new Set<Rowid>(),
      state_meta: new Set<Rowid>(),
    };
    const pageRows = {
      sessions: new Map<Rowid, Map<string, SqlValue>>(),
      messages: new Map<Rowid, Map<string, SqlValue>>(),
      state_meta: new Map<Rowid, Map<string, SqlValue>>(),
    };
    const pageRawTexts: Record<Table, DestTable["rawTexts"]> = {
      sessions: [],
      messages: [],
      state_meta: [],
    };
    const failedIds = new Map<Table, (id: Rowid) => boolean>();
    for (const table of TABLES) failedIds.set(table, failedIdTest(reads[table].failed));
    const fromPage = (record: RawRecord): void => {
      const matched = tableOf(record, columnsOf, ownColumns);
      if (matched === undefined) return;
      const { table } = matched;
      const read = reads[table];
      if (read.rows.has(record.rowid) || pageRows[table].has(record.rowid)) return;
      if (read.readable && !failedIds.get(table)!(record.rowid)) return;
      if (!agreesWithIndexes(read.witnesses, record.rowid, matched.layout, matched.values)) return;
      const row = rowOf(matched);
      if (table === "messages") row.set("id", record.rowid);
      pageRows[table].set(record.rowid, row);
      for (const [i, bytes] of record.rawTexts ?? []) {
        pageRawTexts[table].push({
          key: row.get(KEY_COLUMN[table]) ?? null,
          column: matched.layout[i],
          bytes,
        });
      }
      foundOnPages[table].add(record.rowid);
      fromPages[table]++;
    };
    // The pages again, only when SQLite missed rows: a sound file is not read twice.
    if (TABLES.some((table) => !reads[table].readable || reads[table].failed.length > 0)) {
      onStage("reading missed rows from pages");
      scanSource(fromPage);
    }
    if (!schemaReadable && fromPages.sessions + fromPages.messages === 0) {
      throw new RecoverError(
        `Cannot recover ${source}: ` +
          (fromWal
            ? "its -wal holds no committed session or message"
            : scan.headerIntact
            ? "no session or message could be read from its pages"
            : "it is not a SQLite database (no page of it holds a session or a message)"),
      );
    }
    // A table SQLite could not read at all: the ids up to the highest known
    // (found, or `sqlite_sequence`'s for messages) that no page gave are lost.
    const pageSequence = (sequence?.values[1] ?? 0) as Rowid;
    for (const table of TABLES) {
      const read = reads[table];
      if (read.readable) continue;
      const top = maxOf([maxOf(foundOnPages[table]), table === "messages" ? pageSequence : 0]);
      if (top > 0) read.failed.push([1, top]);
    }
    const lost = TABLES.flatMap((table) => lostRanges(table, reads[table], foundOnPages[table]));
    // Rows past the highest rowid known, on pages missing or unparsed, leave no trace.
    const everyPageRead = scan.missingPages === 0 && scan.unexplainedPages === 0 &&
      scan.brokenCells === 0;
    const lossUnknownIn = TABLES.filter((table) => {
      const read = reads[table];
      // Rows of damaged cells were left out and no index tells which rows there were.
      if (read.rejected > 0 && read.witnesses.indexes.length === 0) return true;
      if (read.readable && read.failed.length === 0) return false;
      const topKnown = read.topKnown || (table === "messages" && pageSequence !== 0);
      return !topKnown && !everyPageRead;
    });
    const lossUnknown = lossUnknownIn.length > 0;
    // The highest message id known to have existed: the new file's sequence starts past it.
    const messageTop = maxOf([
      sourceSequence,
      pageSequence,
      maxOf(lost.filter((range) => range.table === "messages").map((range) => range.to)),
    ]);
    await stopIfAborted(options.signal);

    // 4. The new file, written beside dest and renamed into place.
    onStage("writing the new file");
    removeStaleTemps(dest, ["recover"]);
    const temp = tempName(dest, "recover");
    removeWithSidecars(temp);
    try {
      const tables = {} as Record<Table, DestTable>;
      for (const table of TABLES) {
        // Columns the pages' layouts hold that the source's (or v11's) list lacks come last.
        const names = reads[table].columns.slice();
        const known = new Set(names);
        for (const row of pageRows[table].values()) {
          for (const name of row.keys()) {
            if (!known.has(name)) {
              known.add(name);
              names.push(name);
            }
          }
        }
        const fromPageRows = [...pageRows[table]]
          .map(([rowid, row]): [Rowid, SqlValue[]] => [rowid, names.map((n) => row.get(n) ?? null)])
          .sort((a, b) => byRowid(a[0], b[0]));
        const key = reads[table].columns.indexOf(KEY_COLUMN[table]);
        const rawTexts = [...reads[table].rawTexts].flatMap(([rowid, texts]) =>
          [...texts].map(([i, bytes]) => ({
            key: reads[table].rows.get(rowid)?.[key] ?? null,
            column: reads[table].columns[i],
            bytes,
          }))
        ).concat(pageRawTexts[table]);
        tables[table] = {
          columns: names,
          declarations: reads[table].declarations,
          rows: byRowidOf(reads[table].rows.ordered(), fromPageRows, names.length),
          rawTexts,
        };
      }
      const written = await writeDest(
        temp,
        openDriver,
        tables,
        { version: sourceVersion, messageTop, others, damagedTexts },
        onStage,
      ).catch((error) => {
        throw destOpenError(dest, temp, error);
      });
      await stopIfAborted(options.signal);
      const check = openDriver(temp, { readonly: true });
      let counts: [number, number, number];
      try {
        counts = [count(check, "sessions"), count(check, "messages"), count(check, "state_meta")];
      } finally {
        check.close();
      }
      if (options.force) {
        removeSidecars(dest);
        renameSync(temp, dest);
      } else if (!linkIntoPlace(temp, dest)) {
        // Checked at the start; a file that took the name meanwhile is not replaced either.
        throw new RecoverError(
          `Cannot recover into ${dest}: it exists (give --force to replace it)`,
        );
      }
      chmodSync(dest, 0o600);
      return {
        source,
        dest,
        sessions: counts[0],
        messages: counts[1],
        metaKeys: counts[2],
        fromPages,
        placeholderSessions: written.placeholders,
        clearedParents: written.clearedParents,
        otherTables: written.otherTables,
        clearedPrompts: written.clearedPrompts,
        lost,
        schemaReadable,
        lossUnknown,
        lossUnknownIn,
        missingPages: scan.missingPages,
        duplicates: written.duplicates,
        fromWal,
        foreignWal,
        walCommitsIgnored,
        walCommitsSalvaged: 0,
        walSalvageRefused,
        retitled: written.retitled,
        textsTakenBack: written.textsTakenBack,
        messageSequence: written.messageSequence,
      };
    } finally {
      removeWithSidecars(temp);
    }
  } finally {
    spill.remove();
  }
}

/**
 * Why the `-wal` beside `source` is left out (another database's, or one
 * that spoils a file sound alone), or `null`; what keeps SQLite from
 * reading the file at all is said in words naming it.
 */
function walLeftOutReason(source: string, openDriver: SqliteDriver): string | null {
  try {
    return foreignWalReason(source, openDriver) ?? spoilingWal(source, openDriver) ?? null;
  } catch (error) {
    if (unreadable(error)) throw error;
    throw sourceOpenError(source, error);
  }
}

/**
 * What opening the temporary file beside `dest` threw, said of `dest` (the
 * name the user gave): a folder this user may not write, a full disk.
 */
function destOpenError(dest: string, temp: string, error: unknown): unknown {
  if (!(error instanceof OpenError) || error.path !== temp) return error;
  return new RecoverError(
    `Cannot recover into ${dest}: ${openFailureReason(error.cause ?? error, temp, false)}`,
    { cause: error },
  );
}

/**
 * Runs `read` (a read of the source, which may be called again to go on
 * where it stopped); when it meets a lock another process holds, waits and
 * tries again, as `wait` says, counting from the lock met.
 */
function readWaitingOutLocks<T>(read: () => T, wait: StoreRetryOptions): Promise<T> {
  try {
    return Promise.resolve(read());
  } catch (error) {
    if (!isBusyError(error)) return Promise.reject(error);
  }
  return retryWhileBusy(read, wait);
}

/**
 * Opens the source as the read commands read (a rollback-journal file
 * read-only: a writer dying meanwhile leaves its journal) and reads its
 * schema once, so that a file another process holds whole fails as busy
 * here, where it is waited for, with nothing left open. Another failure of
 * that read is left for the reads that follow to report.
 */
function openUnlessHeld(
  openDriver: SqliteDriver,
  source: string,
  access: ReturnType<typeof chooseWholeReadAccess>,
): SqliteConnection {
  const db = openForReading(openDriver, source, access);
  try {
    // One try waits inside SQLite as long as openForReading sets (short: a signal waits for
    // the try); longer waits are readWaitingOutLocks's.
    db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
  } catch (error) {
    if (isBusyError(error)) {
      db.close();
      throw error;
    }
  }
  return db;
}

/**
 * What the first open or read of `source` threw when it is not damage
 * (SQLite's own words name neither the file nor the cause), in words: a
 * read-only folder whose `-wal` has no `-shm` beside it, a permission.
 */
function sourceOpenError(source: string, error: unknown): unknown {
  if (isBusyError(error)) return error;
  return new OpenError(source, openFailureReason(error, source, true), { cause: error });
}

function fileStat(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
