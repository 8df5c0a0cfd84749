/**
 * How `sync` writes: each session whole or not at all, in a transaction of
 * the pass, fenced by its token (a pass that lost its lock stops once
 * another one writes). Ordinary sessions go several to a batch, one
 * transaction each; a session whose new messages exceed the pass's byte
 * budget goes alone, its messages read and inserted a page at a time
 * inside its one transaction.
 *
 * The server numbers messages in the order they are inserted, and each
 * session's messages are inserted in their order in the file (time, then
 * id), so they read back in it.
 *
 * @module
 */
import { setImmediate } from "node:timers";
import { isUniqueViolation } from "./_pg_errors.ts";
import type { PgClient, PgQuery } from "./_client_types.ts";
import type { MessageValues } from "./_rows.ts";
import { type CopyCandidate, retireCopies } from "./_sync_copies.ts";
import { deleteMessagesSql } from "./_delete.ts";
import { jsonParam } from "./_text_codec.ts";
import { checkPass, startPass, SyncSupersededError } from "./sync_origin.ts";
import { insertMessages, recordSessions, upsertSessions } from "./_sync_rows.ts";
import { replaceSessionMeta } from "./_sync_meta.ts";
import { replaceModelUsage } from "./_sync_model_usage.ts";
import type { SessionModelUsage } from "../core/session_model_usage.ts";
import type { SessionMetaEntry } from "./_sync_digest.ts";
import {
  keptRecords,
  serverRecords,
  type ServerSession,
  type SourceSession,
} from "./_sync_source.ts";

/** Times a write is tried when a title it chose was taken meanwhile. */
const TITLE_ATTEMPTS = 3;

/**
 * A pass: its origin, and its token (`startPass`), which each of its
 * writing transactions checks; `fence` takes the token, before the pass's
 * first write.
 */
export interface Pass {
  /** The origin the pass ships. */
  readonly origin: string;
  /** The pass's token, once taken. */
  token?: bigint;
  /** Takes the token (once; later calls wait for the first). */
  fence(): Promise<void>;
}

/** One session of a batch: its row, whether its messages are appended (or replace the server's), and the rows. */
export interface BatchItem {
  /** The session. */
  readonly session: SourceSession;
  /** Its messages are added to the server's (else they replace them). */
  readonly append: boolean;
  /** Its messages to insert, in order. */
  readonly rows: readonly MessageValues[];
  /** Its per-session keys (goal) are written, replacing the server's. */
  readonly meta: boolean;
  /** The server holds it, and keeps what it holds of it (messages appended, or none written). */
  readonly held: boolean;
}

/** A session written alone, its messages a page at a time. */
export interface StreamedItem {
  /** The session. */
  readonly session: SourceSession;
  /** Its messages are added to the server's (else they replace them). */
  readonly append: boolean;
  /** Its messages to insert, in order, a page at a time: read anew on each call. */
  readonly pages: () => Iterable<readonly MessageValues[]>;
  /** Its per-session keys (goal) are written, replacing the server's. */
  readonly meta: boolean;
  /** The server holds it, and keeps what it holds of it (messages appended, or none written). */
  readonly held: boolean;
}

/**
 * A new pass of `origin`, its token not taken yet.
 *
 * Should the lock be lost with its connection (a network blip, a
 * terminated backend), another pass may start while this one writes, from
 * records this one is changing: each message would be shipped twice. So
 * before its first write a pass takes a new token of the origin, and each
 * of its transactions checks it. Taking it waits for the transactions of
 * an earlier pass in flight, and fails this pass when the records changed
 * since it read them; an earlier pass's transactions after it fail. (A
 * pass that writes nothing takes none: a write would move the store's
 * change marker, waking every live page.)
 *
 * @param client The server.
 * @param origin The origin.
 * @param server The records the pass read.
 * @returns The pass.
 */
export function passOf(
  client: PgClient,
  origin: string,
  server: ReadonlyMap<string, ServerSession>,
): Pass {
  let fenced: Promise<void> | undefined;
  const pass: Pass = {
    origin,
    fence: () =>
      fenced ??= (async () => {
        const token = await startPass(client, origin);
        if (token === undefined || !keptRecords(server, await serverRecords(client, origin))) {
          throw new SyncSupersededError(origin);
        }
        pass.token = token;
      })(),
  };
  return pass;
}

/**
 * Runs `fn` in a transaction of the pass, once no other pass of the origin has started since.
 *
 * @param client The server.
 * @param pass The pass.
 * @param fn The transaction's work.
 * @returns What `fn` returns.
 * @throws {SyncSupersededError} When another pass of the origin started since.
 */
export function passTransaction<T>(
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

/** Runs `write` again when a title it chose was taken meanwhile (up to {@linkcode TITLE_ATTEMPTS} times). */
async function withTitleRetries<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await write();
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

/** The server ids and keys of the sessions whose per-session keys are written. */
function metaOf(
  origin: string,
  items: readonly { readonly session: SourceSession; readonly meta: boolean }[],
): { id: string; meta: readonly SessionMetaEntry[] }[] {
  return items.filter((item) => item.meta).map((item) => ({
    id: `${origin}/${item.session.row.id}`,
    meta: item.session.meta,
  }));
}

/**
 * The per-model usage rows of sessions written, under their server ids:
 * none from a file without that table (the server's rows are left).
 */
function usageOf(
  origin: string,
  sessions: readonly SourceSession[],
): { id: string; usage: readonly SessionModelUsage[] }[] {
  return sessions.flatMap((session) =>
    session.usage === undefined ? [] : [{ id: `${origin}/${session.row.id}`, usage: session.usage }]
  );
}

/**
 * The items of a transaction to write: all but those the server held when
 * the pass read its records and no longer holds (a delete or prune on the
 * server since). Written, such a session would hold only the messages the
 * pass appends while its record said it held them all, and no later pass
 * would ship the others; left out, it has no record, and the next pass
 * ships it whole. The rows of the others are locked until the transaction
 * ends, so a delete that comes after waits for it and deletes what it wrote.
 *
 * @param query The transaction's query function.
 * @param origin The origin.
 * @param items The transaction's sessions.
 * @returns Those to write, in order.
 */
async function stillHeld<T extends { readonly session: SourceSession; readonly held: boolean }>(
  query: PgQuery,
  origin: string,
  items: readonly T[],
): Promise<readonly T[]> {
  const held = items.filter((item) => item.held).map((item) => `${origin}/${item.session.row.id}`);
  if (held.length === 0) return items;
  // In id order, so that two batches never wait on each other; a row deleted (and committed)
  // while this waited for it is not returned.
  const rows = await query(
    `SELECT s.id FROM sessions s JOIN sync_sessions ss ON ss.session_id = s.id
     WHERE s.id IN (SELECT json_array_elements_text($1::text::json))
     ORDER BY s.id FOR NO KEY UPDATE OF s`,
    [jsonParam(held)],
  );
  if (rows.length === held.length) return items;
  const present = new Set(rows.map((row) => String(row.id)));
  return items.filter((item) => !item.held || present.has(`${origin}/${item.session.row.id}`));
}

/**
 * A session of the pass as `retireCopies` weighs it: with its messages when
 * the pass writes them all (the server held none of it).
 */
function copyCandidate(
  item: BatchItem | StreamedItem,
  messages: () => Iterable<readonly MessageValues[]>,
): CopyCandidate {
  return item.held || item.append ? { session: item.session } : { session: item.session, messages };
}

/**
 * Writes one batch of sessions in one transaction: rows, messages, goals,
 * then what the server now holds.
 *
 * @param client The server.
 * @param pass The pass.
 * @param batch The batch's sessions.
 * @returns Those written: all but those deleted on the server since the pass read its records.
 */
export function writeBatch<T extends BatchItem>(
  client: PgClient,
  pass: Pass,
  batch: readonly T[],
): Promise<readonly T[]> {
  const { origin } = pass;
  return withTitleRetries(() =>
    passTransaction(client, pass, async (query) => {
      const items = await stillHeld(query, origin, batch);
      if (items.length === 0) return items;
      // A few statements per batch, not a few per session: while the batch is in flight the
      // client computes the next one, and each round trip waits for its turn of the event loop.
      const sessions = items.map((item) => item.session);
      await retireCopies(query, items.map((item) => copyCandidate(item, () => [item.rows])));
      await upsertSessions(query, origin, sessions);
      await replaceModelUsage(query, usageOf(origin, sessions));
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
      await replaceSessionMeta(query, metaOf(origin, items));
      await recordSessions(query, origin, sessions);
      return items;
    })
  );
}

/**
 * Writes one session in one transaction, its messages a page at a time:
 * its row, its messages (each page inserted while the next is read), its
 * goal, then what the server now holds. Another attempt reads the pages anew.
 *
 * @param client The server.
 * @param pass The pass.
 * @param item The session.
 * @returns The messages written, or `undefined` when the session was left
 *   out (deleted on the server since the pass read its records).
 */
export function writeStreamed(
  client: PgClient,
  pass: Pass,
  item: StreamedItem,
): Promise<number | undefined> {
  const { origin } = pass;
  const target = `${origin}/${item.session.row.id}`;
  return withTitleRetries(() =>
    passTransaction(client, pass, async (query) => {
      if ((await stillHeld(query, origin, [item])).length === 0) return undefined;
      await retireCopies(query, [copyCandidate(item, item.pages)]);
      await upsertSessions(query, origin, [item.session]);
      await replaceModelUsage(query, usageOf(origin, [item.session]));
      if (!item.append) await query(deleteMessagesSql("session_id = $1"), [target]);
      let written = 0;
      let inFlight: Promise<void> = Promise.resolve();
      try {
        for (const page of item.pages()) {
          await inFlight;
          inFlight = insertMessages(query, page.map((values) => [target, values] as const));
          written += page.length;
          // Sent before the next page is read and its vectors computed.
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        await inFlight;
      } finally {
        // Reading the next page failed while one was in flight: its end is awaited, not left unheard.
        await inFlight.catch(() => {});
      }
      await replaceSessionMeta(query, metaOf(origin, [item]));
      await recordSessions(query, origin, [item.session]);
      return written;
    })
  );
}
