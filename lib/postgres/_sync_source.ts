/**
 * What a `sync` pass compares: the file's sessions (their rows, a
 * per-session message count, highest id and digest, the digest of their
 * messages' visibility columns in a newer Hermes's file, and their goals,
 * read in one snapshot) and what the server records of the origin's
 * sessions (`sync_sessions`).
 *
 * @module
 */
import { blobAsText, withBlobsAsText } from "../core/blob_text.ts";
import { realpathSync } from "node:fs";
import { OpenError } from "../core/errors.ts";
import type { Store } from "../sqlite/store.ts";
import type { PgClient } from "./_client_types.ts";
import { COUNTER_COLUMNS, SESSION_COLUMN_SET } from "./_rows.ts";
import { extraColumnsJson } from "./_extra.ts";
import {
  digestOf,
  MESSAGE_DIGEST_SQL,
  metaDigestOf,
  type SessionMetaEntry,
} from "./_sync_digest.ts";
import { SESSION_META_PREFIXES } from "../core/session_meta.ts";
import { NOTHING_HIDDEN, readShownDigests } from "./_sync_shown.ts";
import { readModelUsageDigests, unshippableUsage } from "./_sync_model_usage.ts";
import { modelUsageReader } from "../sqlite/session_model_usage.ts";
import type { SessionModelUsage } from "../core/session_model_usage.ts";
import {
  exactInteger,
  ExactRead,
  mayBeRounded,
  notAServerNumberSql,
  quote,
} from "./_sync_exact.ts";

/** A session of the file, as the pass read it. */
export interface SourceSession {
  /** Its row (the system prompt as its length, or its text when the pass writes the session). */
  row: Record<string, unknown>;
  /** The row's newer columns, as `extra_columns` takes them (`null` in a v11 file). */
  extra: string | null;
  /** {@linkcode digestOf} its row. */
  digest: string;
  /**
   * The digest of the whole row, its system prompt's text included, as
   * releases before 2026-12-02 recorded it; computed only when the prompt
   * was read (see {@linkcode sessionColumnsSql}).
   */
  fullDigest?: string;
  /** Its messages in the snapshot. */
  count: number;
  /** Its highest message id in the snapshot (0: none; a `bigint` beyond 2^53). */
  maxId: number | bigint;
  /** {@linkcode MESSAGE_DIGEST_SQL} of its messages. */
  messageDigest: number;
  /** The digest of its messages' newer columns (`ExtraDigests.all`); null in a v11 file. */
  extraDigest: string | null;
  /**
   * The digest of its messages' visibility columns (`_sync_shown.ts`), read
   * on every pass; `null` in a file without those columns.
   */
  shownDigest: string | null;
  /**
   * Its per-model usage rows (`_sync_model_usage.ts`), read for a session
   * the pass writes (their text is part of its row's digest); `undefined`
   * in a file without that table, and for a session not written.
   */
  usage?: readonly SessionModelUsage[];
  /** Its per-session `state_meta` keys (its goal), in prefix order. */
  meta: readonly SessionMetaEntry[];
  /** {@linkcode metaDigestOf} those keys (`null`: none). */
  metaDigest: string | null;
  /**
   * Why the server cannot hold the session as the file has it (text where a
   * number belongs: `started_at = 'yesterday'`); the pass leaves it out,
   * names it, and tries it again the next time. `undefined`: it can.
   */
  unshippable?: string;
}

/** What the server records of a session of the origin. */
export interface ServerSession {
  /** The row digest recorded. */
  digest: string;
  /** Messages the server holds. */
  count: number;
  /** The file's highest message id the server holds (a `bigint` beyond 2^53). */
  maxId: number | bigint;
  /** `null`: recorded by a release before migration 8 (written by the next pass). */
  messageDigest: number | null;
  /** The digest of the held messages' newer columns, or `null`. */
  extraDigest: string | null;
  /**
   * The digest of the held messages' visibility columns (`_sync_shown.ts`),
   * or `null`: not recorded (a file without them, or a release before it).
   */
  shownDigest: string | null;
  /** The digest of the per-session keys the server holds (`metaDigestOf`), or `null`: none. */
  metaDigest: string | null;
}

/**
 * What a pass reads of each session row: every column, but the system
 * prompt as its length in bytes. A gateway's prompts run to tens of
 * kilobytes a session, and reading and hashing them all on every pass cost
 * an unchanged pass over 5,000 such sessions 0.7 s; the text is read only
 * for the sessions a pass writes. The digest sees the length, so a prompt
 * rewritten in place to another length is shipped; one rewritten to the
 * same length is shipped with the session's next message or other change.
 * A session an earlier release recorded with the digest of its whole row
 * is recognized by it, and only its digest is written anew.
 */
function sessionColumnsSql(store: Store): string {
  return [...store.columns("sessions")].map((name) =>
    name === "system_prompt" ? "octet_length(system_prompt) AS system_prompt" : quote(name)
  ).join(", ");
}

/**
 * A session row's columns read again exactly by id (its system prompt
 * aside), for a row read with an integer a JS number may have rounded.
 */
function exactSessionRead(store: Store): ExactRead {
  const columns = [...store.columns("sessions")].filter((name) => name !== "system_prompt");
  return new ExactRead(store, columns, (list) => `SELECT ${list} FROM sessions WHERE id = ?`);
}

/**
 * A session's highest message id, exact: read again as its digits when
 * the number read is beyond 2^53 (where it may be rounded).
 */
function exactMaxId(store: Store, session: string, read: number): number | bigint {
  if (Number.isSafeInteger(read)) return read;
  const row = store.statement(
    "SELECT CAST(max(id) AS TEXT) AS max_id FROM messages WHERE session_id = ?",
  ).get(session);
  return exactInteger(row?.max_id ?? read);
}

/** The first string after every string that starts with `prefix` (its last character's next). */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/**
 * Reads the file's per-session keys, by session id, each session's in
 * prefix order. A range of the key's index per prefix: the file's other
 * keys are not read. A file without `state_meta` (an old one read as it
 * is) has none.
 *
 * @param store The file (in the caller's read transaction).
 * @returns The keys of each session that has any.
 */
function readSessionMeta(store: Store): Map<string, SessionMetaEntry[]> {
  const bySession = new Map<string, SessionMetaEntry[]>();
  if (!store.hasTable("state_meta")) return bySession;
  const range = store.statement(
    "SELECT key, value FROM state_meta WHERE key >= ? AND key < ? ORDER BY key",
  );
  for (const prefix of SESSION_META_PREFIXES) {
    for (const row of range.all(prefix, prefixEnd(prefix))) {
      const id = String(row.key).slice(prefix.length);
      const value = row.value === null ? null : String(row.value);
      const entries = bySession.get(id) ?? [];
      entries.push({ prefix, value });
      bySession.set(id, entries);
    }
  }
  return bySession;
}

/** The session columns the server keeps as numbers. */
const NUMBER_COLUMNS: readonly string[] = [
  "started_at",
  "ended_at",
  "estimated_cost_usd",
  "actual_cost_usd",
  ...COUNTER_COLUMNS,
];

/**
 * Why a session cannot reach the server as the file has it: a value a
 * numeric column of the server cannot hold (text, a BLOB; SQLite keeps
 * `'yesterday'` in a REAL column as text) or refuses (an infinite REAL), in
 * its row or, as `untimed` counts them, in its messages' timestamps. Such
 * a value failed the whole pass ("invalid input syntax for type numeric"),
 * or reached the server as NaN.
 */
function unshippableReason(row: Record<string, unknown>, untimed: number): string | undefined {
  for (const column of NUMBER_COLUMNS) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    if (typeof value === "number" ? Number.isFinite(value) : typeof value === "bigint") continue;
    return `its ${column} holds ${shownValue(value)}, where the server keeps a number`;
  }
  if (untimed > 0) {
    return `${untimed} of its messages hold${
      untimed === 1 ? "s" : ""
    } a timestamp that is not a number`;
  }
  return undefined;
}

/** A stored value as a reason names it: text quoted (cut at 40 characters), a BLOB by its size. */
function shownValue(value: unknown): string {
  if (value instanceof Uint8Array) return `a BLOB of ${value.length} bytes`;
  if (typeof value !== "string") return String(value);
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
}

/**
 * Reads the file's sessions, per-session message stats and per-session
 * `state_meta` keys (goals) in one read transaction, and, in the same one,
 * the system prompt of each session that is new to the server or changed
 * since (see {@linkcode sessionColumnsSql}).
 *
 * @param store The file.
 * @param server What the server records of the origin's sessions.
 * @returns The file's sessions by id.
 */
export function readSource(
  store: Store,
  server: ReadonlyMap<string, ServerSession>,
): Map<string, SourceSession> {
  const sessions = new Map<string, SourceSession>();
  store.db.exec("BEGIN");
  try {
    const stats = new Map<
      string,
      { n: number; max: number | bigint; digest: number; untimed: number }
    >();
    for (
      const row of store.statement(
        // The timestamp's type is read from the same index as the digest: no row is read.
        `SELECT session_id, count(*) AS n, max(id) AS max_id, ${MESSAGE_DIGEST_SQL} AS digest,
                coalesce(sum(${notAServerNumberSql("timestamp", false)}), 0) AS untimed
         FROM messages GROUP BY session_id`,
      ).all()
    ) {
      const id = String(row.session_id);
      stats.set(id, {
        n: Number(row.n),
        max: exactMaxId(store, id, Number(row.max_id)),
        digest: Number(row.digest),
        untimed: Number(row.untimed),
      });
    }
    const metaOf = readSessionMeta(store);
    const usageTexts = readModelUsageDigests(store);
    const usageOf = usageTexts === undefined ? undefined : modelUsageReader(store);
    const shownOf = readShownDigests(store);
    const promptOf = store.statement("SELECT system_prompt FROM sessions WHERE id = ?");
    const exactRow = exactSessionRead(store);
    for (const row of store.statement(`SELECT ${sessionColumnsSql(store)} FROM sessions`).all()) {
      const id = String(row.id);
      // A counter beyond 2^53 (rare): the row read again, its integers exact.
      if (mayBeRounded(row)) Object.assign(row, exactRow.get(id) ?? {});
      // A BLOB where text belongs (Python's sqlite3 stores `bytes` so) ships as its UTF-8 text:
      // written as it was read, it reached the server as "109,111,…".
      withBlobsAsText(row);
      const stat = stats.get(id);
      const extra = extraColumnsJson(row, SESSION_COLUMN_SET);
      const meta = metaOf.get(id) ?? [];
      const usage = usageTexts?.get(id) ?? null;
      const session: SourceSession = {
        row,
        extra,
        digest: digestOf(row, extra, usage),
        count: stat?.n ?? 0,
        maxId: stat?.max ?? 0,
        messageDigest: stat?.digest ?? 0,
        extraDigest: null,
        shownDigest: shownOf === undefined ? null : shownOf.get(id) ?? NOTHING_HIDDEN,
        meta,
        metaDigest: metaDigestOf(meta),
      };
      const unshippable = unshippableReason(row, stat?.untimed ?? 0);
      if (unshippable !== undefined) session.unshippable = unshippable;
      const changes = changesSince(session, server.get(id));
      const written = changes.row || changes.messages || changes.meta || changes.shown;
      if (written && usageOf !== undefined) {
        session.usage = usageOf(id);
        session.unshippable ??= unshippableUsage(session.usage);
      }
      if (row.system_prompt !== null && written) {
        row.system_prompt = blobAsText(promptOf.get(id)?.system_prompt ?? null);
        session.fullDigest = digestOf(row, extra, usage);
      }
      sessions.set(id, session);
    }
  } finally {
    store.db.exec("COMMIT");
  }
  return sessions;
}

/**
 * What of `session` differs from what the server holds (its row and
 * messages, for a session new to it; its keys when it has any).
 *
 * @param session The session in the file.
 * @param known What the server records of it, if anything.
 * @returns Whether its row, its messages, and its per-session keys changed,
 *   and whether the digest of its messages' visibility columns differs from
 *   the one recorded, or is not recorded (`shown`: in a file with those
 *   columns, for a session the server holds).
 */
export function changesSince(
  session: SourceSession,
  known: ServerSession | undefined,
): { row: boolean; messages: boolean; meta: boolean; shown: boolean } {
  const meta = session.metaDigest !== (known?.metaDigest ?? null);
  if (known === undefined) return { row: true, messages: true, meta, shown: false };
  return {
    row: known.digest !== session.digest,
    messages: known.count !== session.count || known.maxId !== session.maxId ||
      (known.messageDigest !== null && known.messageDigest !== session.messageDigest),
    meta,
    shown: session.shownDigest !== null && known.shownDigest !== session.shownDigest,
  };
}

/**
 * What the server records of the origin's sessions, by their ids in the file.
 *
 * @param client The server.
 * @param origin The origin.
 * @returns The records.
 */
export async function serverRecords(
  client: PgClient,
  origin: string,
): Promise<Map<string, ServerSession>> {
  const server = new Map<string, ServerSession>();
  for (
    const row of await client.query(
      `SELECT source_id, row_digest, message_count, max_message_id::text AS max_message_id,
         message_digest, extra_digest, shown_digest, meta_digest
       FROM sync_sessions WHERE origin = $1`,
      [origin],
    )
  ) {
    server.set(String(row.source_id), {
      digest: String(row.row_digest),
      count: Number(row.message_count),
      maxId: exactInteger(row.max_message_id),
      messageDigest: row.message_digest == null ? null : Number(row.message_digest),
      extraDigest: row.extra_digest == null ? null : String(row.extra_digest),
      shownDigest: row.shown_digest == null ? null : String(row.shown_digest),
      metaDigest: row.meta_digest == null ? null : String(row.meta_digest),
    });
  }
  return server;
}

/**
 * Whether a later read of {@linkcode serverRecords} found the records of
 * an earlier one but for some gone: none added, none changed. A record goes
 * with its session, which a delete or prune on the server may remove at
 * any time (the pass's writes find it gone: `_sync_write.ts`, `held`);
 * one added or changed was written by another pass.
 *
 * @param earlier The read the pass compared the file with.
 * @param later The read after the pass took its token.
 * @returns `true` when every record of `later` is in `earlier`, the same.
 */
export function keptRecords(
  earlier: ReadonlyMap<string, ServerSession>,
  later: ReadonlyMap<string, ServerSession>,
): boolean {
  if (later.size > earlier.size) return false;
  for (const [id, y] of later) {
    const x = earlier.get(id);
    if (
      x === undefined || x.digest !== y.digest || x.count !== y.count || x.maxId !== y.maxId ||
      x.messageDigest !== y.messageDigest || x.extraDigest !== y.extraDigest ||
      x.shownDigest !== y.shownDigest || x.metaDigest !== y.metaDigest
    ) return false;
  }
  return true;
}

/**
 * The file's real path; a file that is not there is the error a read-only open gives.
 *
 * @param path The file as given.
 * @returns Its real path.
 * @throws {OpenError} When there is no such file.
 */
export function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
    throw new OpenError(path, "no such file", { cause: error });
  }
}
