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
 *   of its row, how many messages (up to which message id, and a digest of
 *   their ids and times) the server holds, digests of their newer columns
 *   (a newer Hermes's file: all of them, and the visibility ones), and a
 *   digest of its goal.
 * - Goals: a session's per-session `state_meta` keys (Python Hermes's
 *   `goal:<id>`) go with it, as `goal:<origin>/<id>`, in its transaction;
 *   changed or removed on the host, or its session gone, they are written
 *   or removed on the server (`_sync_meta.ts`). The file's other keys stay.
 * - What a pass costs: one read of the file's session rows (their system
 *   prompts as a length: the text only of the sessions it writes) and of a
 *   per-session message count, highest id and digest (an index scan), of
 *   its goal keys (an index range), in a newer Hermes's file of the rows
 *   its visibility columns hide or mark (`active`, `compacted`,
 *   `display_kind`: a scan of the messages' table, `_sync_shown.ts`), one
 *   read of the origin's `sync_sessions`; then work only for what changed:
 *   a new or changed session row is upserted; new messages (ids above the
 *   last synced one, nothing missing or changed below) are appended; a
 *   transcript that lost or rewrote messages (`replaceMessages`,
 *   `clearMessages`), or whose rows the server holds changed in place (a
 *   rewind, a compaction, a row hidden: seen by the digest of their newer
 *   columns, read for a changed session, and by that of their visibility
 *   columns, read on every pass), is rewritten; a session gone from the
 *   file (deleted, pruned) is deleted. Each session's
 *   changes are one transaction, fenced by the pass's token (a pass that
 *   lost its lock stops once another one writes).
 * - Two files as one origin (a cloned machine or disk: the same host name
 *   and path): each pass would delete the sessions the other shipped. A
 *   pass records the sessions it deleted as gone from the file, and one
 *   that would delete sessions while bringing back, or deleting again, one
 *   of those is refused before it writes (`_sync_departed.ts`).
 * - Deletes on the server: a synced session deleted there (`delete`,
 *   `prune`) has no record any more, and the next pass ships it whole; one
 *   deleted while a pass runs is left out of the pass's writes (never
 *   re-created holding only the messages appended), does not fail it, and
 *   counts for nothing in its result.
 * - Titles: a title another origin's session already holds gets the suffix
 *   ` [<origin>]` (titles stay unique on the server); every pass ends by
 *   giving the file's titles back where they are free (one read when none
 *   is), so a pass that failed midway leaves none unsettled for long.
 * - Memory: messages are read, and batched into transactions, within a
 *   byte budget; a session whose new messages exceed it is read a page at a
 *   time and written alone, still in one transaction. What a pass holds is
 *   bounded whatever the file holds, but for a single message larger than
 *   the budget, held whole.
 *
 * The parts: `_sync_source.ts` (what the pass compares), `_sync_digest.ts`
 * (the digests recorded), `_sync_shown.ts` (the visibility columns' digest),
 * `_sync_sessions.ts` (the changed sessions, read
 * and batched), `_sync_messages.ts` (reading messages from the file),
 * `_sync_write.ts` and `_sync_rows.ts` (the transactions and their
 * statements), `_sync_titles.ts`, `_sync_finish.ts` (after the sessions),
 * `_sync_exact.ts` (a row holding an integer beyond 2^53, a token count or
 * a message id, read again exactly: it reaches the server with every digit).
 *
 * @module
 */
import { hostname } from "node:os";
import { SessionDB, steadyRead, storeRead } from "../sqlite/session_db.ts";
import { checkSchemaInUse, connectPg } from "./_client.ts";
import type { PgClient } from "./_client_types.ts";
import { parsePostgresUrl } from "./store_url.ts";
import { ensureAdditions, migratePg } from "./schema.ts";
import { deleteSessionRows } from "./_delete.ts";
import { jsonParam } from "./_text_codec.ts";
import {
  checkSameFile,
  moveOrigin,
  originExists,
  type ResolvedOrigin,
  resolveOrigin,
  syncLockName,
  takePlace,
} from "./sync_origin.ts";
import { changesSince, readSource, realPathOf, serverRecords } from "./_sync_source.ts";
import { FileMessages } from "./_sync_messages.ts";
import { passOf, passTransaction } from "./_sync_write.ts";
import { COUNTS, SessionWriter, UnshippableSession } from "./_sync_sessions.ts";
import { restoreTitles } from "./_sync_titles.ts";
import { StorageError } from "../core/storage_error.ts";
import { OpenError } from "../core/errors.ts";
import { abortableDelay } from "../core/delay.ts";
import { linkParents, recordDigests, recordPassTime } from "./_sync_finish.ts";
import { shownAsHeld } from "./_sync_shown.ts";
import { checkOneFile, recordDeparted } from "./_sync_departed.ts";

export { digestOf } from "./_sync_digest.ts";
export { syncLockName, SyncRefusedError, SyncSupersededError } from "./sync_origin.ts";

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
  /** Sessions whose goal (`goal:<id>` in `state_meta`) was written or removed on the server. */
  readonly goals: number;
  /**
   * Sessions left out of the pass, each with why: the server cannot hold
   * them as the file has them (text where a number belongs). They stay on the
   * server as an earlier pass left them, and every pass tries them again.
   */
  readonly notShipped: readonly NotShipped[];
  /**
   * `true` when {@linkcode SyncOptions.signal} ended the pass before it had
   * gone through every session of the file (the next pass ships the rest);
   * absent otherwise.
   */
  readonly stopped?: true;
}

/** A session a pass left out, and why. */
export interface NotShipped {
  /** Its id in the file. */
  readonly id: string;
  /** Why the server cannot hold it (`its started_at holds "yesterday", where …`). */
  readonly reason: string;
}

/**
 * Whether a pass wrote anything to the server: a session created, updated
 * or deleted, a message or a goal written.
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
   * taken origin, or a new file in the old one's place), or when it would
   * delete sessions while bringing back, or deleting again, sessions an
   * earlier pass deleted (without it refused likewise: a second file
   * shipping as the origin, a cloned machine; or a backup restored over the
   * file, which this ships as it is).
   * @default {false}
   */
  readonly force?: boolean;
  /** The host recorded for the file. @default {os.hostname()} */
  readonly host?: string;
  /** Called after each session written, with the running totals. */
  readonly onProgress?: (result: SyncResult) => void;
  /**
   * Ends the pass early once aborted (Ctrl-C): no further session is
   * batched, the batches begun are written (each session whole), and the
   * pass ends as usual (sessions gone from the file deleted, lineage and
   * titles settled); its result says {@linkcode SyncResult.stopped}. The
   * next pass ships the rest. Aborted while the pass waits for its file
   * (another process holds it whole), the pass ends before it begins:
   * {@linkcode syncFile} rejects with the signal's reason, and nothing is
   * written.
   */
  readonly signal?: AbortSignal;
  /**
   * How long the pass waits for its file while another process holds it
   * whole, in milliseconds (the CLI passes `HERMES_STATE_LOCK_TIMEOUT`).
   * @default {15000}
   */
  readonly fileWaitMs?: number;
  /**
   * Ends the pass's wait for its file while another process holds it whole,
   * as {@linkcode SyncOptions.signal} does, but not the pass once it began
   * (a follower stops after the pass under way, yet not after a wait of
   * {@linkcode SyncOptions.fileWaitMs}). Aborted during the wait,
   * {@linkcode syncFile} rejects with its reason and nothing is written.
   * @default {SyncOptions.signal}
   */
  readonly fileWaitSignal?: AbortSignal;
  /**
   * Called once the pass has read the file's sessions and message counts,
   * before it reads any message (tests use it to write in between); the
   * pass waits for the promise it returns.
   */
  readonly afterSnapshot?: () => void | Promise<void>;
}

/**
 * The session ids a file holds, read apart (only when its place is another origin's).
 *
 * @param path The file.
 * @returns Its session ids.
 */
async function fileSessionIds(path: string): Promise<ReadonlySet<string>> {
  const db = await SessionDB.open({ path, readonly: true });
  try {
    const rows = storeRead(db, (store) => store.statement("SELECT id FROM sessions").all());
    return new Set(rows.map((row) => String(row.id)));
  } finally {
    db.close();
  }
}

/** How long a pass waits for a file another process holds whole, by default, in milliseconds. */
const FILE_WAIT_MS = 15_000;

/** One try at a file that fails at once while it is held (no busy wait inside SQLite). */
const NO_WAIT = { maxAttempts: 1, busyTimeoutMs: 0 } as const;

/**
 * Opens a pass's file read-only once it can be read. SQLite's own wait for
 * a file another process holds whole (`locking_mode = EXCLUSIVE`, a crashed
 * writer's WAL being recovered) blocks the event loop, so that Ctrl-C went
 * unheard until it ran out: the file is tried without waiting, again after
 * short awaited pauses that `signal` cuts short, for `waitMs` at most;
 * then opened as a pass reads it (with SQLite's usual short wait for a
 * lock taken meanwhile).
 *
 * @param path The state.db file.
 * @param waitMs How long to wait for it.
 * @param signal Ends the wait: the promise then rejects with its reason.
 * @returns The open file.
 */
async function openWhenReadable(
  path: string,
  waitMs: number,
  signal: AbortSignal | undefined,
): Promise<SessionDB> {
  const started = performance.now();
  for (;;) {
    signal?.throwIfAborted();
    try {
      (await SessionDB.open({ path, readonly: true, retry: NO_WAIT })).close();
      break;
    } catch (error) {
      if (!(error instanceof StorageError && error.kind === "busy")) throw error;
      const waited = performance.now() - started;
      if (waited >= waitMs) {
        throw new StorageError(
          `Cannot read: database is locked by another process (waited ${
            Math.round(waited / 1000)
          } s)`,
          "busy",
          { cause: error },
        );
      }
    }
    await abortableDelay(20 + Math.random() * 130, signal);
  }
  signal?.throwIfAborted();
  return await SessionDB.open({ path, readonly: true });
}

/**
 * Connects to the server a sync writes to and runs its migrations (the
 * store's tables and the sync tables), then adds the columns only `sync`
 * uses that an older hermes-state ignores (`sync_origins.departed`), when
 * missing: no step an older `sync` into the same server would refuse.
 *
 * @param url `postgres://…?schema=NAME`.
 * @returns The pool; close it when done.
 * @throws {OpenError} When the server cannot be reached.
 */
export async function connectSyncTarget(url: string): Promise<PgClient> {
  const { url: server, schema, poolSize } = parsePostgresUrl(url);
  const client = await connectPg(server, schema, { max: poolSize }, url);
  try {
    await migratePg(client, schema);
    await ensureAdditions(client, schema);
    await checkSchemaInUse(client, schema);
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
}

/**
 * Why `path` cannot be synced at all, found without a server: it is no
 * database, or not a Hermes one. A file another process holds is not such a
 * file (its pass waits for it).
 *
 * @param path The state.db file (opened read-only, then closed; never changed).
 * @returns The error its pass would fail with, or `undefined` when it opens (or is held).
 */
export async function fileOpenError(path: string): Promise<OpenError | undefined> {
  try {
    (await SessionDB.open({ path, readonly: true, retry: NO_WAIT })).close();
  } catch (error) {
    if (error instanceof OpenError && error.kind !== "busy") return error;
  }
  return undefined;
}

/**
 * One incremental pass of `path` into the server behind `client`.
 *
 * @param client The server's pool, from {@linkcode connectSyncTarget}.
 * @param path The state.db file (opened read-only; never changed).
 * @param options Origin name, host, progress.
 * @returns What the pass did.
 * @throws {OpenError} When the file cannot be opened.
 * @throws {StorageError} Of kind `busy`, when another process held the file
 *   whole for {@linkcode SyncOptions.fileWaitMs}.
 * @throws {unknown} The reason of `options.fileWaitSignal` (else
 *   `options.signal`), when it was aborted while the pass waited for its file.
 * @throws {SyncRefusedError} When the file holds none of the sessions its
 *   origin has on the server, or looks like a second file shipping as its
 *   origin (see {@linkcode SyncOptions.force}), or
 *   `options.origin` names another origin than the one this host and path
 *   are registered under.
 */
export async function syncFile(
  client: PgClient,
  path: string,
  options: SyncOptions = {},
): Promise<SyncResult> {
  const host = options.host ?? hostname();
  const real = realPathOf(path);
  // The file first: one that is no database registers no origin on the server. One another
  // process holds whole is waited for, until the signal ends the wait.
  const db = await openWhenReadable(
    path,
    options.fileWaitMs ?? FILE_WAIT_MS,
    options.fileWaitSignal ?? options.signal,
  );
  let resolved: ResolvedOrigin;
  let unlock: () => Promise<void>;
  try {
    for (;;) {
      resolved = await resolveOrigin(
        client,
        host,
        real,
        options.origin,
        () => fileSessionIds(path),
      );
      // One pass per origin at a time: a second one waits, then finds what the first wrote.
      unlock = await client.lock(syncLockName(resolved.name));
      // Removed (`origins --remove`) while this pass waited for the lock: register the file again.
      // (One that takes another's place is registered once its file is checked.)
      const registers = resolved.replaces !== undefined && resolved.movedFrom === undefined;
      let exists: boolean;
      try {
        exists = registers || await originExists(client, resolved.name);
      } catch (error) {
        // The lock is not left held on its connection until the pool closes.
        await unlock().catch(() => {});
        throw error;
      }
      if (exists) break;
      await unlock();
    }
  } catch (error) {
    db.close();
    throw error;
  }
  const origin = resolved.name;
  let writer: SessionWriter | undefined;
  let result: SyncResult | undefined;
  let finished = false;
  try {
    const server = await serverRecords(client, origin);
    const pass = passOf(client, origin, server);
    // A file read without locks is read again when its owner wrote meanwhile: a torn read
    // must not look like sessions gone (the pass deletes those on the server).
    const [store, source] = steadyRead(db, (store) => [store, readSource(store, server)] as const);
    await options.afterSnapshot?.();
    // Created and deleted as the file and the records stand now (a pass stopped early creates
    // fewer); deleted ones are recorded, so that a second file shipping as the origin is refused.
    const created = [...source].filter(([id, session]) =>
      !server.has(id) && session.unshippable === undefined
    ).map(([id]) => id);
    const goneIds = [...server.keys()].filter((id) => !source.has(id));
    if (!options.force) {
      checkSameFile(
        { name: origin, place: resolved.movedFrom ?? { host, path: real }, held: server.size },
        server.size - goneIds.length,
      );
      await checkOneFile(client, origin, { created, gone: goneIds });
    }
    if (resolved.replaces !== undefined) {
      await takePlace(client, origin, resolved.replaces, { host, path: real }, new Date());
    } else if (resolved.movedFrom) await moveOrigin(client, origin, { host, path: real });
    // Messages are read after the snapshot of counts: only ids up to the snapshot's highest,
    // so one written in between is left for the next pass instead of shipped twice.
    // Batches may commit in any order: each holds whole sessions, their rows, messages and
    // `sync_sessions` records together, and parents are linked after the last one.
    // Sessions the server cannot hold as the file has them: left out, and named.
    const notShipped: NotShipped[] = [...source].flatMap(([id, session]) =>
      session.unshippable === undefined ? [] : [{ id, reason: session.unshippable }]
    );
    const messages = new FileMessages(store);
    writer = new SessionWriter(client, pass, messages, {
      onProgress: (counts) => options.onProgress?.({ origin, ...counts, deleted: 0, notShipped }),
    });
    /** Unchanged sessions an earlier release recorded with the whole row's digest. */
    const redigested: { digest: string; id: string }[] = [];
    /**
     * Sessions whose messages are unchanged, recorded before migration 8 without a message
     * digest: it is recorded now, and nothing shipped.
     */
    const undigested: { digest: number; id: string }[] = [];
    /** Sessions whose visibility columns the server holds as the file has them: their digest. */
    const reshown: { digest: string; id: string }[] = [];
    let stopped = false;
    for (const [id, session] of source) {
      if (options.signal?.aborted) {
        stopped = true;
        break;
      }
      if (session.unshippable !== undefined) continue;
      const known = server.get(id);
      const changes = changesSince(session, known);
      let rowChanged = changes.row;
      const { messages: messagesChanged, meta: metaChanged, shown: shownChanged } = changes;
      if (!messagesChanged && known !== undefined && known.messageDigest === null) {
        undigested.push({ digest: session.messageDigest, id: `${origin}/${id}` });
      }
      if (!rowChanged && !messagesChanged && !metaChanged && !shownChanged) continue;
      if (
        !messagesChanged && !metaChanged && (!rowChanged || known?.digest === session.fullDigest)
      ) {
        // The row as the server holds it (an earlier release's digest of it: the new one recorded).
        if (rowChanged) redigested.push({ digest: session.digest, id: `${origin}/${id}` });
        rowChanged = false;
        if (!shownChanged) continue;
        // Visibility columns edited in place (a rewind, a compaction, a row hidden), the session's
        // row and message count unchanged: the transcript is shipped again, unless the server
        // holds it as the file has it (a record without the digest, or one of an earlier read).
        if (shownAsHeld(session, known!, messages)) {
          reshown.push({ digest: session.shownDigest!, id: `${origin}/${id}` });
          continue;
        }
      }
      try {
        await writer.add({ session, known, rowChanged, messagesChanged, metaChanged });
      } catch (error) {
        // Found when its messages were measured, before anything of it was batched.
        if (!(error instanceof UnshippableSession)) throw error;
        notShipped.push({ id, reason: error.message });
        continue;
      }
    }
    await writer.finish();
    const totals = {
      origin,
      ...writer.totals,
      deleted: 0,
      notShipped,
      ...(stopped ? { stopped: true as const } : {}),
    };
    await recordDigests(client, pass, {
      rows: redigested,
      messages: undigested,
      shown: reshown,
    });
    const gone = goneIds.map((id) => `${origin}/${id}`);
    // A forced pass makes the file the origin's as it is: what it brings back is no evidence.
    const forgotten = options.force ? created : [];
    if (gone.length > 0 || forgotten.length > 0) {
      // Their goals go with them (deleteSessionRows). Counted: those the server still held (a
      // delete there since the pass read its records took the others).
      totals.deleted = await passTransaction(client, pass, async (query) => {
        await recordDeparted(query, origin, { gone: goneIds, forgotten });
        if (gone.length === 0) return 0;
        const held = await query(
          `SELECT id FROM sessions WHERE id IN (SELECT json_array_elements_text($1::text::json))
           ORDER BY id FOR UPDATE`,
          [jsonParam(gone)],
        );
        await deleteSessionRows(query, gone);
        return held.length;
      });
    }
    const wrote = redigested.length > 0 || undigested.length > 0 || reshown.length > 0 ||
      wroteAnything(totals);
    await linkParents(client, origin);
    // Every pass: one that failed before this may have left titles unsettled.
    await restoreTitles(client, origin, source);
    await recordPassTime(client, origin, wrote);
    result = totals;
    finished = true;
  } finally {
    // A write still in flight (the pass failed while preparing the next batch) ends first.
    await writer?.settle();
    db.close();
    // A lock lost with its connection fails its release: said, unless the pass failed already
    // (its own error says more).
    await unlock().catch((error) => {
      if (finished) throw error;
    });
  }
  return result!;
}
