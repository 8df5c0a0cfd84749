/**
 * The titles `sync` gives the sessions it writes: titles stay unique on the
 * server, so a title another origin's session already holds gets the
 * suffix ` [<origin>]`, and is given back once no session holds it.
 *
 * @module
 */
import { isUniqueViolation, type PgClient, type PgQuery } from "./_client.ts";
import { jsonParam } from "./_text_codec.ts";
import type { SourceSession } from "./_sync_source.ts";

/**
 * The titles a batch's sessions get on the server, by server id: the
 * file's, or suffixed with ` [<origin>]` where another session holds it,
 * or none when both are taken. One read for the whole batch; sessions are
 * settled in order, each seeing the titles the ones before it took.
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

/**
 * Gives back their file's title to the origin's sessions that carry it with
 * the origin's suffix ({@linkcode freeTitles}) where no session holds it
 * any more: one that gave it up in the same pass (a title handed from one
 * session to another on the host, or two swapped), or another origin's
 * since renamed or deleted. Each is its own statement, so a chain of
 * hand-overs settles in order; a title taken meanwhile by another pass is
 * left as it is (the unique index refuses it). Any pass of the origin
 * writes the same here: left unfenced, as the lineage.
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
  const suffixed = await client.query(
    `SELECT s.id, s.title, ss.source_id FROM sessions s
     JOIN sync_sessions ss ON ss.session_id = s.id
     WHERE ss.origin = $1 AND right(s.title, $2) = $3`,
    [origin, suffix.length, suffix],
  );
  for (const row of suffixed) {
    const wanted = source.get(String(row.source_id))?.row.title;
    if (typeof wanted !== "string" || wanted === "" || row.title !== wanted + suffix) continue;
    try {
      await client.query(
        `UPDATE sessions SET title = $1
         WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM sessions t WHERE t.title = $1)`,
        [wanted, String(row.id)],
      );
    } catch (error) {
      if (!isUniqueViolation(error, "idx_sessions_title_unique")) throw error;
    }
  }
}
