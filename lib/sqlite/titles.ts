/**
 * Session titles and id resolution: cleaning a title, keeping titles unique,
 * numbering the titles of a lineage (`"my project #3"`), and resolving what a
 * user typed (a title, an id, an id prefix) to a session.
 *
 * @module
 */
import { checkCount } from "../core/paging.ts";
import { sessionsRead } from "./schema/read_views.ts";
import type { Store } from "./store.ts";
import type { SessionRow } from "../core/types.ts";
import { TitleError } from "../core/errors.ts";
import { nextLineageTitle, sanitizeTitle, titleStem } from "../core/titles.ts";
import { startsWith } from "./starts_with.ts";
import type { PrefixMatches } from "../core/listing_options.ts";
import { checkKeyText } from "../core/session_options.ts";

/** Implements `SessionDB.setSessionTitle`: sanitizes, checks uniqueness, updates. */
export function setSessionTitle(store: Store, id: string, title: string | null): boolean {
  checkKeyText("set title", "id", id);
  const clean = sanitizeTitle(title);
  return store.write(() => {
    if (clean) {
      const conflict = store.statement("SELECT id FROM sessions WHERE title = ? AND id != ?")
        .get(clean, id);
      if (conflict !== undefined) {
        throw new TitleError(`Title '${clean}' is already in use by session ${conflict.id}`);
      }
    }
    return store.statement("UPDATE sessions SET title = ? WHERE id = ?").run(clean, id).changes > 0;
  });
}

/** Implements `SessionDB.getSessionTitle`: the title, `null`, or `undefined`. */
export function getSessionTitle(store: Store, id: string): string | null | undefined {
  checkKeyText("read title", "id", id);
  const row = store.statement("SELECT title FROM sessions WHERE id = ?").get(id);
  return row === undefined ? undefined : row.title as string | null;
}

/** Implements `SessionDB.getSessionByTitle`: the row with exactly this title. */
export function getSessionByTitle(store: Store, title: string): SessionRow | undefined {
  checkKeyText("find session by title", "title", title);
  return store.statement(`SELECT * FROM ${sessionsRead(store)} WHERE title = ?`).get(title) as
    | SessionRow
    | undefined;
}

/**
 * Implements `SessionDB.resolveSessionByTitle`: the newest `"<title> #N"`, else the exact title.
 */
export function resolveSessionByTitle(store: Store, title: string): string | undefined {
  checkKeyText("resolve title", "title", title);
  const variant = startsWith("title", `${title} #`);
  const numbered = store.statement(
    `SELECT id, title, started_at FROM sessions WHERE ${variant.sql} ORDER BY started_at DESC`,
  ).get(...variant.params);
  if (numbered !== undefined) return numbered.id as string;
  return getSessionByTitle(store, title)?.id;
}

/** Implements `SessionDB.getNextTitleInLineage`: the base with the next free number. */
export function getNextTitleInLineage(store: Store, base: string): string {
  checkKeyText("number title", "base", base);
  const stem = titleStem(base);
  const variant = startsWith("title", `${stem} #`);
  const rows = store.statement(`SELECT title FROM sessions WHERE title = ? OR ${variant.sql}`)
    .all(stem, ...variant.params);
  return nextLineageTitle(stem, rows.map((row) => row.title));
}

/** Implements `SessionDB.resolveSessionId`: an exact id, else a unique escaped `LIKE` prefix. */
export function resolveSessionId(store: Store, idOrPrefix: string): string | undefined {
  checkKeyText("resolve session id", "idOrPrefix", idOrPrefix);
  const exact = store.statement("SELECT id FROM sessions WHERE id = ?").get(idOrPrefix);
  if (exact !== undefined) return exact.id as string;
  const prefix = startsWith("id", idOrPrefix);
  const rows = store.statement(
    `SELECT id FROM sessions WHERE ${prefix.sql} ORDER BY started_at DESC LIMIT 2`,
  ).all(...prefix.params);
  return rows.length === 1 ? rows[0].id as string : undefined;
}

/**
 * The sessions whose id starts with `prefix` (`\`, `%` and `_` match
 * literally), for telling a user which ones an ambiguous prefix names.
 *
 * @param store The open store.
 * @param prefix The id prefix.
 * @param options `limit`: the most ids to return (default 10).
 * @returns The count and the newest-started ids.
 *
 * @example
 * ```ts ignore
 * db.sessionIdsWithPrefix("2026"); // { count: 35, ids: ["20260429_…", …] }
 * ```
 */
export function sessionIdsWithPrefix(
  store: Store,
  prefix: string,
  options: { limit?: number } = {},
): PrefixMatches {
  checkKeyText("find sessions by id prefix", "prefix", prefix);
  const limit = checkCount("find sessions by id prefix", "limit", options.limit ?? 10);
  const match = startsWith("id", prefix);
  const count = Number(
    store.statement(`SELECT count(*) AS n FROM sessions WHERE ${match.sql}`).get(...match.params)
      ?.n,
  );
  const ids = store.statement(
    `SELECT id FROM sessions WHERE ${match.sql} ORDER BY started_at DESC, id LIMIT ?`,
  ).all(...match.params, limit).map((row) => row.id as string);
  return { count, ids };
}
