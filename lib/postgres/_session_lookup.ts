/**
 * The PostgreSQL engine's ways to find a session: by id or the start of
 * one, and by title (a lineage's numbered titles too), each read through
 * the store's query. A prefix is matched as SQLite's `LIKE` matches it:
 * `ILIKE` in the "C" collation, which folds ASCII letters only (in the
 * database's own collation, `C.UTF-8` or a language's, it folds `É` to `é`
 * too, and found sessions SQLite does not).
 *
 * @module
 */
import { checkKeyText } from "../core/session_options.ts";
import type { PrefixMatches } from "../core/listing_options.ts";
import { checkCount } from "../core/paging.ts";
import { nextLineageTitle, titleStem } from "../core/titles.ts";
import type { SessionRow } from "../core/types.ts";
import { escapeLike } from "../core/like_pattern.ts";
import type { PgQuery } from "./_client_types.ts";
import { SESSION_COLUMNS } from "./_rows.ts";

/**
 * The session `idOrPrefix` names (`resolveSessionId`): its id exactly, else
 * the one session whose id starts with it.
 *
 * @param query The store's query.
 * @param idOrPrefix An id or the start of one.
 * @returns The id, or `undefined` when none or several match.
 */
export async function resolveSessionIdPg(
  query: PgQuery,
  idOrPrefix: string,
): Promise<string | undefined> {
  checkKeyText("resolve session id", "idOrPrefix", idOrPrefix);
  const exact = await query("SELECT id FROM sessions WHERE id = $1", [idOrPrefix]);
  if (exact.length > 0) return exact[0].id as string;
  const rows = await query(
    `SELECT id FROM sessions WHERE id COLLATE "C" ILIKE $1 ESCAPE E'\\\\'
       ORDER BY started_at DESC LIMIT 2`,
    [`${escapeLike(idOrPrefix)}%`],
  );
  return rows.length === 1 ? rows[0].id as string : undefined;
}

/**
 * The sessions whose id starts with `prefix` (`sessionIdsWithPrefix`), the
 * newest first.
 *
 * @param query The store's query.
 * @param prefix The start of an id.
 * @param options How many ids at most (10 by default).
 * @returns How many match, and the first ids.
 */
export async function sessionIdsWithPrefixPg(
  query: PgQuery,
  prefix: string,
  options: { limit?: number },
): Promise<PrefixMatches> {
  checkKeyText("find sessions by id prefix", "prefix", prefix);
  const limit = checkCount("find sessions by id prefix", "limit", (options ?? {}).limit ?? 10);
  const pattern = `${escapeLike(prefix)}%`;
  const count = await query(
    `SELECT COUNT(*) AS n FROM sessions WHERE id COLLATE "C" ILIKE $1 ESCAPE E'\\\\'`,
    [pattern],
  );
  const rows = await query(
    `SELECT id FROM sessions WHERE id COLLATE "C" ILIKE $1 ESCAPE E'\\\\'
       ORDER BY started_at DESC, id COLLATE "C" LIMIT $2`,
    [pattern, limit],
  );
  return { count: Number(count[0].n), ids: rows.map((row) => row.id as string) };
}

/**
 * A session's title (`getSessionTitle`).
 *
 * @param query The store's query.
 * @param id A session id.
 * @returns The title (`null` when it has none), or `undefined` when the session is unknown.
 */
export async function sessionTitlePg(
  query: PgQuery,
  id: string,
): Promise<string | null | undefined> {
  checkKeyText("read title", "id", id);
  const rows = await query("SELECT title FROM sessions WHERE id = $1", [id]);
  return rows.length === 0 ? undefined : rows[0].title as string | null;
}

/**
 * The session titled `title` exactly (`getSessionByTitle`).
 *
 * @param query The store's query.
 * @param title A title.
 * @returns Its row, or `undefined`.
 */
export async function sessionByTitlePg(
  query: PgQuery,
  title: string,
): Promise<SessionRow | undefined> {
  checkKeyText("find session by title", "title", title);
  const rows = await query(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.title = $1`, [
    title,
  ]);
  return rows[0] as SessionRow | undefined;
}

/**
 * The session a title names (`resolveSessionByTitle`): the newest of its
 * numbered lineage (`title #n`), else the one titled so.
 *
 * @param query The store's query.
 * @param title A title.
 * @returns The id, or `undefined`.
 */
export async function resolveSessionByTitlePg(
  query: PgQuery,
  title: string,
): Promise<string | undefined> {
  checkKeyText("resolve title", "title", title);
  const numbered = await query(
    `SELECT id FROM sessions WHERE title COLLATE "C" ILIKE $1 ESCAPE E'\\\\'
       ORDER BY started_at DESC LIMIT 1`,
    [`${escapeLike(title)} #%`],
  );
  if (numbered.length > 0) return numbered[0].id as string;
  return (await sessionByTitlePg(query, title))?.id;
}

/**
 * The next free title of `base`'s lineage (`getNextTitleInLineage`).
 *
 * @param query The store's query.
 * @param base A title, numbered or not.
 * @returns The title.
 */
export async function nextTitleInLineagePg(query: PgQuery, base: string): Promise<string> {
  checkKeyText("number title", "base", base);
  const stem = titleStem(base);
  const rows = await query(
    `SELECT title FROM sessions WHERE title = $1 OR title COLLATE "C" ILIKE $2 ESCAPE E'\\\\'`,
    [stem, `${escapeLike(stem)} #%`],
  );
  return nextLineageTitle(stem, rows.map((row) => row.title));
}
