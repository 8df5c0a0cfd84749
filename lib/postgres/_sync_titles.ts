/**
 * The titles `sync` gives the sessions it writes: titles stay unique on the
 * server, so a title another origin's session already holds gets the
 * suffix ` [<origin>]`, and is given back once no session holds it.
 *
 * @module
 */
import { isUniqueViolation } from "./_pg_errors.ts";
import type { PgClient, PgQuery } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import type { SourceSession } from "./_sync_source.ts";

/**
 * The titles a batch's sessions get on the server, by server id: the
 * file's, or suffixed with ` [<origin>]` where another session holds it,
 * or none when both are taken. One read for the whole batch; sessions are
 * settled in order, each seeing the titles the ones before it took. A
 * title a session of the batch holds on the server still counts as its
 * (one upsert writes them all, and the unique index is checked row by
 * row): one handed over on the host is settled by {@linkcode restoreTitles}.
 *
 * @param query The transaction's query function.
 * @param origin The origin.
 * @param sessions The batch's sessions.
 * @returns Each session's title (or `null`), by server id.
 */
export async function freeTitles(
  query: PgQuery,
  origin: string,
  sessions: readonly SourceSession[],
): Promise<Map<string, string | null>> {
  const wanted = sessions.map((session) => {
    const title = session.row.title;
    return {
      id: `${origin}/${session.row.id}`,
      candidates: typeof title === "string" && title !== "" ? [title, `${title} [${origin}]`] : [],
    };
  });
  const asked = wanted.flatMap((w) => w.candidates);
  const holder = new Map<string, string>();
  if (asked.length > 0) {
    const rows = await query(
      "SELECT id, title FROM sessions WHERE title IN (SELECT json_array_elements_text($1::text::json))",
      [jsonParam(asked)],
    );
    for (const row of rows) holder.set(String(row.title), String(row.id));
  }
  const titles = new Map<string, string | null>();
  for (const { id, candidates } of wanted) {
    const free = candidates.find((c) => (holder.get(c) ?? id) === id) ?? null;
    if (free !== null) holder.set(free, id);
    titles.set(id, free);
  }
  return titles;
}

/** Rounds of {@linkcode restoreTitles} at most: each one follows a title another round freed. */
const RESTORE_ROUNDS = 8;

/**
 * Gives the origin's sessions the titles their file has where the server
 * holds another: one suffixed with ` [<origin>]` ({@linkcode freeTitles})
 * gets the file's title once no session holds it (one that gave it up in
 * the same pass: a title handed from one session to another on the host,
 * or two swapped; or another origin's, since renamed or deleted); one with
 * no title while its file has one (both taken when its batch settled: a
 * session of a later batch gave one up) gets the first of the two that is
 * free now. Run by every pass, not only by one that wrote: a pass that
 * failed after some of its batches committed (or while settling these)
 * left such sessions with their rows recorded as shipped, and the next
 * pass settles them though it writes nothing else. Each is its own
 * statement, and a title freed by one is followed in the next round, so a
 * chain of hand-overs settles in order; a title taken meanwhile by another
 * pass is left as it is (the unique index refuses it). Any pass of the
 * origin writes the same here: left unfenced, as the lineage. Only the
 * sessions the file titles are asked about (none: no read at all); on a
 * settled store it is one read, which finds nothing.
 *
 * @param client The server.
 * @param origin The origin.
 * @param source The file's sessions, by id.
 */
export async function restoreTitles(
  client: PgClient,
  origin: string,
  source: ReadonlyMap<string, SourceSession>,
): Promise<void> {
  const suffix = ` [${origin}]`;
  // Only a session its file gives a title can be unsettled: most have none.
  const titled = [...source].filter(([, session]) => {
    const title = session.row.title;
    return typeof title === "string" && title !== "";
  }).map(([id]) => id);
  if (titled.length === 0) return;
  const asked = jsonParam(titled);
  for (let round = 0; round < RESTORE_ROUNDS; round++) {
    const unsettled = await client.query(
      `SELECT s.id, s.title, ss.source_id FROM sync_sessions ss
       JOIN sessions s ON s.id = ss.session_id
       WHERE ss.origin = $1 AND ss.source_id IN (SELECT json_array_elements_text($4::text::json))
         AND (s.title IS NULL OR (right(s.title, $2::int) = $3
           AND NOT EXISTS (SELECT 1 FROM sessions t WHERE t.title = left(s.title, -$2::int))))`,
      [origin, suffix.length, suffix, asked],
    );
    let moved = false;
    for (const row of unsettled) {
      const wanted = source.get(String(row.source_id))?.row.title;
      if (typeof wanted !== "string" || wanted === "") continue;
      const id = String(row.id);
      if (row.title === null || row.title === undefined) {
        moved = await takeTitle(client, id, wanted) ||
          await takeTitle(client, id, wanted + suffix) || moved;
      } else if (row.title === wanted + suffix) {
        moved = await takeTitle(client, id, wanted) || moved;
      }
    }
    if (!moved) return;
  }
}

/** Gives session `id` the title `title` when no session holds it; whether it did. */
async function takeTitle(client: PgClient, id: string, title: string): Promise<boolean> {
  try {
    const rows = await client.query(
      `UPDATE sessions SET title = $1
       WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM sessions t WHERE t.title = $1)
       RETURNING id`,
      [title, id],
    );
    return rows.length > 0;
  } catch (error) {
    if (!isUniqueViolation(error, "idx_sessions_title_unique")) throw error;
    return false;
  }
}
