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

/**
 * Gives back their file's title to the origin's sessions that carry it with
 * the origin's suffix ({@linkcode freeTitles}) where no session holds it
 * any more: one that gave it up in the same pass (a title handed from one
 * session to another on the host, or two swapped), or another origin's
 * since renamed or deleted. And the sessions this pass wrote that got no
 * title while their file has one (both taken when their batch settled: a
 * session of a later batch gave one up) get the first of the two that is
 * free now. Each is its own statement, so a chain of hand-overs settles in
 * order; a title taken meanwhile by another pass is left as it is (the
 * unique index refuses it). Any pass of the origin writes the same here:
 * left unfenced, as the lineage.
 *
 * @param client The server.
 * @param origin The origin.
 * @param source The file's sessions, by id.
 * @param written The ids in the file of the sessions whose rows this pass wrote.
 */
export async function restoreTitles(
  client: PgClient,
  origin: string,
  source: ReadonlyMap<string, SourceSession>,
  written: readonly string[] = [],
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
    await takeTitle(client, String(row.id), wanted);
  }
  const titled = written.filter((id) => {
    const title = source.get(id)?.row.title;
    return typeof title === "string" && title !== "";
  });
  if (titled.length === 0) return;
  const untitled = await client.query(
    `SELECT s.id, ss.source_id FROM sessions s
     JOIN sync_sessions ss ON ss.session_id = s.id
     WHERE ss.origin = $1 AND s.title IS NULL
       AND ss.source_id IN (SELECT json_array_elements_text($2::text::json))`,
    [origin, jsonParam(titled)],
  );
  for (const row of untitled) {
    const wanted = String(source.get(String(row.source_id))!.row.title);
    if (!await takeTitle(client, String(row.id), wanted)) {
      await takeTitle(client, String(row.id), wanted + suffix);
    }
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
