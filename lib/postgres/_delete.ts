/**
 * Deleting sessions on the server, as the SQLite engine does: children of a
 * deleted session become roots, then its messages, its per-session
 * `state_meta` keys (its goal, `goal:<id>`) and its row go. Used by
 * the store's deletes and prunes and by `sync` when a file lost sessions.
 *
 * @module
 */
import type { PgQuery } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { SESSION_META_PREFIXES } from "../core/session_meta.ts";

/**
 * A statement that deletes the messages `where` selects (a condition on
 * `messages`) and their rows of `message_words` (which has no foreign key:
 * checking one per inserted row cost a `sync` of 200,000 messages 1.6 s).
 * Every delete of messages goes through it.
 *
 * @param where The condition, e.g. `session_id = $1`.
 * @returns The SQL.
 */
export function deleteMessagesSql(where: string): string {
  return `WITH gone AS (DELETE FROM messages WHERE ${where} RETURNING id)
    DELETE FROM message_words WHERE id IN (SELECT id FROM gone)`;
}

/** The ids bound as `$1`, one JSON array, read back as rows. */
const DOOMED = "SELECT json_array_elements_text($1::text::json)";

/**
 * Deletes the sessions `ids` with their messages and their per-session
 * `state_meta` keys, orphaning their children, in the caller's transaction.
 *
 * @param query The transaction's query function.
 * @param ids The session ids.
 * @throws {StorageError} On a server failure.
 */
export async function deleteSessionRows(query: PgQuery, ids: readonly string[]): Promise<void> {
  const list = [jsonParam(ids)];
  await query(
    `UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN (${DOOMED})`,
    list,
  );
  await query(deleteMessagesSql(`session_id IN (${DOOMED})`), list);
  await query(
    `DELETE FROM state_meta WHERE key IN
     (SELECT prefix || id FROM json_array_elements_text($2::text::json) AS p(prefix), (${DOOMED}) AS d(id))`,
    [...list, jsonParam(SESSION_META_PREFIXES)],
  );
  await query(`DELETE FROM sessions WHERE id IN (${DOOMED})`, list);
}
