/**
 * How a read of one session's messages past an id (`afterId`: what a
 * follower asks at each look, and `newestOf` once per answer) reaches them.
 * `idx_messages_session` is `(session_id, timestamp)`, so along it the id
 * condition only filters: the read walks every row the session has (about
 * 13 ms at 200,000). Along the rowid the same read walks the rows of the
 * whole file with a greater id: none at all for the session written last,
 * a million for a session whose last message is older than a million
 * others'. So the read takes the shorter of the two walks, told apart by
 * two lookups that cost a few page reads each: the file's greatest id and
 * the session's `message_count`. Either way the answer is the same; only
 * the time differs (a count that is wrong, as a file another tool wrote
 * may hold, costs time, never a row).
 *
 * @module
 */
import type { Store } from "./store.ts";

/**
 * A row reached along the rowid costs up to this many entries walked along
 * `idx_messages_session`: about as much for short messages (measured: 40–80
 * ns a row either way), more for long ones, whose text leaves fewer rows to
 * a table page, where an index page holds a hundred entries or more.
 */
const ROWID_ROW_COST = 2;

/** The file's greatest message id: the last entry of the rowid tree, one descent. */
const GREATEST_ID = "SELECT MAX(id) AS id FROM messages";

/** The session's message count as its row keeps it, read by the primary key. */
const SESSION_COUNT = "SELECT message_count AS n FROM sessions WHERE id = ?";

/**
 * Whether session `sessionId`'s messages with an id greater than `afterId`
 * are reached sooner along the rowid than along `idx_messages_session`:
 * when the rows of the file past `afterId` are fewer than the session's
 * (weighed by {@linkcode ROWID_ROW_COST}), and always when there are none.
 *
 * @param store The store.
 * @param sessionId The session read.
 * @param afterId The id the read starts after.
 * @returns True to read along the rowid.
 */
export function readsAfterAlongRowid(store: Store, sessionId: string, afterId: number): boolean {
  const greatest = Number(store.statement(GREATEST_ID).get()?.id ?? 0);
  // No row past it in the whole file (the common look of a follower): one empty range.
  if (!(greatest > afterId)) return true;
  const counted = Number(store.statement(SESSION_COUNT).get(sessionId)?.n ?? 0);
  // A count that is not a number (text in a file another tool wrote) weighs nothing.
  const sessionRows = Number.isFinite(counted) ? counted : 0;
  return (greatest - afterId) * ROWID_ROW_COST <= sessionRows;
}
