/**
 * What a `sync` pass writes once its sessions are written: the digests of
 * sessions an earlier release recorded otherwise, each session's parent
 * within the origin, and the time of the pass.
 *
 * @module
 */
import type { PgClient } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { type Pass, passTransaction } from "./_sync_write.ts";

/** Seconds between the recorded times of passes that write nothing (see {@linkcode recordPassTime}). */
const IDLE_PASS_RECORDED_EVERY = 60;

/** Digests to record of unchanged sessions, by their server ids. */
export interface NewDigests {
  /** Sessions an earlier release recorded with the whole row's digest: the row's digest now. */
  readonly rows: readonly { digest: string; id: string }[];
  /** Sessions recorded before migration 8 without a message digest: theirs now. */
  readonly messages: readonly { digest: number; id: string }[];
  /**
   * Sessions whose visibility columns the server holds as the file has
   * them, recorded without that digest or with another: the file's now.
   */
  readonly shown: readonly { digest: string; id: string }[];
}

/**
 * Records digests of sessions whose content is unchanged, in one
 * transaction of the pass (nothing shipped).
 *
 * @param client The server.
 * @param pass The pass.
 * @param digests The digests.
 */
export async function recordDigests(
  client: PgClient,
  pass: Pass,
  digests: NewDigests,
): Promise<void> {
  const { rows, messages, shown } = digests;
  if (rows.length === 0 && messages.length === 0 && shown.length === 0) return;
  await passTransaction(client, pass, async (query) => {
    await query(
      `UPDATE sync_sessions s SET row_digest = d.digest
       FROM json_to_recordset($1::text::json) AS d(digest text, id text)
       WHERE s.session_id = d.id`,
      [jsonParam(digests.rows)],
    );
    await query(
      `UPDATE sync_sessions s SET message_digest = d.digest
       FROM json_to_recordset($1::text::json) AS d(digest bigint, id text)
       WHERE s.session_id = d.id AND s.message_digest IS NULL`,
      [jsonParam(digests.messages)],
    );
    if (shown.length === 0) return;
    await query(
      `UPDATE sync_sessions s SET shown_digest = d.digest
       FROM json_to_recordset($1::text::json) AS d(digest text, id text)
       WHERE s.session_id = d.id`,
      [jsonParam(shown)],
    );
  });
}

/**
 * Links each session of the origin to its parent, when the server has it
 * (what any pass of the origin writes here is the same: left unfenced).
 *
 * @param client The server.
 * @param origin The origin.
 */
export async function linkParents(client: PgClient, origin: string): Promise<void> {
  await client.query(
    `UPDATE sessions s SET parent_session_id = p.id
     FROM sync_sessions ss LEFT JOIN sessions p ON p.id = ss.origin || '/' || ss.source_parent
     WHERE ss.origin = $1 AND s.id = ss.session_id
       AND s.parent_session_id IS DISTINCT FROM p.id`,
    [origin],
  );
}

/**
 * Records the time of the pass. A pass that wrote nothing records it only
 * once a minute: each write moves the store's change marker, which would
 * wake every live page every few seconds per host. (A time ahead of this
 * host's clock, from another host or a clock set back, is replaced.)
 *
 * @param client The server.
 * @param origin The origin.
 * @param wrote Whether the pass wrote anything.
 */
export async function recordPassTime(
  client: PgClient,
  origin: string,
  wrote: boolean,
): Promise<void> {
  await client.query(
    `UPDATE sync_origins SET last_pass_at = $1::double precision
     WHERE origin = $2
       AND ($3::boolean OR last_pass_at IS NULL OR last_pass_at > $1::double precision
            OR last_pass_at <= $1::double precision - $4)`,
    [Date.now() / 1000, origin, wrote, IDLE_PASS_RECORDED_EVERY],
  );
}
