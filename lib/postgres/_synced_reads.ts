/**
 * What the PostgreSQL engine tells of `sync`: the origins it shipped from,
 * the origin of each shipped session, and the sessions by their id on their
 * origin, each read through the store's query.
 *
 * @module
 */
import type { PrefixMatches } from "../core/listing_options.ts";
import type { SyncOrigin } from "../core/synced_store.ts";
import { escapeLike } from "../core/like_pattern.ts";
import type { PgQuery } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";

/**
 * The origins `sync` has shipped sessions from (`syncOrigins`), by name.
 *
 * @param query The store's query.
 * @returns Each origin, its host, path, last pass and sessions.
 */
export async function syncOriginsPg(query: PgQuery): Promise<SyncOrigin[]> {
  const rows = await query(
    `SELECT o.origin, o.host, o.path, o.last_pass_at,
              (SELECT COUNT(*) FROM sync_sessions so WHERE so.origin = o.origin) AS sessions
       FROM sync_origins o ORDER BY o.origin COLLATE "C"`,
  );
  return rows.map((row) => ({
    origin: row.origin as string,
    host: row.host as string,
    path: row.path as string,
    lastPassAt: row.last_pass_at === null ? null : Number(row.last_pass_at),
    sessions: Number(row.sessions),
  }));
}

/**
 * The shipped sessions whose id on their origin is `id`, else starts with
 * it (`syncedSessionIds`), the newest first.
 *
 * @param query The store's query.
 * @param id An id on the origin, or the start of one.
 * @param options How many ids at most (10 by default).
 * @returns How many match, and the first server ids.
 */
export async function syncedSessionIdsPg(
  query: PgQuery,
  id: string,
  options: { limit?: number },
): Promise<PrefixMatches> {
  const limit = options.limit ?? 10;
  for (const [test, value] of [["= $1", id], ["ILIKE $1 ESCAPE E'\\\\'", `${escapeLike(id)}%`]]) {
    const rows = await query(
      `SELECT so.session_id AS id, COUNT(*) OVER () AS n
         FROM sync_sessions so JOIN sessions s ON s.id = so.session_id
         WHERE so.source_id ${test}
         ORDER BY s.started_at DESC, so.session_id COLLATE "C" LIMIT $2`,
      [value, limit],
    );
    if (rows.length > 0) {
      return { count: Number(rows[0].n), ids: rows.map((row) => row.id as string) };
    }
  }
  return { count: 0, ids: [] };
}

/**
 * The origin each of `ids` was shipped from (`syncedFrom`).
 *
 * @param query The store's query.
 * @param ids Server session ids.
 * @returns The origin by id, for the shipped ones.
 */
export async function syncedFromPg(
  query: PgQuery,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await query(
    `SELECT session_id, origin FROM sync_sessions
       WHERE session_id IN (SELECT json_array_elements_text($1::text::json))`,
    [jsonParam(ids)],
  );
  return new Map(rows.map((row) => [String(row.session_id), String(row.origin)]));
}
