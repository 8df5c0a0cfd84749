/**
 * Sessions `hermes-state copy` put on the server under their file's own
 * ids, which `sync` of the same file then writes as `ORIGIN/ID`: each would
 * be stored twice (every title with its ` [ORIGIN]` twin, search hits and
 * usage doubled). So as a pass writes a session, the copy of it is taken
 * away in the same transaction: the server's session under the bare id,
 * recorded by no origin (a synced session is recorded), started at the
 * same time. The pass writes the whole session from the file, which holds
 * everything the copy was made from: nothing is lost, and the copy's title
 * is free for it.
 *
 * @module
 */
import type { PgQuery } from "./_client_types.ts";
import { deleteSessionRows } from "./_delete.ts";
import { jsonParam } from "./_text_codec.ts";
import type { SourceSession } from "./_sync_source.ts";

/**
 * Deletes, in the caller's transaction, the copies `copy` made of
 * `sessions` on the server (see the module's note).
 *
 * @param query The transaction's query function.
 * @param sessions The file's sessions a transaction of the pass writes.
 * @returns The ids of the copies deleted.
 */
export async function retireCopies(
  query: PgQuery,
  sessions: readonly SourceSession[],
): Promise<string[]> {
  const wanted = sessions.map((session) => ({
    id: String(session.row.id),
    started: Number(session.row.started_at),
  }));
  const rows = await query(
    `SELECT s.id FROM json_to_recordset($1::text::json) AS b(id text, started double precision)
     JOIN sessions s ON s.id = b.id AND s.started_at = b.started
     WHERE NOT EXISTS (SELECT 1 FROM sync_sessions ss WHERE ss.session_id = s.id)`,
    [jsonParam(wanted)],
  );
  const ids = rows.map((row) => String(row.id));
  // The copy's goal (`copy` carries it under the bare id) goes with it: the pass writes the file's.
  if (ids.length > 0) await deleteSessionRows(query, ids);
  return ids;
}
