/**
 * The file's messages as a `sync` pass reads them: a session's new
 * messages whole when they fit the pass's byte budget, else a page at a
 * time (each within the budget but for a single message larger than it,
 * which is read whole), and the values the server stores of each, search
 * vectors included.
 *
 * Sizes come from SQLite's `octet_length`, which reads the length of a
 * text without its content, so sizing a session costs far less than
 * reading it.
 *
 * @module
 */
import { textOrNull } from "../core/blob_text.ts";
import type { Store } from "../sqlite/store.ts";
import { MESSAGE_COLUMN_SET, type MessageValues } from "./_rows.ts";
import { extraColumnsJson } from "./_extra.ts";
import { gramsVector, searchDocument, wordsVector } from "./text_search.ts";
import { ExtraDigester, type ExtraDigests, MESSAGE_DIGEST_SQL } from "./_sync_digest.ts";
import {
  ExactRead,
  notAServerNumberSql,
  quote,
  type SqlRow,
  type SqlValue,
} from "./_sync_exact.ts";

/**
 * What a row costs in memory besides its text (the row object, its values
 * array, the statement's parameters), in the budget's bytes.
 */
export const ROW_BYTES = 512;

/**
 * The v11 message columns left out of a row's size: short by nature (an
 * id, a time, a role…), within {@linkcode ROW_BYTES}. Summing the lengths
 * of the others only costs a pass of 200,000 messages 0.2 s.
 */
const SHORT_COLUMNS: ReadonlySet<string> = new Set([
  "id",
  "session_id",
  "role",
  "tool_call_id",
  "timestamp",
  "token_count",
  "finish_reason",
]);

/** Rows of newer columns read at once for a digest (a few small values each). */
const EXTRA_PAGE_ROWS = 20_000;

/**
 * What rows cost in the budget before they are read, from the size of
 * their text in the file: the text, the search vectors (about its size
 * again; see `text_search.ts`), and {@linkcode ROW_BYTES} a row.
 */
function estimatedBytes(textBytes: number, rows = 1): number {
  return rows * ROW_BYTES + 2 * textBytes;
}

/**
 * What a session's values cost in the budget: their text, vectors
 * included, and {@linkcode ROW_BYTES} a row.
 *
 * @param values The stored values of a row (a message's, or a session's).
 * @returns Its size in the budget's bytes.
 */
export function valuesBytes(values: Iterable<unknown>): number {
  let bytes = ROW_BYTES;
  for (const value of values) if (typeof value === "string") bytes += value.length;
  return bytes;
}

/** A value as text, `null` kept; a BLOB (Python's `bytes`) as its UTF-8 text, not "104,101,…". */
const text = textOrNull;

/**
 * A value as a number, `null` kept; an integer read exactly beyond 2^53 (a
 * `bigint`) as its digits, which the server's `numeric` keeps.
 */
function numberOrNull(value: unknown): number | string | null {
  if (value === null || value === undefined) return null;
  return typeof value === "bigint" ? String(value) : Number(value);
}

/**
 * The stored values of one raw message row of the file, ready for the server.
 *
 * @param row The row as the file gives it (`SELECT *`).
 * @returns Its values, in `INSERT_COLUMNS` order.
 */
export function storedValues(row: Record<string, unknown>): MessageValues {
  const content = text(row.content);
  const toolName = text(row.tool_name);
  const toolCalls = text(row.tool_calls);
  const doc = searchDocument(content, toolName, toolCalls);
  return [
    text(row.role) ?? "unknown",
    content,
    text(row.tool_call_id),
    toolCalls,
    toolName,
    Number(row.timestamp),
    numberOrNull(row.token_count),
    text(row.finish_reason),
    text(row.reasoning),
    text(row.reasoning_content),
    text(row.reasoning_details),
    text(row.codex_reasoning_items),
    text(row.codex_message_items),
    extraColumnsJson(row, MESSAGE_COLUMN_SET),
    wordsVector(doc),
    gramsVector(doc),
  ];
}

/**
 * Pages of raw rows as pages of stored values, each computed when pulled.
 *
 * @param pages Pages of rows as the file gives them.
 * @returns Their values, page by page.
 */
export function* storedPages(pages: Iterable<readonly SqlRow[]>): Generator<MessageValues[]> {
  for (const page of pages) yield page.map(storedValues);
}

/** A session's messages with ids in `(after, upTo]`: the range a pass ships. */
export interface MessageRange {
  /** The session's id in the file. */
  readonly session: string;
  /** The highest id the server holds already (0: none; a `bigint` beyond 2^53). */
  readonly after: number | bigint;
  /** The snapshot's highest id of the session. */
  readonly upTo: number | bigint;
}

/** Where a page of a session's messages starts: after this time and id. */
interface Keyset {
  readonly timestamp: SqlValue;
  readonly id: SqlValue;
}

/** Before every message (the file's timestamps are `REAL NOT NULL`). */
const START: Keyset = { timestamp: -Number.MAX_VALUE, id: -Number.MAX_VALUE };

/**
 * The statements a pass reads a file's messages with, prepared once.
 * Messages come in the order the server gives them ids: `timestamp, id`.
 */
export class FileMessages {
  readonly #store: Store;
  readonly #sql: { size: string; sizes: string };
  /** Reads of whole rows (`all`, a page): their integers beyond 2^53 exact. */
  readonly #read: { all: ExactRead; page: ExactRead };
  readonly #extraNames: readonly string[];
  /** The read of the newer columns' digests (made when first needed). */
  #extraRead?: ExactRead;

  /**
   * @param store The file, open for the pass.
   */
  constructor(store: Store) {
    this.#store = store;
    const columns = [...store.columns("messages")];
    const bytes = columns.filter((c) => !SHORT_COLUMNS.has(c))
      .map((c) => `coalesce(octet_length(${quote(c)}), 0)`).join(" + ");
    // The index `idx_messages_session (session_id, timestamp)` (ties by rowid) gives the order.
    const range = "session_id = ? AND id > ? AND id <= ?";
    const after = "timestamp >= ? AND (timestamp > ? OR id > ?)";
    this.#sql = {
      // With the messages whose token count the server's numeric column cannot hold (text, a
      // BLOB, an infinite REAL, which copy refuses): the rows are read for their sizes anyway.
      size: `SELECT count(*) AS n, coalesce(sum(${bytes}), 0) AS bytes,
        coalesce(sum(${notAServerNumberSql("token_count", true)}), 0) AS uncounted
        FROM messages WHERE ${range}`,
      sizes: `SELECT timestamp, id, ${bytes} AS bytes FROM messages
        WHERE ${range} AND ${after} ORDER BY timestamp, id LIMIT ?`,
    };
    this.#read = {
      all: new ExactRead(
        store,
        columns,
        (list) => `SELECT ${list} FROM messages WHERE ${range} ORDER BY timestamp, id`,
      ),
      page: new ExactRead(
        store,
        columns,
        (list) =>
          `SELECT ${list} FROM messages WHERE ${range} AND ${after}
          ORDER BY timestamp, id LIMIT ?`,
      ),
    };
    this.#extraNames = columns.filter((c) => !MESSAGE_COLUMN_SET.has(c));
  }

  /** Whether the file's messages have columns v11 lacks (a newer Hermes's file). */
  get hasNewerColumns(): boolean {
    return this.#extraNames.length > 0;
  }

  /**
   * What a range will cost in the budget once read, from the sizes of its
   * texts, and how many of its messages hold a token count that is not a
   * number (SQLite keeps text or a BLOB in an INTEGER column; the server's
   * numeric column cannot).
   *
   * @param range The messages.
   * @returns Their estimated size in the budget's bytes, and that count.
   */
  measure(range: MessageRange): { bytes: number; uncounted: number } {
    const row = this.#store.statement(this.#sql.size).get(range.session, range.after, range.upTo);
    return {
      bytes: estimatedBytes(Number(row?.bytes ?? 0), Number(row?.n ?? 0)),
      uncounted: Number(row?.uncounted ?? 0),
    };
  }

  /**
   * Every message of a range, read at once.
   *
   * @param range The messages.
   * @returns The rows, in time order.
   */
  all(range: MessageRange): SqlRow[] {
    return this.#read.all.all(range.session, range.after, range.upTo);
  }

  /**
   * The messages of a range a page at a time, in time order: each page as
   * many rows as fit in `budget` bytes ({@linkcode estimatedBytes}), at
   * least one, and `maxRows` at most. Read in a snapshot (see
   * {@linkcode FileMessages.snapshot}), the pages add up to what
   * {@linkcode FileMessages.all} returns.
   *
   * @param range The messages.
   * @param budget The bytes a page may take.
   * @param maxRows The rows a page may hold.
   * @returns The pages' rows.
   */
  *pages(range: MessageRange, budget: number, maxRows: number): Generator<SqlRow[]> {
    const { session, after, upTo } = range;
    const sizes = this.#store.statement(this.#sql.sizes);
    let from = START;
    for (;;) {
      const bounds = [session, after, upTo, from.timestamp, from.timestamp, from.id];
      const rows = sizes.all(...bounds, maxRows);
      if (rows.length === 0) return;
      let taken = 0;
      let bytes = 0;
      for (const row of rows) {
        bytes += estimatedBytes(Number(row.bytes));
        if (taken > 0 && bytes > budget) break;
        taken++;
      }
      const read = this.#read.page.all(...bounds, taken);
      if (read.length === 0) return;
      const last = read[read.length - 1];
      from = { timestamp: last.timestamp, id: last.id };
      yield read;
    }
  }

  /**
   * What the file holds of the messages the server holds of a session: ids
   * up to its last synced one.
   *
   * @param session The session's id in the file.
   * @param upTo The server's last synced id.
   * @returns Their count and digest ({@linkcode MESSAGE_DIGEST_SQL}).
   */
  held(session: string, upTo: number | bigint): { count: number; digest: number } {
    const row = this.#store.statement(
      `SELECT count(*) AS n, ${MESSAGE_DIGEST_SQL} AS digest
       FROM messages WHERE session_id = ? AND id <= ?`,
    ).get(session, upTo);
    return { count: Number(row?.n ?? 0), digest: Number(row?.digest ?? 0) };
  }

  /**
   * The digests of a session's messages' newer columns, read by pages in id
   * order (only the id and those columns; call only when
   * {@linkcode FileMessages.hasNewerColumns}).
   *
   * @param session The session's id in the file.
   * @param upTo The snapshot's highest id of the session.
   * @param heldUpTo The server's last synced id (0: none).
   * @returns Both digests.
   */
  extraDigests(
    session: string,
    upTo: number | bigint,
    heldUpTo: number | bigint,
  ): ExtraDigests {
    const read = this.#extraRead ??= new ExactRead(
      this.#store,
      ["id", ...this.#extraNames],
      (list) =>
        `SELECT ${list} FROM messages
        WHERE session_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ${EXTRA_PAGE_ROWS}`,
    );
    const digester = new ExtraDigester(heldUpTo);
    let after: SqlValue = -Number.MAX_VALUE;
    for (;;) {
      const rows = read.all(session, after, upTo);
      for (const row of rows) digester.add(row);
      if (rows.length < EXTRA_PAGE_ROWS) return digester.finish();
      after = rows[rows.length - 1].id;
    }
  }

  /**
   * Runs `fn`, its reads of the file in one snapshot when the file is in
   * WAL mode (as Hermes keeps it): a reader there never blocks Hermes's
   * writes. In another journal mode a held snapshot would, so each read is
   * its own; should Hermes rewrite the session meanwhile, the digests the
   * pass records (of the snapshot of counts) no longer match the file, and
   * the next pass writes the session again.
   *
   * @param fn Work that reads the file (and may wait on the server).
   * @returns What `fn` returns.
   */
  async snapshot<T>(fn: () => Promise<T>): Promise<T> {
    const mode = this.#store.statement("PRAGMA journal_mode").get()?.journal_mode;
    if (String(mode).toLowerCase() !== "wal") return await fn();
    this.#store.db.exec("BEGIN");
    try {
      return await fn();
    } finally {
      this.#store.db.exec("COMMIT");
    }
  }
}
