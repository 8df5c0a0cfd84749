/**
 * The per-session `state_meta` keys `sync` carries with a session (its
 * goal, `goal:<id>`; `SESSION_META_PREFIXES`; read from the file in the
 * pass's snapshot, `_sync_source.ts`), on the server: written under the id
 * the server gives the session (`goal:<origin>/<id>`), so two hosts' goals
 * of sessions with the same id never overwrite each other; deleted with
 * it. The file's other keys stay on the host.
 *
 * @module
 */
import { SESSION_META_PREFIXES } from "../core/session_meta.ts";
import type { PgQuery } from "./_client_types.ts";
import type { SessionMetaEntry } from "./_sync_digest.ts";
import { jsonParam } from "./_text_codec.ts";

/** Every per-session key of the sessions `ids` (server ids). */
function keysOf(ids: readonly string[]): string[] {
  return ids.flatMap((id) => SESSION_META_PREFIXES.map((prefix) => prefix + id));
}

/**
 * Deletes the per-session keys of sessions of the server, in the caller's
 * transaction (sessions deleted, or whose keys are written anew).
 *
 * @param query The transaction's query function.
 * @param ids The server ids of the sessions.
 */
async function deleteSessionMeta(query: PgQuery, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await query(
    "DELETE FROM state_meta WHERE key IN (SELECT json_array_elements_text($1::text::json))",
    [jsonParam(keysOf(ids))],
  );
}

/**
 * Sets the per-session keys of sessions on the server to the file's, in
 * the caller's transaction: those the file lacks are deleted.
 *
 * @param query The transaction's query function.
 * @param sessions Each session's server id and its keys in the file.
 */
export async function replaceSessionMeta(
  query: PgQuery,
  sessions: readonly { readonly id: string; readonly meta: readonly SessionMetaEntry[] }[],
): Promise<void> {
  if (sessions.length === 0) return;
  await deleteSessionMeta(query, sessions.map((session) => session.id));
  const rows = sessions.flatMap((session) =>
    session.meta.map((entry) => ({ key: entry.prefix + session.id, value: entry.value }))
  );
  if (rows.length === 0) return;
  await query(
    `INSERT INTO state_meta (key, value)
     SELECT k.key, k.value FROM json_to_recordset($1::text::json) AS k(key text, value text)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    [jsonParam(rows)],
  );
}
