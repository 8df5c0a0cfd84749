/**
 * The rows of `messages` that `getMessages` and `countMessages` select on
 * the server, from their checked options: as the SQLite engine selects them
 * from a file (`lib/sqlite/messages.ts`), so both answer alike.
 *
 * @module
 */
import type { CheckedMessagesOptions } from "../core/session_options.ts";
import { activeSql, EXTRA_COLUMN } from "./_extra.ts";
import { MESSAGE_COLUMNS } from "./_rows.ts";
import type { PgValue } from "./_client_types.ts";

/** The `WHERE` clause of `messages m` and its parameters (`$1` is the session). */
export interface MessageSelection {
  readonly where: string;
  readonly params: PgValue[];
}

/** The largest magnitude a message id (a `bigint`) has, exclusive. */
const BIGINT_BOUND = 2 ** 63;

/**
 * The `WHERE` clause the options select, or `undefined` when they select
 * nothing: a place (`beforeId`, `fromId`) no message can have (a fraction,
 * beyond 64 bits), which SQLite finds no row for either, or an `afterId`
 * past every 64-bit id. A place is a range
 * of `idx_messages_session` (`session_id, timestamp`), so a page reads its
 * own rows, not the session's.
 *
 * @param sessionId The session.
 * @param options The checked options.
 * @returns The clause and its parameters, or `undefined`.
 */
export function messageSelection(
  sessionId: string,
  options: CheckedMessagesOptions,
): MessageSelection | undefined {
  const params: PgValue[] = [sessionId];
  let where = "m.session_id = $1";
  if (options.afterId !== undefined) {
    // Any finite number, as SQLite compares it with an id: greater than 2.5 is greater than
    // 2. As a bigint, so the primary key can answer it (the rows written since a live reader
    // looked), where a float8 comparison read every row of the session.
    const after = Math.floor(options.afterId);
    if (after >= BIGINT_BOUND) return undefined;
    if (after >= -BIGINT_BOUND) {
      // As the integer the number is: a number is sent as its shortest decimal, which beyond
      // 2^53 names another (2^60 as 1152921504606847000; -2^63 out of the bigint's range).
      params.push(BigInt(after));
      where += ` AND m.id > $${params.length}::bigint`;
    }
  }
  const place = (id: number, inOrder: "<" | ">", sameTime: "<" | ">=") => {
    if (!Number.isInteger(id) || Math.abs(id) >= BIGINT_BOUND) return false;
    params.push(BigInt(id));
    const at = `$${params.length}::bigint`;
    // The message's timestamp, by the primary key; NULL (no row) when the session has none.
    const time = `(SELECT c.timestamp FROM messages c WHERE c.id = ${at} AND c.session_id = $1)`;
    where += ` AND m.timestamp ${inOrder}= ${time}` +
      ` AND (m.timestamp ${inOrder} ${time} OR m.id ${sameTime} ${at})`;
    return true;
  };
  if (options.beforeId !== undefined && !place(options.beforeId, "<", "<")) return undefined;
  if (options.fromId !== undefined && !place(options.fromId, ">", ">=")) return undefined;
  if (!options.includeInactive) where += ` AND ${activeSql("m")}`;
  // As isShownInTranscript reads the value the row comes back with.
  if (options.excludeHidden) {
    where += ` AND (m.${EXTRA_COLUMN}->>'display_kind') IS DISTINCT FROM 'hidden'`;
  }
  return { where, params };
}

/**
 * The statement that reads the selected rows in order (`timestamp, id`),
 * the first or the last `take.count` of them when `take` is given, and its
 * parameters.
 *
 * @param selection What {@linkcode messageSelection} returned.
 * @param take `limit` or `last`, checked.
 * @returns The SQL and its parameters.
 */
export function selectedMessagesSql(
  selection: MessageSelection,
  take: CheckedMessagesOptions["take"],
): { sql: string; params: PgValue[] } {
  const rows = `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${selection.where}`;
  if (take === undefined) {
    return { sql: `${rows} ORDER BY m.timestamp, m.id`, params: selection.params };
  }
  const params = [...selection.params, take.count];
  const limit = `LIMIT $${params.length}::bigint`;
  const sql = take.newest
    // The last ones: read backwards along the index, then put back in order.
    ? `SELECT * FROM (${rows} ORDER BY m.timestamp DESC, m.id DESC ${limit}) m
       ORDER BY m.timestamp, m.id`
    : `${rows} ORDER BY m.timestamp, m.id ${limit}`;
  return { sql, params };
}
