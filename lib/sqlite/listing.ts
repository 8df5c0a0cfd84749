/**
 * Session listings with previews and last activity, as `hermes sessions list`
 * shows them, and counts.
 *
 * @module
 */
import type { Store } from "./store.ts";
import { sessionsRead } from "./schema/read_views.ts";
import type { SqlRow, SqlValue } from "./driver/types.ts";
import type { RichSessionRow, SessionRowWithActivity } from "../core/types.ts";
import { getCompressionTip } from "./lineage.ts";
import { checkCount } from "../core/paging.ts";
import { previewText, withTipLent } from "../core/listing_rows.ts";
import { rowsWithBlobsAsText, withBlobsAsText } from "../core/blob_text.ts";
import type {
  ListSessionsOptions,
  SearchSessionsOptions,
  SessionCountOptions,
} from "../core/listing_options.ts";
import { checkStartedRange } from "../core/listing_options.ts";
import { checkOptionalText, checkTextList } from "../core/session_options.ts";
import { visibilityOf, visibilitySql } from "./search/filters.ts";

/**
 * The listing columns of session `s`: the raw preview (the first user
 * message, newlines as spaces, 63 characters; SQLite's SUBSTR also stops at a
 * NUL, so multimodal content gives '') and the time of the last message.
 * The same SQL as Python's, so the text comes out identical. In a newer
 * Hermes's file the preview skips the rows its search skips (rewound,
 * hidden), as it does.
 */
function richColumns(store: Store): string {
  return `
  COALESCE(
    (SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63)
     FROM messages m
     WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL${
    visibilitySql(visibilityOf(store))
  }
     ORDER BY m.timestamp, m.id LIMIT 1),
    ''
  ) AS _preview_raw,
  COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at)
    AS last_active`;
}

/** Listed children: `/branch` children started after their parent ended as `branched`. */
const VISIBLE_ONLY = `(s.parent_session_id IS NULL
  OR EXISTS (SELECT 1 FROM sessions p
             WHERE p.id = s.parent_session_id
               AND p.end_reason = 'branched'
               AND s.started_at >= p.ended_at))`;

/**
 * Replaces `_preview_raw` with `preview`: stripped, 60 code points, `...`
 * when cut. Its BLOBs are read as text before (`core/blob_text.ts`): a
 * BLOB in a column meant for text is listed as its bytes read as UTF-8.
 */
function withPreview(row: SqlRow): RichSessionRow {
  const value = row._preview_raw;
  delete row._preview_raw;
  const text = String(value ?? "");
  return Object.assign(row, { preview: previewText(text) }) as unknown as RichSessionRow;
}

/**
 * The WHERE clauses of a start-time range on sessions `s` (a listing's, an
 * export's), the bounds checked, with their values in order.
 *
 * @param options `startedAfter` and `startedBefore`.
 * @param action What the caller does, for the error (`list sessions`).
 * @returns No clause for a bound not given.
 * @throws {RangeError} When a bound is not a finite number.
 */
export function startedRangeClauses(
  options: Pick<ListSessionsOptions, "startedAfter" | "startedBefore">,
  action?: string,
): { clauses: string[]; params: number[] } {
  const range = checkStartedRange(options, action);
  const clauses: string[] = [];
  const params: number[] = [];
  if (range.after !== null) {
    clauses.push("s.started_at >= ?");
    params.push(range.after);
  }
  if (range.before !== null) {
    clauses.push("s.started_at < ?");
    params.push(range.before);
  }
  return { clauses, params };
}

/** A child session of `s` exists (delegates, branches, continuations). */
export const HAS_CHILDREN = "EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id)";

function filters(
  store: Store,
  options: ListSessionsOptions,
): { where: string; params: SqlValue[] } {
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  checkOptionalText("list sessions", "source", options.source);
  checkTextList("list sessions", "excludeSources", options.excludeSources);
  if (!options.includeChildren) clauses.push(VISIBLE_ONLY);
  if (!options.includeArchived && store.columns("sessions").has("archived")) {
    clauses.push("COALESCE(s.archived, 0) = 0");
  }
  if (options.source) {
    clauses.push("s.source = ?");
    params.push(options.source);
  }
  if (options.excludeSources && options.excludeSources.length > 0) {
    clauses.push("s.source NOT IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(options.excludeSources));
  }
  const range = startedRangeClauses(options);
  clauses.push(...range.clauses);
  params.push(...range.params);
  if (options.hasChildren) {
    clauses.push(HAS_CHILDREN);
  }
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

/**
 * Pages by start time, newest first (ties in file order, as the index scan of
 * Python's query gives them); the preview and last activity are computed for
 * the page only.
 */
function byStart(store: Store, where: string, params: SqlValue[], limit: number, offset: number) {
  // The TEMP view over an older file (schema/read_views.ts) has no rowid;
  // its rows come in file order all the same, and ids are unique. A table
  // is joined back by rowid: one seek per row, not two through the id index.
  // CROSS JOIN keeps the page outside: otherwise SQLite may scan every
  // session and probe the page with an automatic index.
  const view = store.isReadView("sessions");
  const key = view ? "id" : "rowid";
  // A writable connection reads whole rows of a newer Hermes's file through a view of its own
  // (schema/read_views.ts), joined back by id.
  const read = sessionsRead(store);
  const join = read === "sessions" ? `s.${key} = page.pkey` : "s.id = page.pid";
  return store.statement(
    `WITH page AS (
       SELECT s.${key} AS pkey, s.id AS pid, s.started_at AS pstarted FROM sessions s ${where}
       ORDER BY s.started_at DESC${view ? "" : ", s.rowid"} LIMIT ? OFFSET ?
     )
     SELECT s.*, ${richColumns(store)}
     FROM page CROSS JOIN ${read} s ON ${join}
     ORDER BY page.pstarted DESC${view ? "" : ", page.pkey"}`,
  ).all(...params, limit, offset);
}

/**
 * Pages by the latest activity of each listed session's compression chain
 * (the session and its continuations: children started at or after a
 * `compression` end), then start, then id, newest first. Only
 * compression-ended sessions have a chain to walk, each in its own
 * subquery; the others are their own activity. The walk uses UNION, so a
 * cycle in bad data ends it. Each session's last message is one seek in
 * `idx_messages_session`; the sessions are read once.
 */
function byLastActive(
  store: Store,
  where: string,
  params: SqlValue[],
  limit: number,
  offset: number,
) {
  const lastMessage = (id: string) =>
    `(SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ${id})`;
  return store.statement(
    `WITH activity(root_id, root_started, effective) AS (
       SELECT s.id, s.started_at, CASE WHEN s.end_reason IS NOT 'compression'
         THEN COALESCE(${lastMessage("s.id")}, s.started_at)
         ELSE (
           WITH RECURSIVE chain(cur_id, cur_started, cur_reason, cur_ended) AS (
             SELECT s.id, s.started_at, s.end_reason, s.ended_at
             UNION
             SELECT child.id, child.started_at, child.end_reason, child.ended_at
             FROM chain JOIN sessions child ON child.parent_session_id = chain.cur_id
             WHERE chain.cur_reason = 'compression' AND child.started_at >= chain.cur_ended
           )
           SELECT MAX(COALESCE(${lastMessage("chain.cur_id")}, cur_started)) FROM chain
         ) END
       FROM sessions s ${where}
     ),
     page AS (
       SELECT root_id, root_started, effective FROM activity
       ORDER BY effective DESC, root_started DESC, root_id DESC LIMIT ? OFFSET ?
     )
     SELECT s.*, ${richColumns(store)}
     FROM page CROSS JOIN ${sessionsRead(store)} s ON s.id = page.root_id
     ORDER BY page.effective DESC, page.root_started DESC, page.root_id DESC`,
  ).all(...params, limit, offset);
}

/** The listing row of one session, or `undefined`. */
function richRow(store: Store, id: string): RichSessionRow | undefined {
  const row = store.statement(
    `SELECT s.*, ${richColumns(store)} FROM ${sessionsRead(store)} s WHERE s.id = ?`,
  )
    .get(id);
  return row === undefined ? undefined : withPreview(withBlobsAsText(row));
}

/** The entry of a compression root, showing its chain's tip. */
function projectTip(store: Store, row: RichSessionRow): RichSessionRow {
  if (row.end_reason !== "compression") return row;
  const tipId = getCompressionTip(store, row.id);
  if (tipId === row.id) return row;
  const tip = richRow(store, tipId);
  if (tip === undefined) return row;
  return withTipLent(row, tip);
}

/**
 * How many entries {@linkcode listSessionsRich} lists with these filters
 * over all pages (a compression chain counts once): for "20 of 35".
 *
 * @param store The open store.
 * @param options The filters of the listing; paging and order are ignored.
 * @returns The count.
 *
 * @example
 * ```ts ignore
 * const total = db.listedSessionCount({ excludeSources: ["tool"] });
 * ```
 */
export function listedSessionCount(store: Store, options: ListSessionsOptions): number {
  const { where, params } = filters(store, options);
  return Number(store.statement(`SELECT count(*) AS n FROM sessions s ${where}`).get(...params)?.n);
}

/**
 * Implements `SessionDB.listSessionsRich`: a page by start or by chain activity, tips projected.
 */
export function listSessionsRich(store: Store, options: ListSessionsOptions): RichSessionRow[] {
  const limit = checkCount("list sessions", "limit", options.limit ?? 20);
  const offset = checkCount("list sessions", "offset", options.offset ?? 0);
  const { where, params } = filters(store, options);
  const rows = rowsWithBlobsAsText((options.orderByLastActive ? byLastActive : byStart)(
    store,
    where,
    params,
    limit,
    offset,
  )).map(withPreview);
  if (options.projectCompressionTips === false || options.includeChildren) return rows;
  return rows.map((row) => projectTip(store, row));
}

/** Implements `SessionDB.searchSessions`: every session, most recently active first. */
export function searchSessions(
  store: Store,
  options: SearchSessionsOptions,
): SessionRowWithActivity[] {
  const limit = checkCount("search sessions", "limit", options.limit ?? 20);
  const offset = checkCount("search sessions", "offset", options.offset ?? 0);
  checkOptionalText("search sessions", "source", options.source);
  const where = options.source ? "WHERE s.source = ?" : "";
  const params: SqlValue[] = options.source ? [options.source] : [];
  // MAX(timestamp) per session is one seek in idx_messages_session, cheaper
  // than grouping every message as Python's LEFT JOIN does; same values.
  const rows = store.statement(
    `SELECT s.*,
       COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)
         AS last_active
     FROM ${sessionsRead(store)} s ${where}
     ORDER BY last_active DESC, s.started_at DESC, s.id DESC
     LIMIT ? OFFSET ?`,
  ).all(...params, limit, offset);
  return rowsWithBlobsAsText(rows) as SessionRowWithActivity[];
}

/** Implements `SessionDB.sessionCount`: `COUNT(*)` of sessions, optionally of one source. */
export function sessionCount(store: Store, options: SessionCountOptions): number {
  checkOptionalText("count sessions", "source", options.source);
  const row = options.source
    ? store.statement("SELECT COUNT(*) AS n FROM sessions WHERE source = ?").get(options.source)
    : store.statement("SELECT COUNT(*) AS n FROM sessions").get();
  return Number(row!.n);
}
