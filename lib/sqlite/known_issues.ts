/**
 * Integrity reports that are a known, harmless condition rather than
 * damage, shared by `info` (which names the condition and its fix instead
 * of calling the file corrupt) and `doctor` (which reports it as a warning
 * and mends it).
 *
 * The one known today: SQLite up to 3.40 indexed a text holding U+0000 only
 * up to that character in the trigram table, and a newer SQLite's check then
 * calls that index malformed (README, "Known limitations"); search is
 * unaffected, and rebuilding the index repairs it. A newer SQLite also
 * removes such a message by its whole text, and once the index's totals
 * cannot cover the difference, FTS5 fails the delete as a malformed file:
 * {@linkcode trigramNulWriteError} names that cause and the fix instead.
 *
 * @module
 */
import type { SqliteConnection } from "./driver/types.ts";
import { indexedTextSql } from "./schema/schema_sql.ts";
import { ROWID_PARAM } from "./search/fts_rowid.ts";
import type { KnownIssue } from "../core/database_info.ts";
import { quotePhrase } from "../core/search/condition.ts";
import { StorageError } from "../core/storage_error.ts";
import { shellWord } from "../core/shell_word.ts";
import { SQLITE, SqliteError } from "./driver/sqlite_error.ts";
import { hasTriggers } from "./fts_stale.ts";

/** What FTS5's check says about the trigram index written by SQLite 3.40 around NUL characters. */
const TRIGRAM_LINE = "malformed inverted index for FTS5 table main.messages_fts_trigram";

/** Messages with U+0000 probed at most (each probe is one trigram query). */
const NUL_PROBES = 500;

/** Messages whose indexed text holds U+0000 (read as bytes: a driver may cut strings at NUL). */
function nulMessageIds(db: SqliteConnection): number[] {
  return db.prepare(
    `SELECT id FROM messages WHERE instr(CAST(${indexedTextSql("messages")} AS BLOB), x'00') > 0`,
  ).all().map((row) => Number(row.id));
}

/** The indexed text of a message, decoded from its bytes. */
function indexedText(db: SqliteConnection, id: number): string {
  const row = db.prepare(
    `SELECT CAST(${indexedTextSql("m")} AS BLOB) AS text FROM messages m WHERE m.id = ?`,
  ).get(id);
  const bytes = row?.text;
  return bytes instanceof Uint8Array ? new TextDecoder().decode(bytes) : String(bytes ?? "");
}

/**
 * True when the trigram index of message `id` stops at its first U+0000, as
 * SQLite 3.40 wrote it: three characters after the NUL (not found before
 * it) do not find the row. `undefined` when no such probe exists.
 */
function indexedOnlyUpToNul(db: SqliteConnection, id: number): boolean | undefined {
  const text = indexedText(db, id);
  const cut = text.indexOf("\u0000");
  const head = text.slice(0, cut).toLowerCase();
  const tail = [...text.slice(cut + 1)];
  for (let i = 0; i + 3 <= tail.length; i++) {
    const probe = tail.slice(i, i + 3).join("");
    if (probe.includes("\u0000") || head.includes(probe.toLowerCase())) continue;
    // The rowid as an INTEGER: with a REAL, FTS5 would answer every match (fts_rowid.ts).
    const hit = db.prepare(
      `SELECT 1 AS one FROM messages_fts_trigram WHERE messages_fts_trigram MATCH ?
       AND rowid = ${ROWID_PARAM}`,
    ).get(quotePhrase(probe), id);
    return hit === undefined;
  }
  return undefined;
}

/**
 * Whether the trigram index shows the SQLite 3.40 condition: messages with
 * U+0000 exist, and (probing up to 500 of them) the index of one stops at
 * its NUL.
 *
 * @param db The connection.
 * @returns The number of messages with U+0000, or `undefined` when the
 * condition does not explain the index.
 */
export function trigramNulCondition(db: SqliteConnection): { rows: number } | undefined {
  const ids = nulMessageIds(db);
  if (ids.length === 0) return undefined;
  // One row indexed only up to its NUL explains the report; rows a newer SQLite
  // indexed whole (after a rebuild, say) sit beside them harmlessly.
  const step = Math.max(1, Math.ceil(ids.length / NUL_PROBES));
  for (let i = 0; i < ids.length; i += step) {
    if (indexedOnlyUpToNul(db, ids[i]) === true) return { rows: ids.length };
  }
  return undefined;
}

/**
 * The error to report for a write that SQLite failed as a malformed file
 * (`SQLITE_CORRUPT`, from FTS5 or not) that no damaged full-text table
 * explains (`fts_stale.ts` probes them first) when the trigram index, its triggers in place,
 * shows the SQLite 3.40 condition: a delete (or a replace) of a message that
 * index holds only up to its NUL fails so, whatever else the file holds.
 * The failed write was rolled back; the connection is read again here.
 *
 * @param db The connection, outside any transaction.
 * @param error What the write threw.
 * @param path The database path, for the command that mends it.
 * @returns The error naming the condition and `doctor --fix`, with `error`
 *   as its cause; `undefined` when `error` is another failure or the
 *   condition is not there (or cannot be read).
 */
export function trigramNulWriteError(
  db: SqliteConnection,
  error: unknown,
  path: string,
): StorageError | undefined {
  if (!(error instanceof SqliteError) || error.code !== SQLITE.CORRUPT) return undefined;
  let condition: { rows: number } | undefined;
  let version: unknown;
  try {
    condition = hasTriggers(db, "messages_fts_trigram") ? trigramNulCondition(db) : undefined;
    version = db.prepare("SELECT sqlite_version() AS v").get()?.v;
  } catch {
    return undefined;
  }
  if (condition === undefined) return undefined;
  const n = condition.rows;
  return new StorageError(
    "Cannot write: the trigram search index (messages_fts_trigram) was written by SQLite 3.40 " +
      `or older, which indexed ${n} message${n === 1 ? "" : "s"} holding a NUL character only ` +
      `up to it, and SQLite ${version} cannot remove such a message from it; nothing was ` +
      `changed. Rebuild that index with "hermes-state --db ${shellWord(path)} doctor --fix" ` +
      "(writers may keep running), then try again; should it fail again, the file is damaged " +
      "otherwise, which doctor names",
    "other",
    { cause: error },
  );
}

/**
 * Splits the lines of `PRAGMA quick_check` into known conditions and the
 * rest.
 *
 * @param db The connection.
 * @param lines The check's lines (not `["ok"]`).
 * @returns The known issues, and the lines they do not explain.
 */
export function explainIntegrity(
  db: SqliteConnection,
  lines: readonly string[],
): { issues: KnownIssue[]; unexplained: string[] } {
  const trigram = lines.filter((line) => line === TRIGRAM_LINE);
  const unexplained = lines.filter((line) => line !== TRIGRAM_LINE);
  if (trigram.length === 0) return { issues: [], unexplained };
  const condition = trigramNulCondition(db);
  if (condition === undefined) return { issues: [], unexplained: [...lines] };
  const n = condition.rows;
  return {
    issues: [{
      code: "trigram_nul_prefix",
      message: `the trigram index was written by SQLite 3.40 or older, which indexed ${n} ` +
        `message${n === 1 ? "" : "s"} holding a NUL character only up to it; ` +
        "search is unaffected, but deleting them may fail, and other damage of that index would not show, until it is rebuilt",
      fix: "hermes-state doctor --fix",
      lines: trigram,
    }],
    unexplained,
  };
}
