/**
 * Deleting sessions on the server, as the SQLite engine does: children of a
 * deleted session become roots, then its messages and its row go. Used by
 * the store's deletes and prunes and by `sync` when a file lost sessions.
 *
 * @module
 */
import type { PgQuery } from "./_client.ts";

/** The ids bound as `$1`, one JSON array, read back as rows. */
const DOOMED = "SELECT json_array_elements_text($1::text::json)";

/**
 * Deletes the sessions `ids` with their messages, orphaning their children,
 * in the caller's transaction.
 *
 * @param query The transaction's query function.
 * @param ids The session ids.
 * @throws {StorageError} On a server failure.
 */
export async function deleteSessionRows(query: PgQuery, ids: readonly string[]): Promise<void> {
  const list = [JSON.stringify(ids)];
  await query(
    `UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN (${DOOMED})`,
    list,
  );
  await query(`DELETE FROM messages WHERE session_id IN (${DOOMED})`, list);
  await query(`DELETE FROM sessions WHERE id IN (${DOOMED})`, list);
}
