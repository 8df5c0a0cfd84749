/**
 * What a PostgreSQL store records of `hermes-state sync` (`sync_origins`,
 * `sync_sessions`), read whole and added to another store: `copy` between
 * two such stores carries it with the sessions, so that each host's next
 * pass goes on into the new store incrementally instead of shipping its
 * file again under a new origin beside the copied sessions.
 *
 * The records refer to each file's own ids and digests, never to the
 * store's message ids, so they hold in a store whose message ids differ.
 *
 * @module
 */
import type { PgQuery } from "./_client_types.ts";
import type { RestoredSyncState, SyncState } from "../core/synced_store.ts";
import { jsonParam } from "./_text_codec.ts";

/**
 * Reads every origin and every synced session's record.
 *
 * @param query Runs a statement (one snapshot: a transaction).
 * @returns The state, origins and sessions in a stable order.
 */
export async function readSyncState(query: PgQuery): Promise<SyncState> {
  const origins = await query(
    `SELECT origin, host, path, last_pass_at FROM sync_origins ORDER BY origin COLLATE "C"`,
  );
  const sessions = await query(
    `SELECT session_id, origin, source_id, source_parent, row_digest, message_count,
       max_message_id, message_digest, extra_digest, meta_digest
     FROM sync_sessions ORDER BY session_id COLLATE "C"`,
  );
  return {
    origins: origins.map((row) => ({
      origin: String(row.origin),
      host: String(row.host),
      path: String(row.path),
      lastPassAt: row.last_pass_at === null ? null : Number(row.last_pass_at),
    })),
    sessions: sessions.map((row) => ({
      sessionId: String(row.session_id),
      origin: String(row.origin),
      sourceId: String(row.source_id),
      sourceParent: row.source_parent === null ? null : String(row.source_parent),
      rowDigest: String(row.row_digest),
      messageCount: Number(row.message_count),
      maxMessageId: Number(row.max_message_id),
      messageDigest: row.message_digest === null ? null : Number(row.message_digest),
      extraDigest: row.extra_digest === null ? null : String(row.extra_digest),
      metaDigest: row.meta_digest === null ? null : String(row.meta_digest),
    })),
  };
}

/**
 * Adds `state` to the store behind `query` (one transaction): the origins
 * it lacks, then the record of each session it holds and has none for. An
 * origin of the same name for another host or file, or a file the store
 * records under another name, is left out with its sessions' records.
 *
 * @param query Runs a statement in the caller's transaction.
 * @param state Another store's state.
 * @returns What was added, and the origins left out.
 */
export async function addSyncState(query: PgQuery, state: SyncState): Promise<RestoredSyncState> {
  const added = await query(
    `INSERT INTO sync_origins (origin, host, path, last_pass_at)
     SELECT o.origin, o.host, o.path, o."lastPassAt"
     FROM jsonb_to_recordset($1::text::jsonb)
       AS o(origin text, host text, path text, "lastPassAt" double precision)
     ON CONFLICT DO NOTHING RETURNING origin`,
    [jsonParam(state.origins)],
  );
  // Those the store holds now for the same host and file: added, or there already.
  const same = await query(
    `SELECT o.origin FROM jsonb_to_recordset($1::text::jsonb) AS o(origin text, host text, path text)
     JOIN sync_origins so ON so.origin = o.origin AND so.host = o.host AND so.path = o.path`,
    [jsonParam(state.origins)],
  );
  const kept = new Set(same.map((row) => String(row.origin)));
  const conflicting = state.origins.map((o) => o.origin).filter((name) => !kept.has(name));
  const sessions = state.sessions.filter((s) => kept.has(s.origin));
  const written = sessions.length === 0 ? [] : await query(
    `INSERT INTO sync_sessions (session_id, origin, source_id, source_parent, row_digest,
       message_count, max_message_id, message_digest, extra_digest, meta_digest)
     SELECT r."sessionId", r.origin, r."sourceId", r."sourceParent", r."rowDigest",
       r."messageCount", r."maxMessageId", r."messageDigest", r."extraDigest", r."metaDigest"
     FROM jsonb_to_recordset($1::text::jsonb) AS r("sessionId" text, origin text,
       "sourceId" text, "sourceParent" text, "rowDigest" text, "messageCount" bigint,
       "maxMessageId" bigint, "messageDigest" bigint, "extraDigest" text, "metaDigest" text)
     WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = r."sessionId")
     ON CONFLICT DO NOTHING RETURNING session_id`,
    [jsonParam(sessions)],
  );
  return { origins: added.length, sessions: written.length, conflicting };
}
