/**
 * `syncFile`: ships one host's `state.db` (which Python Hermes keeps
 * writing) to a central PostgreSQL store, incrementally.
 *
 * - Where from: each file is an *origin* on the server (`sync_origins`: a
 *   short name, the host and the file's real path). Its sessions are stored
 *   as `<origin>/<id>`, so two hosts' sessions with the same id never
 *   overwrite each other (`sync_origin.ts`: which origin a file is, and
 *   the check that refuses another file in its place); `sync_sessions`
 *   records, per synced session, its origin, its id in the file, a digest
 *   of its row, and how many messages (up to which message id, and a
 *   digest of their ids and times) the server holds.
 * - What a pass costs: one read of the file's session rows (their system
 *   prompts as a length: the text only of the sessions it writes) and of a
 *   per-session message count, highest id and digest (an index scan), one read of
 *   the origin's `sync_sessions`; then work only for what changed: a new or
 *   changed session row is upserted; new messages (ids above the last
 *   synced one, nothing missing or changed below) are appended; a transcript that lost
 *   or rewrote messages (`replaceMessages`, `clearMessages`) is rewritten; a
 *   session gone from the file (deleted, pruned) is deleted. Each session's
 *   changes are one transaction, fenced by the pass's token (a pass that
 *   lost its lock stops once another one writes).
 * - Titles: a title another origin's session already holds gets the suffix
 *   ` [<origin>]` (titles stay unique on the server).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { realpathSync } from "node:fs";
import { OpenError } from "../core/errors.ts";
import { WriteLanes } from "../core/write_lanes.ts";
import { SessionDB, storeOf } from "../sqlite/session_db.ts";
import type { Store } from "../sqlite/store.ts";
import {
  checkSchemaInUse,
  connectPg,
  isUniqueViolation,
  type PgClient,
  type PgQuery,
  type PgValue,
} from "./_client.ts";
import { parsePostgresUrl } from "./postgres_store.ts";
import { migratePg } from "./schema.ts";
import { deleteMessagesSql, deleteSessionRows } from "./_delete.ts";
import {
  COUNTER_COLUMNS,
  INSERT_COLUMNS,
  insertMessagesSql,
  MESSAGE_COLUMN_SET,
  type MessageValues,
  SESSION_COLUMN_NAMES,
  SESSION_COLUMN_SET,
  valuesList,
} from "./_rows.ts";
import { EXTRA_COLUMN, extraColumnsJson } from "./_extra.ts";
import { gramsVector, searchDocument, wordsVector } from "./text_search.ts";
import {
  checkPass,
  checkSameFile,
  moveOrigin,
  originExists,
  type ResolvedOrigin,
  resolveOrigin,
  startPass,
  syncLockName,
  SyncSupersededError,
  takePlace,
} from "./sync_origin.ts";
import { jsonParam } from "./_text_codec.ts";

export { SyncRefusedError, SyncSupersededError } from "./sync_origin.ts";

/** What one pass over one file did. */
export interface SyncResult {
  /** The origin name of the file on the server (the prefix of its session ids). */
  readonly origin: string;
  /** Sessions created on the server. */
  readonly created: number;
  /** Sessions whose row changed (ended, titled, token counts…). */
  readonly updated: number;
  /** Sessions deleted because the file no longer has them. */
  readonly deleted: number;
  /** Messages appended. */
  readonly appended: number;
  /** Sessions whose transcript was rewritten (messages removed or replaced in the file). */
  readonly rewritten: number;
  /** Messages written in all (appended and rewritten). */
  readonly messages: number;
}

/** The counts of a {@linkcode SyncResult} a batch adds to. */
const COUNTS = ["created", "updated", "appended", "rewritten", "messages"] as const;

/**
 * Whether a pass wrote anything to the server: a session created, updated
 * or deleted, or a message written.
 *
 * @param result What the pass did.
 * @returns `false` for a pass over an unchanged file.
 */
export function wroteAnything(result: Omit<SyncResult, "origin">): boolean {
  return result.deleted > 0 || COUNTS.some((key) => result[key] > 0);
}

/** Options of {@linkcode syncFile}. */
export interface SyncOptions {
  /**
   * The file's origin: registered now when new (by default a new file's is
   * named after the host); when taken, this file is that origin's come back
   * from another host or path (a re-created container), and the origin
   * moves to it once the file passes the check {@linkcode SyncOptions.force}
   * describes.
   */
  readonly origin?: string;
  /**
   * Ship the file even when it holds none of the sessions its origin has on
   * the server, replacing them (without it, such a pass throws
   * {@linkcode SyncRefusedError} and changes nothing: that is another
   * machine's file under the same host name and path, another file given a
   * taken origin, or a new file in the old one's place).
   * @default {false}
   */
  readonly force?: boolean;
  /** The host recorded for the file. @default {os.hostname()} */
  readonly host?: string;
  /** Called after each session written, with the running totals. */
  readonly onProgress?: (result: SyncResult) => void;
  /**
   * Called once the pass has read the file's sessions and message counts,
   * before it reads any message (tests use it to write in between); the
   * pass waits for the promise it returns.
   */
  readonly afterSnapshot?: () => void | Promise<void>;
}

/** Rows per multi-row INSERT. */
const CHUNK = 1000;
/** Messages (and sessions) written per transaction; a session is never split. */
const BATCH_MESSAGES = 2000;
/** Times a batch is tried when a title it chose was taken meanwhile. */
const TITLE_ATTEMPTS = 3;
/** Batches written at once, each in its own transaction on its own connection. */
const LANES = 3;
/** Seconds between the recorded times of passes that write nothing (see `syncFile`). */
const IDLE_PASS_RECORDED_EVERY = 60;
/** Sessions per transaction at most (each is one row of a multi-row upsert; 65,535 parameters a statement). */
const BATCH_SESSIONS = 1000;

interface SourceSession {
  row: Record<string, unknown>;
  /** The row's newer columns, as `extra_columns` takes them (`null` in a v11 file). */
  extra: string | null;
  digest: string;
  /**
   * The digest of the whole row, its system prompt's text included, as
   * releases before 2026-12-02 recorded it; computed only when the prompt
   * was read (see {@linkcode sessionColumnsSql}).
   */
  fullDigest?: string;
  count: number;
  maxId: number;
  /** {@linkcode MESSAGE_DIGEST_SQL} of its messages. */
  messageDigest: number;
  /** The digest of its messages' newer columns (see {@linkcode ExtraDigests}); null in a v11 file. */
  extraDigest: string | null;
}

interface ServerSession {
  digest: string;
  count: number;
  maxId: number;
  /** `null`: recorded by a release before migration 8 (written by the next pass). */
  messageDigest: number | null;
  extraDigest: string | null;
}

/** The modulus of {@linkcode MESSAGE_DIGEST_SQL}: a prime below 2^31. */
const DIGEST_MODULUS = 2147483647;

/**
 * A digest of a set of message rows from what the file's index
 * `idx_messages_session (session_id, timestamp)` holds (the id is its
 * rowid), so that it costs what a count does: a sum, exact and in any
 * order, of each row's id and timestamp (to the microsecond), mixed and
 * reduced. Count and highest id alone miss a transcript rewritten to the
 * same count and highest id (a backup restored and written on, whose new
 * messages take the ids of the lost ones; a clear and an append in a file
 * without `AUTOINCREMENT`); its new rows' times differ.
 */
const MESSAGE_DIGEST_SQL =
  `coalesce(sum((id * 1000003 + CAST(timestamp * 1000000 AS INTEGER)) % ${DIGEST_MODULUS}), 0)
   % ${DIGEST_MODULUS}`;

/**
 * Digests of a session's messages' newer columns (`active`, `compacted`…,
 * which a newer Hermes changes in place on a rewind or a compaction),
 * ordered by id: of those the server holds (ids up to its last synced one),
 * and of all of them up to the snapshot.
 */
interface ExtraDigests {
  readonly held: string;
  readonly all: string;
}

/** {@linkcode ExtraDigests} of one session's message rows, given in id order. */
function extraDigests(rows: Iterable<Record<string, unknown>>, heldUpTo: number): ExtraDigests {
  const hash = createHash("sha1");
  let held: string | undefined;
  for (const row of rows) {
    if (held === undefined && Number(row.id) > heldUpTo) held = hash.copy().digest("hex");
    hash.update(`${row.id} ${extraColumnsJson(row, MESSAGE_COLUMN_SET)}\n`);
  }
  const all = hash.digest("hex");
  return { held: held ?? all, all };
}

/**
 * A digest of a session row: its v11 columns, then (a newer Hermes's file)
 * the others, as `extra_columns` JSON. Exported for the test of the upgrade
 * from whole-row digests.
 *
 * @param row The row as the file gives it.
 * @param extra Its newer columns' JSON, or `null`.
 * @returns The hex digest.
 */
export function digestOf(row: Record<string, unknown>, extra: string | null): string {
  const values: unknown[] = SESSION_COLUMN_NAMES.map((c) => row[c] ?? null);
  if (extra !== null) values.push(extra);
  return createHash("sha1").update(JSON.stringify(values)).digest("hex");
}

function text(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** The stored values of one raw message row of the file, ready for the server. */
function storedValues(row: Record<string, unknown>): MessageValues {
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

/** Inserts messages of several sessions: `[sessionId, stored values]` pairs, in chunks. */
async function insertMessages(
  query: PgQuery,
  rows: readonly (readonly [string, MessageValues])[],
): Promise<void> {
  const columns = ["session_id", ...INSERT_COLUMNS];
  for (let at = 0; at < rows.length; at += CHUNK) {
    const chunk = rows.slice(at, at + CHUNK);
    const values = valuesList(chunk.map(([, row]) => row), 1);
    // Each tuple gets its session id in front; parameters after the values'.
    const ids = chunk.map(([id]) => id);
    const first = values.params.length + 1;
    let n = 0;
    const sql = values.sql.replace(/\(\$/g, () => `($${first + n++}::text, $`);
    await query(insertMessagesSql(columns, `VALUES ${sql}`), [...values.params, ...ids]);
  }
}

const SESSION_CASTS: Record<string, string> = {
  started_at: "double precision",
  ended_at: "double precision",
  estimated_cost_usd: "double precision",
  actual_cost_usd: "double precision",
};

function sessionValue(column: string, value: unknown): PgValue {
  if (value === null || value === undefined) return null;
  if (SESSION_CASTS[column] !== undefined || typeof value === "number") return Number(value);
  if (typeof value === "bigint") return String(value);
  return String(value);
}

/**
 * The titles a batch's sessions get on the server, by server id: the
 * file's, or suffixed with ` [<origin>]` where another session holds it,
 * or none when both are taken. One read for the whole batch; sessions are
 * settled in order, each seeing the titles the ones before it took.
 */
async function freeTitles(
  query: PgQuery,
  origin: string,
  sessions: readonly SourceSession[],
): Promise<Map<string, string | null>> {
  const wanted = sessions.map((session) => {
    const title = session.row.title;
    return {
      id: `${origin}/${session.row.id}`,
      candidates: typeof title === "string" && title !== "" ? [title, `${title} [${origin}]`] : [],
    };
  });
  const asked = wanted.flatMap((w) => w.candidates);
  const holder = new Map<string, string>();
  if (asked.length > 0) {
    const rows = await query(
      "SELECT id, title FROM sessions WHERE title IN (SELECT json_array_elements_text($1::text::json))",
      [jsonParam(asked)],
    );
    for (const row of rows) holder.set(String(row.title), String(row.id));
  }
  const titles = new Map<string, string | null>();
  for (const { id, candidates } of wanted) {
    const free = candidates.find((c) => (holder.get(c) ?? id) === id) ?? null;
    if (free !== null) holder.set(free, id);
    titles.set(id, free);
  }
  return titles;
}

/**
 * Gives back their file's title to the origin's sessions that carry it with
 * the origin's suffix ({@linkcode freeTitles}) where no session holds it
 * any more: one that gave it up in the same pass (a title handed from one
 * session to another on the host, or two swapped), or another origin's
 * since renamed or deleted. Each is its own statement, so a chain of
 * hand-overs settles in order; a title taken meanwhile by another pass is
 * left as it is (the unique index refuses it). Any pass of the origin
 * writes the same here: left unfenced, as the lineage.
 */
async function restoreTitles(
  client: PgClient,
  origin: string,
  source: ReadonlyMap<string, SourceSession>,
): Promise<void> {
  const suffix = ` [${origin}]`;
  const suffixed = await client.query(
    `SELECT s.id, s.title, ss.source_id FROM sessions s
     JOIN sync_sessions ss ON ss.session_id = s.id
     WHERE ss.origin = $1 AND right(s.title, $2) = $3`,
    [origin, suffix.length, suffix],
  );
  for (const row of suffixed) {
    const wanted = source.get(String(row.source_id))?.row.title;
    if (typeof wanted !== "string" || wanted === "" || row.title !== wanted + suffix) continue;
    try {
      await client.query(
        `UPDATE sessions SET title = $1
         WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM sessions t WHERE t.title = $1)`,
        [wanted, String(row.id)],
      );
    } catch (error) {
      if (!isUniqueViolation(error, "idx_sessions_title_unique")) throw error;
    }
  }
}

/** The session columns a sync writes (the parent is linked after the pass), a newer Hermes's last. */
const UPSERT_COLUMNS = [
  ...SESSION_COLUMN_NAMES.filter((c) => c !== "id" && c !== "parent_session_id"),
  EXTRA_COLUMN,
];
const UPSERT_CASTS = [
  "text",
  ...UPSERT_COLUMNS.map((c) =>
    SESSION_CASTS[c] ??
      (COUNTER_COLUMNS.includes(c) ? "numeric" : c === EXTRA_COLUMN ? "text::jsonb" : "text")
  ),
];

/** Inserts or updates a batch's session rows in one statement. */
async function upsertSessions(
  query: PgQuery,
  origin: string,
  sessions: readonly SourceSession[],
): Promise<void> {
  const titles = await freeTitles(query, origin, sessions);
  const rows = sessions.map((session) => {
    const id = `${origin}/${session.row.id}`;
    return [
      id,
      ...UPSERT_COLUMNS.map((column) =>
        column === "title"
          ? titles.get(id)!
          : column === EXTRA_COLUMN
          ? session.extra
          : sessionValue(column, session.row[column])
      ),
    ];
  });
  const { sql, params } = tuplesOf(rows, UPSERT_CASTS);
  await query(
    `INSERT INTO sessions (id, ${UPSERT_COLUMNS.join(", ")}) VALUES ${sql}
     ON CONFLICT (id) DO UPDATE SET ${
      UPSERT_COLUMNS.map((c) => `${c} = excluded.${c}`).join(", ")
    }`,
    params,
  );
}

const RECORD_CASTS = ["text", "text", "text", "text", "text", "bigint", "bigint", "bigint", "text"];

/** Records what the server now holds of a batch's sessions, in one statement. */
async function recordSessions(
  query: PgQuery,
  origin: string,
  sessions: readonly SourceSession[],
): Promise<void> {
  const rows = sessions.map((source) => [
    `${origin}/${source.row.id}`,
    origin,
    String(source.row.id),
    text(source.row.parent_session_id),
    source.digest,
    source.count,
    source.maxId,
    source.messageDigest,
    source.extraDigest,
  ]);
  const { sql, params } = tuplesOf(rows, RECORD_CASTS);
  await query(
    `INSERT INTO sync_sessions (session_id, origin, source_id, source_parent, row_digest,
       message_count, max_message_id, message_digest, extra_digest)
     VALUES ${sql}
     ON CONFLICT (session_id) DO UPDATE SET source_parent = excluded.source_parent,
       row_digest = excluded.row_digest, message_count = excluded.message_count,
       max_message_id = excluded.max_message_id, message_digest = excluded.message_digest,
       extra_digest = excluded.extra_digest`,
    params,
  );
}

/** `($1::cast, $2::cast, …), (…)` for rows of values, and the parameters in order. */
function tuplesOf(
  rows: readonly (readonly PgValue[])[],
  casts: readonly string[],
): { sql: string; params: PgValue[] } {
  const params: PgValue[] = [];
  const sql = rows.map((row) =>
    `(${row.map((value, i) => `$${params.push(value)}::${casts[i]}`).join(", ")})`
  ).join(", ");
  return { sql, params };
}

/** One session of a batch: its row, whether its messages are appended (or replace the server's), and the rows. */
interface BatchItem {
  session: SourceSession;
  append: boolean;
  rows: MessageValues[];
}

/**
 * A pass: its origin, and its token ({@linkcode startPass}), which each of
 * its writing transactions checks; `fence` takes the token, before the
 * pass's first write.
 */
interface Pass {
  readonly origin: string;
  token?: bigint;
  fence(): Promise<void>;
}

/** Runs `fn` in a transaction of the pass, once no other pass of the origin has started since. */
function passTransaction<T>(
  client: PgClient,
  pass: Pass,
  fn: (query: PgQuery) => Promise<T>,
): Promise<T> {
  return pass.fence().then(() =>
    client.transaction(async (query) => {
      await checkPass(query, pass.origin, pass.token!);
      return await fn(query);
    })
  );
}

/** Writes one batch of sessions in one transaction: rows, messages, then what the server now holds. */
async function writeBatch(
  client: PgClient,
  pass: Pass,
  items: readonly BatchItem[],
): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      return await writeBatchOnce(client, pass, items);
    } catch (error) {
      // A batch in flight beside this one (or another host's sync) took a title this one chose,
      // and this one waited for it to commit: choose again, seeing it.
      if (attempt < TITLE_ATTEMPTS && isUniqueViolation(error, "idx_sessions_title_unique")) {
        continue;
      }
      throw error;
    }
  }
}

function writeBatchOnce(
  client: PgClient,
  pass: Pass,
  items: readonly BatchItem[],
): Promise<void> {
  const { origin } = pass;
  return passTransaction(client, pass, async (query) => {
    // A few statements per batch, not a few per session: while the batch is in flight the
    // client computes the next one, and each round trip waits for its turn of the event loop.
    const sessions = items.map((item) => item.session);
    await upsertSessions(query, origin, sessions);
    const inserts: [string, MessageValues][] = [];
    const rewrite: string[] = [];
    for (const item of items) {
      const target = `${origin}/${item.session.row.id}`;
      if (!item.append) rewrite.push(target);
      for (const values of item.rows) inserts.push([target, values]);
    }
    if (rewrite.length > 0) {
      await query(
        deleteMessagesSql("session_id IN (SELECT json_array_elements_text($1::text::json))"),
        [jsonParam(rewrite)],
      );
    }
    await insertMessages(query, inserts);
    await recordSessions(query, origin, sessions);
  });
}

/**
 * Connects to the server a sync writes to and runs its migrations (the
 * store's tables and the sync tables).
 *
 * @param url `postgres://…?schema=NAME`.
 * @returns The pool; close it when done.
 * @throws {OpenError} When the server cannot be reached.
 */
export async function connectSyncTarget(url: string): Promise<PgClient> {
  const { url: server, schema } = parsePostgresUrl(url);
  const client = await connectPg(server, schema, {}, url);
  try {
    await migratePg(client, schema);
    await checkSchemaInUse(client, schema);
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
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
    name === "system_prompt"
      ? "octet_length(system_prompt) AS system_prompt"
      : `"${name.replaceAll('"', '""')}"`
  ).join(", ");
}

/**
 * Reads the file's sessions and per-session message stats in one read
 * transaction, and, in the same one, the system prompt of each session
 * that is new to the server or changed since (see {@linkcode sessionColumnsSql}).
 */
function readSource(
  store: Store,
  server: ReadonlyMap<string, ServerSession>,
): Map<string, SourceSession> {
  const sessions = new Map<string, SourceSession>();
  store.db.exec("BEGIN");
  try {
    const stats = new Map<string, { n: number; max: number; digest: number }>();
    for (
      const row of store.statement(
        `SELECT session_id, count(*) AS n, max(id) AS max_id, ${MESSAGE_DIGEST_SQL} AS digest
         FROM messages GROUP BY session_id`,
      ).all()
    ) {
      stats.set(String(row.session_id), {
        n: Number(row.n),
        max: Number(row.max_id),
        digest: Number(row.digest),
      });
    }
    const promptOf = store.statement("SELECT system_prompt FROM sessions WHERE id = ?");
    for (const row of store.statement(`SELECT ${sessionColumnsSql(store)} FROM sessions`).all()) {
      const id = String(row.id);
      const stat = stats.get(id);
      const extra = extraColumnsJson(row, SESSION_COLUMN_SET);
      const session: SourceSession = {
        row,
        extra,
        digest: digestOf(row, extra),
        count: stat?.n ?? 0,
        maxId: stat?.max ?? 0,
        messageDigest: stat?.digest ?? 0,
        extraDigest: null,
      };
      const changes = changesSince(session, server.get(id));
      if (row.system_prompt !== null && (changes.row || changes.messages)) {
        row.system_prompt = promptOf.get(id)?.system_prompt ?? null;
        session.fullDigest = digestOf(row, extra);
      }
      sessions.set(id, session);
    }
  } finally {
    store.db.exec("COMMIT");
  }
  return sessions;
}

/** What of `session` differs from what the server holds (both, for a session new to it). */
function changesSince(
  session: SourceSession,
  known: ServerSession | undefined,
): { row: boolean; messages: boolean } {
  if (known === undefined) return { row: true, messages: true };
  return {
    row: known.digest !== session.digest,
    messages: known.count !== session.count || known.maxId !== session.maxId ||
      (known.messageDigest !== null && known.messageDigest !== session.messageDigest),
  };
}

/** What the server records of the origin's sessions, by their ids in the file. */
async function serverRecords(
  client: PgClient,
  origin: string,
): Promise<Map<string, ServerSession>> {
  const server = new Map<string, ServerSession>();
  for (
    const row of await client.query(
      `SELECT source_id, row_digest, message_count, max_message_id, message_digest, extra_digest
       FROM sync_sessions WHERE origin = $1`,
      [origin],
    )
  ) {
    server.set(String(row.source_id), {
      digest: String(row.row_digest),
      count: Number(row.message_count),
      maxId: Number(row.max_message_id),
      messageDigest: row.message_digest == null ? null : Number(row.message_digest),
      extraDigest: row.extra_digest == null ? null : String(row.extra_digest),
    });
  }
  return server;
}

/** Whether two reads of {@linkcode serverRecords} found the same records. */
function sameRecords(
  a: ReadonlyMap<string, ServerSession>,
  b: ReadonlyMap<string, ServerSession>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [id, x] of a) {
    const y = b.get(id);
    if (
      y === undefined || x.digest !== y.digest || x.count !== y.count || x.maxId !== y.maxId ||
      x.messageDigest !== y.messageDigest || x.extraDigest !== y.extraDigest
    ) return false;
  }
  return true;
}

/** The file's real path; a file that is not there is the error a read-only open gives. */
function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
    throw new OpenError(path, "no such file", { cause: error });
  }
}

/**
 * One incremental pass of `path` into the server behind `client`.
 *
 * @param client The server's pool (schema migrated).
 * @param path The state.db file (opened read-only; never changed).
 * @param options Origin name, host, progress.
 * @returns What the pass did.
 * @throws {OpenError} When the file cannot be opened.
 * @throws {SyncRefusedError} When the file holds none of the sessions its
 *   origin has on the server (see {@linkcode SyncOptions.force}), or
 *   `options.origin` names another origin than the one this host and path
 *   are registered under.
 */
/** The session ids a file holds, read apart (only when its place is another origin's). */
async function fileSessionIds(path: string): Promise<ReadonlySet<string>> {
  const db = await SessionDB.open({ path, readonly: true });
  try {
    const rows = storeOf(db).statement("SELECT id FROM sessions").all();
    return new Set(rows.map((row) => String(row.id)));
  } finally {
    db.close();
  }
}

export async function syncFile(
  client: PgClient,
  path: string,
  options: SyncOptions = {},
): Promise<SyncResult> {
  const host = options.host ?? hostname();
  const real = realPathOf(path);
  let resolved: ResolvedOrigin;
  let unlock: () => Promise<void>;
  for (;;) {
    resolved = await resolveOrigin(client, host, real, options.origin, () => fileSessionIds(path));
    // One pass per origin at a time: a second one waits, then finds what the first wrote.
    unlock = await client.lock(syncLockName(resolved.name));
    // Removed (`origins --remove`) while this pass waited for the lock: register the file again.
    // (One that takes another's place is registered once its file is checked.)
    const registers = resolved.replaces !== undefined && resolved.movedFrom === undefined;
    if (registers || await originExists(client, resolved.name)) break;
    await unlock();
  }
  const origin = resolved.name;
  let db: SessionDB;
  try {
    db = await SessionDB.open({ path, readonly: true });
  } catch (error) {
    await unlock();
    throw error;
  }
  const totals = {
    origin,
    created: 0,
    updated: 0,
    deleted: 0,
    appended: 0,
    rewritten: 0,
    messages: 0,
  };
  /** What the batches handed to the pipeline so far wrote, and what the committed ones did. */
  let submitted = { ...totals };
  const committed = { ...totals };
  // Batches may commit in any order: each holds whole sessions, their rows, messages and
  // `sync_sessions` records together, and parents are linked after the last one (on two cores,
  // 7,700 → 11,400 messages/s for a new 200,000-message file with three lanes instead of one).
  const pipeline = new WriteLanes(LANES);
  let finished = false;
  try {
    const store = storeOf(db);
    const server = await serverRecords(client, origin);
    // Should the lock be lost with its connection (a network blip, a terminated backend),
    // another pass may start while this one writes, from records this one is changing: each
    // message would be shipped twice. So before its first write a pass takes a new token of
    // the origin, and each of its transactions checks it. Taking it waits for the transactions
    // of an earlier pass in flight, and fails this pass when the records changed since it read
    // them; an earlier pass's transactions after it fail. (A pass that writes nothing takes
    // none: a write would move the store's change marker, waking every live page.)
    let fenced: Promise<void> | undefined;
    const pass: Pass = {
      origin,
      fence: () =>
        fenced ??= (async () => {
          const token = await startPass(client, origin);
          if (token === undefined || !sameRecords(server, await serverRecords(client, origin))) {
            throw new SyncSupersededError(origin);
          }
          pass.token = token;
        })(),
    };
    const source = readSource(store, server);
    await options.afterSnapshot?.();
    if (!options.force) {
      const shared = [...server.keys()].filter((id) => source.has(id)).length;
      checkSameFile(
        { name: origin, place: resolved.movedFrom ?? { host, path: real }, held: server.size },
        shared,
      );
    }
    if (resolved.replaces !== undefined) {
      await takePlace(client, origin, resolved.replaces, { host, path: real }, new Date());
    } else if (resolved.movedFrom) await moveOrigin(client, origin, { host, path: real });
    // Messages are read after the snapshot of counts: only ids up to the snapshot's highest,
    // so one written in between is left for the next pass instead of shipped twice.
    const messagesAfter = store.statement(
      "SELECT * FROM messages WHERE session_id = ? AND id > ? AND id <= ? ORDER BY timestamp, id",
    );
    // What the file holds of the messages the server holds (ids up to its last synced one).
    const heldUpTo = store.statement(
      `SELECT count(*) AS n, ${MESSAGE_DIGEST_SQL} AS digest
       FROM messages WHERE session_id = ? AND id <= ?`,
    );
    // A newer Hermes's file: the columns its rewinds and compactions change in place.
    const extraNames = [...store.columns("messages")].filter((c) => !MESSAGE_COLUMN_SET.has(c));
    const extrasUpTo = extraNames.length === 0 ? undefined : store.statement(
      `SELECT id, ${extraNames.map((c) => `"${c.replaceAll('"', '""')}"`).join(", ")}
       FROM messages WHERE session_id = ? AND id <= ? ORDER BY id`,
    );
    /** Sessions to write in the next transaction, with the messages to insert. */
    // Search vectors are computed here, outside the transaction, so it holds its locks briefly;
    // and while batches are in flight (up to LANES, in WriteLanes) the next one is read and
    // computed.
    let batch: BatchItem[] = [];
    let batched = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const items = batch;
      batch = [];
      batched = 0;
      // Batches commit in any order: progress adds up what each committed one wrote.
      const written = COUNTS.map((key) => totals[key] - submitted[key]);
      submitted = { ...totals };
      await pipeline.submit(async () => {
        await writeBatch(client, pass, items);
        COUNTS.forEach((key, i) => committed[key] += written[i]);
        options.onProgress?.({ ...committed });
      });
    };
    /** Unchanged sessions an earlier release recorded with the whole row's digest. */
    const redigested: { digest: string; id: string }[] = [];
    /**
     * Sessions whose messages are unchanged, recorded before migration 8 without a message
     * digest: it is recorded now, and nothing shipped.
     */
    const undigested: { digest: number; id: string }[] = [];
    for (const [id, session] of source) {
      const known = server.get(id);
      const { row: rowChanged, messages: messagesChanged } = changesSince(session, known);
      if (!messagesChanged && known !== undefined && known.messageDigest === null) {
        undigested.push({ digest: session.messageDigest, id: `${origin}/${id}` });
      }
      if (!rowChanged && !messagesChanged) continue;
      if (!messagesChanged && known?.digest === session.fullDigest) {
        redigested.push({ digest: session.digest, id: `${origin}/${id}` });
        continue;
      }
      let append = known !== undefined && session.maxId >= known.maxId &&
        session.count >= known.count;
      if (append && messagesChanged) {
        // Appended to, when what the server holds is still in the file as it was.
        const held = heldUpTo.get(id, known!.maxId);
        append = Number(held?.n ?? 0) === known!.count &&
          (known!.messageDigest === null || Number(held?.digest ?? 0) === known!.messageDigest);
      }
      // New sessions have nothing to keep: their messages are all "appended" to nothing.
      if (known === undefined) append = true;
      // Rows the server holds that changed in place (a rewind, a compaction): all rewritten.
      let rewriteAll = false;
      if (extrasUpTo !== undefined && known !== undefined) {
        const digests = extraDigests(extrasUpTo.all(id, session.maxId), known.maxId);
        rewriteAll = digests.held !== known.extraDigest;
        session.extraDigest = digests.all;
      }
      if (rewriteAll) append = false;
      const written = messagesChanged || rewriteAll;
      const raw = !written
        ? []
        : messagesAfter.all(id, append && known ? known.maxId : 0, session.maxId);
      if (extrasUpTo !== undefined && known === undefined) {
        // A new session: its digest from the rows just read (in time order; the digest's is id).
        const byId = [...raw].sort((a, b) => Number(a.id) - Number(b.id));
        session.extraDigest = extraDigests(byId, 0).all;
      }
      const rows = raw.map(storedValues);
      // New to the records: whatever the server holds under its id (a session copied there
      // without them) is replaced, never added to.
      batch.push({ session, append: (append && known !== undefined) || !written, rows });
      batched += rows.length + 1;
      if (known === undefined) totals.created++;
      else if (rowChanged) totals.updated++;
      if (written) {
        if (known !== undefined && append) totals.appended += rows.length;
        else if (known !== undefined) totals.rewritten++;
        totals.messages += rows.length;
      }
      if (batched >= BATCH_MESSAGES || batch.length >= BATCH_SESSIONS) await flush();
      else await pipeline.yieldToIo();
    }
    await flush();
    await pipeline.drain();
    if (redigested.length > 0 || undigested.length > 0) {
      await passTransaction(client, pass, async (query) => {
        await query(
          `UPDATE sync_sessions s SET row_digest = d.digest
           FROM json_to_recordset($1::text::json) AS d(digest text, id text)
           WHERE s.session_id = d.id`,
          [jsonParam(redigested)],
        );
        await query(
          `UPDATE sync_sessions s SET message_digest = d.digest
           FROM json_to_recordset($1::text::json) AS d(digest bigint, id text)
           WHERE s.session_id = d.id AND s.message_digest IS NULL`,
          [jsonParam(undigested)],
        );
      });
    }
    const gone = [...server.keys()].filter((id) => !source.has(id)).map((id) => `${origin}/${id}`);
    if (gone.length > 0) {
      await passTransaction(client, pass, (query) => deleteSessionRows(query, gone));
      totals.deleted = gone.length;
    }
    // A pass that wrote nothing records its time only once a minute: each write moves the
    // store's change marker, which would wake every live page every few seconds per host. (A
    // time ahead of this host's clock, from another host or a clock set back, is replaced.)
    const wrote = redigested.length > 0 || undigested.length > 0 || wroteAnything(totals);
    // Lineage within the origin: each session's parent, when the server has it (what any pass
    // of the origin writes here is the same: left unfenced).
    await client.query(
      `UPDATE sessions s SET parent_session_id = p.id
       FROM sync_sessions ss LEFT JOIN sessions p ON p.id = ss.origin || '/' || ss.source_parent
       WHERE ss.origin = $1 AND s.id = ss.session_id
         AND s.parent_session_id IS DISTINCT FROM p.id`,
      [origin],
    );
    if (totals.created + totals.updated + totals.deleted > 0) {
      await restoreTitles(client, origin, source);
    }
    await client.query(
      `UPDATE sync_origins SET last_pass_at = $1::double precision
       WHERE origin = $2
         AND ($3::boolean OR last_pass_at IS NULL OR last_pass_at > $1::double precision
              OR last_pass_at <= $1::double precision - $4)`,
      [Date.now() / 1000, origin, wrote, IDLE_PASS_RECORDED_EVERY],
    );
    finished = true;
  } finally {
    // A write still in flight (the pass failed while preparing the next batch) ends first.
    await pipeline.drain().catch(() => {});
    db.close();
    // A lock lost with its connection fails its release: said, unless the pass failed already
    // (its own error says more).
    await unlock().catch((error) => {
      if (finished) throw error;
    });
  }
  return totals;
}
