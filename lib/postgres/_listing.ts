/**
 * The session listings of the PostgreSQL engine: `listSessionsRich` (by
 * start time, or by last activity, its page sought among the sessions
 * active lately), `searchSessions`, and the counts of both, each read
 * through the store's query.
 *
 * @module
 */
import { checkOptionalText, checkTextList } from "../core/session_options.ts";
import type {
  ListSessionsOptions,
  SearchSessionsOptions,
  SessionCountOptions,
} from "../core/listing_options.ts";
import { checkCount } from "../core/paging.ts";
import type { RichSessionRow, SessionRowWithActivity } from "../core/types.ts";
import { withTipLent } from "../core/listing_rows.ts";
import type { PgQuery, PgValue } from "./_client_types.ts";
import { SESSION_COLUMNS, withPreview } from "./_rows.ts";
import { notArchivedSql } from "./_extra.ts";
import { jsonParam } from "./_text_codec.ts";
import {
  BY_ORIGIN,
  type OriginFilter,
  sourceAndOrigin,
  startedRangeClauses,
} from "./_session_filters.ts";
import { compressionTipPg } from "./_lineage.ts";

/** A child session of `s` exists (delegates, branches, continuations). */
const HAS_CHILDREN = "EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id)";

/**
 * The listing columns of session `s`: the first user message's first 200
 * characters, and the time of its last message. The first message is found
 * by its timestamp first (one step of the session index, which orders by
 * time only), then by id among the rows that share it: ordering by
 * `timestamp, id` sorted all of a session's user messages, 42–48 ms for a
 * page of 20 sessions of 10,000 messages. The rows a newer Hermes's search
 * skips (`search_hidden`: rewound, hidden) are skipped, as its preview does.
 */
const RICH_COLUMNS = `
  COALESCE(
    (SELECT substr(m.content, 1, 200)
     FROM messages m
     WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
       AND NOT m.search_hidden
       AND m.timestamp = (
         SELECT y.timestamp FROM messages y
         WHERE y.session_id = s.id AND y.role = 'user' AND y.content IS NOT NULL
           AND NOT y.search_hidden
         ORDER BY y.timestamp LIMIT 1)
     ORDER BY m.id LIMIT 1),
    ''
  ) AS _preview_raw,
  COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at)
    AS last_active`;

const VISIBLE_ONLY = `(s.parent_session_id IS NULL
  OR EXISTS (SELECT 1 FROM sessions p
             WHERE p.id = s.parent_session_id
               AND p.end_reason = 'branched'
               AND s.started_at >= p.ended_at))`;

/** The WHERE of a listing and its parameters (`$1`…), as `listing.ts` filters on SQLite. */
function listingFilters(
  options: ListSessionsOptions & OriginFilter,
): { where: string; params: PgValue[] } {
  const clauses: string[] = [];
  const params: PgValue[] = [];
  checkOptionalText("list sessions", "source", options.source);
  checkTextList("list sessions", "excludeSources", options.excludeSources);
  checkOptionalText("list sessions", "origin", options.origin);
  if (!options.includeChildren) clauses.push(VISIBLE_ONLY);
  if (!options.includeArchived) clauses.push(notArchivedSql("s"));
  if (options.source) {
    params.push(options.source);
    clauses.push(`s.source = $${params.length}`);
  }
  if (options.excludeSources && options.excludeSources.length > 0) {
    params.push(jsonParam(options.excludeSources));
    clauses.push(
      `s.source NOT IN (SELECT json_array_elements_text($${params.length}::text::json))`,
    );
  }
  clauses.push(...startedRangeClauses(options, params));
  if (options.hasChildren) clauses.push(HAS_CHILDREN);
  if (options.origin) {
    params.push(options.origin);
    clauses.push(BY_ORIGIN(params.length));
  }
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

/**
 * Whether a listing's filters keep few of the sessions active lately, so
 * that seeking its page among them ({@linkcode byLastActive}) would only add to reading the whole listing: one
 * origin or source, sessions started before a time, parents only.
 */
function recencyBlind(options: ListSessionsOptions & OriginFilter): boolean {
  return Boolean(options.origin || options.source || options.hasChildren) ||
    (options.startedBefore !== undefined && options.startedBefore !== null);
}

/**
 * A page of the listing (`listSessionsRich`): by start time, or by last
 * activity; a compressed session shown as its chain's tip unless asked not to.
 *
 * @param query The store's query.
 * @param options The filters, page and order.
 * @returns The rows, previews made.
 */
export async function listSessionsRichPg(
  query: PgQuery,
  options: ListSessionsOptions & OriginFilter,
): Promise<RichSessionRow[]> {
  options ??= {};
  const limit = checkCount("list sessions", "limit", options.limit ?? 20);
  const offset = checkCount("list sessions", "offset", options.offset ?? 0);
  const { where, params } = listingFilters(options);
  const n = params.length + 1;
  const rows =
    (options.orderByLastActive
      ? await byLastActive(query, where, params, limit, offset, !recencyBlind(options))
      : await query(
        `WITH page AS (
           SELECT s.id FROM sessions s ${where}
           ORDER BY s.started_at DESC, s.id COLLATE "C" LIMIT $${n} OFFSET $${n + 1}
         )
         SELECT ${SESSION_COLUMNS}, ${RICH_COLUMNS}
         FROM page JOIN sessions s ON s.id = page.id
         ORDER BY s.started_at DESC, s.id COLLATE "C"`,
        [...params, limit, offset],
      )).map(withPreview);
  if (options.projectCompressionTips === false || options.includeChildren) return rows;
  const projected: RichSessionRow[] = [];
  for (const row of rows) projected.push(await projectTip(query, row));
  return projected;
}

/**
 * A page of the listing by last activity. Each listed session's activity
 * (its newest message, else its start; a compression chain's, the newest
 * of its members') is one index probe: at a million sessions, reading
 * them all took 6.5 s. So the page is first sought among the sessions
 * active since a time T, taken at the 8×, then 64×, then 512×
 * (offset + limit)-th newest message: the sessions with a message at or
 * after T, those without messages started at or after T, and the
 * sessions above them (chain roots). Every listed entry whose activity is
 * at or after T is among them, so when at least offset + limit of them
 * are, the page is theirs, exactly as the whole listing orders it; else
 * the next T, and at last the whole listing. Without `seek` (a filter that
 * keeps few of the recently active: {@linkcode recencyBlind}), straight
 * to the whole listing.
 */
async function byLastActive(
  query: PgQuery,
  where: string,
  params: readonly PgValue[],
  limit: number,
  offset: number,
  seek: boolean,
): Promise<Record<string, unknown>[]> {
  if (limit === 0) return [];
  const n = params.length + 1;
  for (const spread of seek ? [8, 64, 512] : []) {
    const [mark] = await query(
      "SELECT timestamp FROM messages ORDER BY timestamp DESC OFFSET $1 LIMIT 1",
      [(offset + limit) * spread],
    );
    if (mark === undefined) break; // fewer messages than that: the whole listing is as cheap
    const rows = await query(byLastActiveSql(where, n, n + 2), [
      ...params,
      limit,
      offset,
      Number(mark.timestamp),
    ]);
    if (rows.length === limit) return rows;
    // Under half a page: the recent ones are mostly filtered out; a wider bound costs more.
    if (rows.length < limit / 2) break;
  }
  return await query(byLastActiveSql(where, n), [...params, limit, offset]);
}

/**
 * The listing by last activity, `LIMIT $n OFFSET $n+1`; with `since`, only
 * among the entries active at or after `$since` (see {@linkcode byLastActive}).
 */
function byLastActiveSql(where: string, n: number, since?: number): string {
  const lastMessage = (id: string) =>
    `(SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ${id})`;
  const bounded = since === undefined ? "" : `
     active(id) AS (
       SELECT DISTINCT m.session_id FROM messages m WHERE m.timestamp >= $${since}
       UNION
       SELECT s.id FROM sessions s
       WHERE s.started_at >= $${since}
         AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
     ),
     above(id) AS (
       SELECT id FROM active
       UNION
       SELECT s.parent_session_id FROM above JOIN sessions s ON s.id = above.id
       WHERE s.parent_session_id IS NOT NULL
     ),`;
  const among = since === undefined
    ? where
    : `${where ? `${where} AND` : "WHERE"} s.id IN (SELECT id FROM above)`;
  return `WITH RECURSIVE${bounded}
     listed(id, started_at, end_reason, ended_at) AS (
       SELECT s.id, s.started_at, s.end_reason, s.ended_at FROM sessions s ${among}
     ),
     chain(root_id, root_started, cur_id, cur_started, cur_reason, cur_ended) AS (
       SELECT id, started_at, id, started_at, end_reason, ended_at
       FROM listed WHERE end_reason = 'compression'
       UNION
       SELECT chain.root_id, chain.root_started,
         child.id, child.started_at, child.end_reason, child.ended_at
       FROM chain JOIN sessions child ON child.parent_session_id = chain.cur_id
       WHERE chain.cur_reason = 'compression' AND child.started_at >= chain.cur_ended
     ),
     activity(root_id, root_started, effective) AS (
       SELECT id, started_at, COALESCE(${lastMessage("listed.id")}, started_at)
       FROM listed WHERE end_reason IS DISTINCT FROM 'compression'
       UNION ALL
       SELECT root_id, root_started, MAX(COALESCE(${lastMessage("chain.cur_id")}, cur_started))
       FROM chain GROUP BY root_id, root_started
     ),
     page AS (
       SELECT root_id, root_started, effective FROM activity
       ${since === undefined ? "" : `WHERE effective >= $${since}`}
       ORDER BY effective DESC, root_started DESC, root_id COLLATE "C" DESC
       LIMIT $${n} OFFSET $${n + 1}
     )
     SELECT ${SESSION_COLUMNS}, ${RICH_COLUMNS}
     FROM page JOIN sessions s ON s.id = page.root_id
     ORDER BY page.effective DESC, page.root_started DESC, page.root_id COLLATE "C" DESC`;
}

/** A compressed session's row with what its chain's tip lends it (`withTipLent`); another row as it is. */
async function projectTip(query: PgQuery, row: RichSessionRow): Promise<RichSessionRow> {
  if (row.end_reason !== "compression") return row;
  const tipId = await compressionTipPg(query, row.id);
  if (tipId === row.id) return row;
  const rows = await query(
    `SELECT ${SESSION_COLUMNS}, ${RICH_COLUMNS} FROM sessions s WHERE s.id = $1`,
    [tipId],
  );
  if (rows.length === 0) return row;
  return withTipLent(row, withPreview(rows[0]));
}

/**
 * Sessions by last activity (`searchSessions`), of one source and one
 * origin when given.
 *
 * @param query The store's query.
 * @param options The filters and page.
 * @returns The rows with their `last_active`.
 */
export async function searchSessionsPg(
  query: PgQuery,
  options: SearchSessionsOptions & OriginFilter,
): Promise<SessionRowWithActivity[]> {
  options ??= {};
  const limit = checkCount("search sessions", "limit", options.limit ?? 20);
  const offset = checkCount("search sessions", "offset", options.offset ?? 0);
  const params: PgValue[] = [limit, offset];
  const where = sourceAndOrigin(options, params, "search sessions");
  return await query(
    `SELECT ${SESSION_COLUMNS},
         COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)
           AS last_active
       FROM sessions s ${where}
       ORDER BY last_active DESC, s.started_at DESC, s.id COLLATE "C" DESC
       LIMIT $1 OFFSET $2`,
    params,
  ) as SessionRowWithActivity[];
}

/**
 * The sessions a listing with `options` shows in all (`listedSessionCount`).
 *
 * @param query The store's query.
 * @param options The listing's filters.
 * @returns Their number.
 */
export async function listedSessionCountPg(
  query: PgQuery,
  options: ListSessionsOptions & OriginFilter,
): Promise<number> {
  options ??= {};
  const { where, params } = listingFilters(options);
  const rows = await query(`SELECT COUNT(*) AS n FROM sessions s ${where}`, params);
  return Number(rows[0].n);
}

/**
 * The sessions of one source and one origin when given (`sessionCount`).
 *
 * @param query The store's query.
 * @param options The filters.
 * @returns Their number.
 */
export async function sessionCountPg(
  query: PgQuery,
  options: SessionCountOptions & OriginFilter,
): Promise<number> {
  options ??= {};
  const params: PgValue[] = [];
  const where = sourceAndOrigin(options, params, "count sessions");
  const rows = await query(`SELECT COUNT(*) AS n FROM sessions s ${where}`, params);
  return Number(rows[0].n);
}
