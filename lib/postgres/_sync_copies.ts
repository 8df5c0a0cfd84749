/**
 * Sessions `hermes-state copy` put on the server under their file's own
 * ids, which `sync` of the same file then writes as `ORIGIN/ID`: each would
 * be stored twice (every title with its ` [ORIGIN]` twin, search hits and
 * usage doubled). So as a pass writes a session the server did not hold,
 * the copy of it is taken away in the same transaction: the server's
 * session under the bare id, recorded by no origin (a synced session is
 * recorded), started at the same time, each of whose messages is one of
 * the file's (role, time, text, tool calls and tool name): the file's
 * session holds it whole, and its title (the file's, as the copy had it or
 * renamed since) is then free for it.
 *
 * A copy holding more (made from another file whose sessions share those
 * ids and times: a cloned machine, a backup restored elsewhere, written on
 * since) is kept, as is the copy of a session whose messages the pass does
 * not all have in hand (the server held it already): the server then holds
 * both, and nothing is lost.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { PgQuery } from "./_client_types.ts";
import { deleteSessionRows } from "./_delete.ts";
import { INSERT_COLUMNS, type MessageValues } from "./_rows.ts";
import { encodeText, jsonParam } from "./_text_codec.ts";
import type { SourceSession } from "./_sync_source.ts";

/** A session a pass writes, with all its messages when the server held none of it. */
export interface CopyCandidate {
  /** The file's session. */
  readonly session: SourceSession;
  /**
   * Every one of its messages, a page at a time (read anew on each call);
   * `undefined` when the pass writes only some (the server holds the rest).
   */
  readonly messages?: () => Iterable<readonly MessageValues[]>;
}

/** Where a message's compared values sit in {@linkcode MessageValues}. */
const AT = Object.fromEntries(
  ["role", "timestamp", "content", "tool_calls", "tool_name"].map((
    c,
  ) => [c, INSERT_COLUMNS.indexOf(c)]),
) as Record<"role" | "timestamp" | "content" | "tool_calls" | "tool_name", number>;

/** The digest of a text as the server's `md5()` gives it, of the text as stored; `-` for NULL. */
function md5(text: unknown): string {
  if (text === null || text === undefined) return "-";
  return createHash("md5").update(encodeText(String(text))).digest("hex");
}

/** What a message is compared by: role, time, and the digests of its texts. */
function messageKey(
  role: unknown,
  timestamp: unknown,
  content: string,
  calls: string,
  tool: unknown,
): string {
  return JSON.stringify([role, Number(timestamp), content, calls, tool ?? null]);
}

/** Whether every message of the copy `id` is one of `messages` (counted: a repeat needs its twin). */
async function copyCovered(
  query: PgQuery,
  id: string,
  messages: () => Iterable<readonly MessageValues[]>,
): Promise<boolean> {
  const rows = await query(
    `SELECT role, timestamp,
            CASE WHEN content IS NULL THEN '-' ELSE md5(content) END AS content,
            CASE WHEN tool_calls IS NULL THEN '-' ELSE md5(tool_calls) END AS calls, tool_name
     FROM messages WHERE session_id = $1`,
    [id],
  );
  const left = new Map<string, number>();
  for (const row of rows) {
    const key = messageKey(
      row.role,
      row.timestamp,
      String(row.content),
      String(row.calls),
      row.tool_name,
    );
    left.set(key, (left.get(key) ?? 0) + 1);
  }
  for (const page of messages()) {
    if (left.size === 0) break;
    for (const values of page) {
      const key = messageKey(
        values[AT.role],
        values[AT.timestamp],
        md5(values[AT.content]),
        md5(values[AT.tool_calls]),
        values[AT.tool_name],
      );
      const count = left.get(key);
      if (count === undefined) continue;
      if (count > 1) left.set(key, count - 1);
      else left.delete(key);
    }
  }
  return left.size === 0;
}

/**
 * Deletes, in the caller's transaction, the copies `copy` made of
 * `candidates` on the server that hold nothing the file's sessions do not
 * (see the module's note).
 *
 * @param query The transaction's query function.
 * @param candidates The file's sessions a transaction of the pass writes.
 * @returns The ids of the copies deleted.
 */
export async function retireCopies(
  query: PgQuery,
  candidates: readonly CopyCandidate[],
): Promise<string[]> {
  const whole = candidates.filter((candidate) => candidate.messages !== undefined);
  if (whole.length === 0) return [];
  const wanted = whole.map(({ session }) => ({
    id: String(session.row.id),
    started: Number(session.row.started_at),
    count: session.count,
  }));
  // The copies with no more messages than the file's sessions.
  const rows = await query(
    `SELECT s.id FROM json_to_recordset($1::text::json)
       AS b(id text, started double precision, count bigint)
     JOIN sessions s ON s.id = b.id AND s.started_at = b.started
     WHERE NOT EXISTS (SELECT 1 FROM sync_sessions ss WHERE ss.session_id = s.id)
       AND (SELECT count(*) FROM messages m WHERE m.session_id = s.id) <= b.count`,
    [jsonParam(wanted)],
  );
  const byId = new Map(whole.map((candidate) => [String(candidate.session.row.id), candidate]));
  const ids: string[] = [];
  for (const row of rows) {
    const id = String(row.id);
    if (await copyCovered(query, id, byId.get(id)!.messages!)) ids.push(id);
  }
  // The copy's goal (`copy` carries it under the bare id) goes with it: the pass writes the file's.
  if (ids.length > 0) await deleteSessionRows(query, ids);
  return ids;
}
