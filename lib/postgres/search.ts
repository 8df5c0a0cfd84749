/**
 * `searchMessages` on PostgreSQL: the same plan as the SQLite engine
 * (`planSearch`: sanitize, then words, CJK trigram or substring), the same
 * filters and the same hit shape, over the store's own search columns:
 *
 * - words: `search_words @@ tsquery` (GIN) on the narrow `message_words`
 *   table (every filter's column is there too), ordered by `ts_rank` (term
 *   frequency, like bm25 without its length and rarity weights), not the
 *   `ts_rank_cd` the issue proposed: on the 200,000-message corpus ranking a
 *   frequent word's 55,000 matches took 166 ms with `ts_rank` and 194 ms
 *   with `ts_rank_cd` (medians of 12 alternating runs; 10.5 against 18.3 ms
 *   at 10,000);
 * - three or more CJK characters: each phrase a case-insensitive substring
 *   (`ILIKE`), pre-filtered by its CJK bigrams (GIN);
 * - fewer: escaped substrings of content, tool name and tool calls, newest
 *   first, pre-filtered by CJK bigrams (or the character itself);
 * - the plan's substring condition (its words read with FTS5's AND/OR/NOT)
 *   wherever the plan has one.
 *
 * Matches are SQLite's, and so are a word or trigram match's snippets
 * (FTS5's window and marks, `core/search/fts5_snippet.ts`); ranking among
 * them may differ (`ts_rank` is not bm25), and so may a substring match's
 * snippet. `sort: "newest" | "oldest"` orders by
 * timestamp first, as the SQLite engine does, then by that rank, then id;
 * a words page is first looked for among the latest (earliest) messages
 * (`wordsByTime`), and only when they cannot hold it is every match ordered.
 *
 * @module
 */
import { checkCount, checkSeconds } from "../core/paging.ts";
import { type Condition, positiveWords } from "../core/search/condition.ts";
import { planSearch, wordsFallback } from "../core/search/plan.ts";
import { checkSort, type SearchOptions, type SearchSort } from "../core/search/options.ts";
import { contextText, NotTextError } from "../core/content.ts";
import type { ContextMessage, SearchHit } from "../core/types.ts";
import type { PgQuery, PgRow, PgValue } from "./_client_types.ts";
import type { OriginFilter } from "./_session_filters.ts";
import { SEARCH_COLUMNS_SQL, SEARCH_DOCUMENT_SQL } from "./schema.ts";
import { trigramSql, withoutContentFilter, wordsQuery } from "./text_search.ts";
import { trigramSnippet, wordsSnippet } from "../core/search/fts5_snippet.ts";
import { substringSnippet } from "../core/search/substring_snippet.ts";
import { jsonParam } from "./_text_codec.ts";
import { conditionSql } from "./substring_condition.ts";

/** A search's options, with the engine's origin filter. */
export type PgSearchOptions = SearchOptions & OriginFilter;

interface Filters {
  sql: string;
  /** The session and time bounds on the messages (`t`), when asked apart. */
  timeline: string;
  params: PgValue[];
  /** Whether the conditions read the session row (`s`), which then has to be joined. */
  sessions: boolean;
}

/**
 * The messages a search path matches, with every filter: the FROM (`m` the
 * matched rows) and the condition of its id query, and their `$n`
 * parameters, from `$1`. A page orders and cuts them; a count counts them.
 */
export interface Matches {
  /** What follows FROM. */
  readonly from: string;
  /** What follows WHERE. */
  readonly where: string;
  /** The parameters of both, `$1` first. */
  readonly params: PgValue[];
}

/**
 * The FROM of a page's id query: `table` as `m`, joined to the sessions
 * only when a filter reads them (every message has its session: the join
 * would drop nothing, and it cost 15 ms of a frequent word's 100) and, with
 * `via`, reached from those rows (`t`: the messages, or the latest of them)
 * through whose index the page is found.
 */
function fromSql(table: string, filters: Filters, via?: string): string {
  const from = via === undefined ? `${table} m` : `${via} t JOIN ${table} m ON m.id = t.id`;
  return filters.sessions ? `${from} JOIN sessions s ON s.id = m.session_id` : from;
}

/**
 * The filters of a page, as `AND …` clauses numbered from `$first`. With
 * `timeline`, the session and time bounds test the messages (`t`) and come
 * apart in `timeline`, for the walk by time to start where they say.
 */
function filterSql(
  options: PgSearchOptions,
  first: number,
  timeline = false,
): Filters {
  let sql = "";
  let bounds = "";
  const params: PgValue[] = [];
  const next = (value: PgValue) => {
    params.push(value);
    return `$${first + params.length - 1}`;
  };
  const list = (clause: string, values: readonly string[]) => {
    sql += ` AND ${clause} (SELECT json_array_elements_text(${
      next(jsonParam(values))
    }::text::json))`;
  };
  const bound = (clause: string, value: PgValue) => {
    const text = ` AND ${timeline ? "t" : "m"}.${clause} ${next(value)}`;
    if (timeline) bounds += text;
    else sql += text;
  };
  if (options.sourceFilter != null) list("s.source IN", options.sourceFilter);
  if (options.excludeSources != null) list("s.source NOT IN", options.excludeSources);
  const roles = options.roleFilter ?? null;
  if (roles !== null && roles.length > 0) list("m.role IN", roles);
  if (options.sessionId != null) bound("session_id =", options.sessionId);
  if (options.since != null) bound("timestamp >=", options.since);
  if (options.until != null) bound("timestamp <", options.until);
  if (options.origin) {
    sql += ` AND m.session_id IN (SELECT so.session_id FROM sync_sessions so WHERE so.origin = ${
      next(options.origin)
    })`;
  }
  // What a newer Hermes leaves out of its search (rewound, hidden): `_extra.ts`.
  if (!options.includeInactive) sql += " AND NOT m.search_hidden";
  const sessions = options.sourceFilter != null || options.excludeSources != null;
  return { sql, timeline: bounds, params, sessions };
}

const HIT_COLUMNS = `m.id AS id, m.session_id AS session_id, m.role AS role,
  m.timestamp AS timestamp, m.tool_name AS tool_name, s.source AS source, s.model AS model,
  s.started_at AS session_started, ${SEARCH_DOCUMENT_SQL} AS _document`;

/**
 * Search pages are planned with their terms each time: a prepared (generic)
 * plan cannot tell a rare term, best found through the GIN index, from a
 * frequent one, and at 200,000 messages it chose a sequential scan for a
 * 2-character CJK query (140 ms instead of 25).
 */
export const CUSTOM_PLAN = { custom: true } as const;

/** One page and its order. */
interface Page {
  readonly limit: number;
  readonly offset: number;
  readonly sort: SearchSort;
}

/**
 * The ORDER BY of a page: `rank` (an SQL expression, best first, or
 * `undefined` where time is the rank), or by time then rank then id.
 */
function orderSql(sort: SearchSort, rank: string | undefined, time = "m.timestamp"): string {
  if (sort === "oldest") return `${time} ASC${rank ? `, ${rank}` : ""}, m.id ASC`;
  if (sort === "newest") return `${time} DESC${rank ? `, ${rank}` : ""}, m.id DESC`;
  return rank ? `${rank}, m.id` : `${time} DESC, m.id`;
}

/**
 * A page of hits in two steps: `inner` picks and orders the page's ids
 * (reading only what the order needs), the outer query reads the hit
 * columns of those rows alone — PostgreSQL would otherwise build the
 * document text of every match before sorting.
 *
 * @param inner `SELECT m.id AS id, <order> AS _order … ORDER BY … LIMIT … OFFSET …`.
 * @param order How the page is ordered, by `page._order` and `m.id`.
 * @param extra More columns of `page` to return (`, page.x AS x`).
 */
function pageOf(inner: string, order: string, extra = ""): string {
  return `WITH page AS (${inner})
    SELECT ${HIT_COLUMNS}, page._order AS _order${extra}, m.content AS _content,
      prev.role AS _prev_role, prev.content AS _prev_content,
      nxt.role AS _next_role, nxt.content AS _next_content
    FROM page JOIN messages m ON m.id = page.id JOIN sessions s ON s.id = m.session_id
    ${CONTEXT_JOINS}
    ORDER BY ${order}`;
}

/**
 * How many of the latest (or earliest) messages a search by time reads
 * before it falls back to ordering every match: 1,000, or 20 per hit up to
 * the page's end (a word in one message of 50 fills the first page of 20
 * within them; one in 20 fills any page).
 */
function walkRows(page: Page): number {
  return Math.max(1000, 20 * (page.offset + page.limit));
}

/**
 * The FTS5 query a words plan's expression is read as: up to its first NUL
 * (FTS5 reads a C string), without `content:` filters (FTS5's one column is
 * the whole text here as there).
 */
export function wordsMatch(expression: string): string {
  return withoutContentFilter(expression.split("\u0000")[0]);
}

async function wordsPage(
  query: PgQuery,
  fullMatch: string,
  options: PgSearchOptions,
  page: Page,
): Promise<PgRow[] | undefined> {
  const match = wordsMatch(fullMatch);
  const tsquery = wordsQuery(match);
  if (tsquery === undefined) return undefined;
  if (tsquery === null) return [];
  const rows = (page.sort !== "rank" ? await wordsByTime(query, tsquery, options, page) : null) ??
    await wordsRanked(query, tsquery, options, page);
  for (const row of rows) row.snippet = wordsSnippet(String(row._document), match);
  return rows;
}

/** A time window holding at most this many messages is searched from the messages' time index. */
const SMALL_WINDOW = 5_000;

/**
 * Whether `since` / `until` leave at most {@linkcode SMALL_WINDOW} messages
 * (counted through the time index, never further): checking each of them
 * beats reading every match of a frequent word through the word index
 * ("docker" since the last day of the 200,000-message corpus: 97 ms
 * through its 55,000 matches, 10 ms through the day's 1,700 messages). A
 * wide window is left to the word index, as the planner would choose.
 */
async function fewInWindow(
  query: PgQuery,
  options: PgSearchOptions,
): Promise<boolean> {
  if (options.since == null && options.until == null) return false;
  const bounds = filterSql({ since: options.since, until: options.until }, 1, true);
  const [row] = await query(
    `SELECT count(*) AS n FROM (
       SELECT 1 FROM messages t WHERE true${bounds.timeline} LIMIT ${SMALL_WINDOW + 1}
     ) w`,
    bounds.params,
  );
  return Number(row?.n) <= SMALL_WINDOW;
}

/**
 * Every match read and ordered: by rank, or by time for {@linkcode
 * wordsByTime}'s leftovers. One session's messages, or a small time
 * window's, are found through the messages' session or time index (`t`)
 * and checked there: "docker" in one session of the 200,000-message corpus
 * took 94 ms through the word index, with its 55,000 matches.
 */
async function wordsRanked(
  query: PgQuery,
  tsquery: string,
  options: PgSearchOptions,
  page: Page,
): Promise<PgRow[]> {
  const matches = await wordsMatches(query, tsquery, options);
  const n = matches.params.length + 1;
  return await query(
    pageOf(
      `SELECT m.id AS id, ts_rank(m.search_words, $1::tsquery) AS _order
       FROM ${matches.from} WHERE ${matches.where}
       ORDER BY ${orderSql(page.sort, "_order DESC")}
       LIMIT $${n} OFFSET $${n + 1}`,
      orderSql(page.sort, "page._order DESC"),
    ),
    [...matches.params, page.limit, page.offset],
    CUSTOM_PLAN,
  );
}

/**
 * The messages `tsquery` matches (`$1`), with the filters: one session's
 * messages, or a small time window's, found through the messages' session
 * or time index (`t`), as {@linkcode wordsRanked} says.
 */
export async function wordsMatches(
  query: PgQuery,
  tsquery: string,
  options: PgSearchOptions,
): Promise<Matches> {
  const viaMessages = options.sessionId != null || await fewInWindow(query, options);
  const filters = filterSql(options, 2, viaMessages);
  return {
    from: fromSql("message_words", filters, viaMessages ? "messages" : undefined),
    where: `m.search_words @@ $1::tsquery${filters.timeline}${filters.sql}`,
    params: [tsquery, ...filters.params],
  };
}

/**
 * A page by time from the {@linkcode walkRows} latest (or earliest)
 * messages the session and time bounds allow, read through the messages'
 * time index (`idx_messages_newest`, or `idx_messages_session` for one
 * session): a frequent word's page in 3–7 ms where ordering every match
 * took 80–94 at 200,000 messages (BENCHMARKS.md). The page is the answer when those rows
 * are all there are, or when it is full and its last hit is strictly newer
 * (older) than the last row read: any match not read is older (newer)
 * still. Otherwise `null`, and every match is ordered.
 */
async function wordsByTime(
  query: PgQuery,
  tsquery: string,
  options: PgSearchOptions,
  page: Page,
): Promise<PgRow[] | null> {
  const newest = page.sort === "newest";
  const walk = walkRows(page);
  const filters = filterSql(options, 2, true);
  const n = 2 + filters.params.length;
  const rows = await query(
    pageOf(
      `WITH recent AS MATERIALIZED (
         SELECT t.id, t.timestamp FROM messages t WHERE true${filters.timeline}
         ORDER BY ${newest ? "t.timestamp DESC, t.id" : "t.timestamp, t.id DESC"}
         LIMIT ${walk}
       ), edge AS (
         SELECT count(*) AS walked, ${newest ? "min" : "max"}(timestamp) AS at FROM recent
       )
       SELECT m.id AS id, ts_rank(m.search_words, $1::tsquery) AS _order,
         edge.walked AS _walked, edge.at AS _edge
       FROM ${fromSql("message_words", filters, "recent")} CROSS JOIN edge
       WHERE m.search_words @@ $1::tsquery${filters.sql}
       ORDER BY ${orderSql(page.sort, "_order DESC", "t.timestamp")}
       LIMIT $${n} OFFSET $${n + 1}`,
      orderSql(page.sort, "page._order DESC"),
      ", page._walked AS _walked, page._edge AS _edge",
    ),
    [tsquery, ...filters.params, page.limit, page.offset],
    CUSTOM_PLAN,
  );
  const last = rows.at(-1);
  if (last === undefined) return null;
  if (Number(last._walked) < walk) return rows;
  if (rows.length < page.limit) return null;
  const edge = Number(last._edge);
  const time = Number(last.timestamp);
  return (newest ? time > edge : time < edge) ? rows : null;
}

/** A words plan's expression and the retry tried when FTS5 would refuse it. */
export interface WordsPlan {
  /** The query in the search syntax. */
  readonly expression: string;
  /** The same with every word quoted, if any. */
  readonly retry: string | undefined;
}

/**
 * The `tsquery` of a words plan: its expression's, else its retry's when
 * FTS5 would refuse the first; `null` when it matches nothing, `undefined`
 * when both would be refused.
 */
export function wordsPlanQuery(plan: WordsPlan): string | null | undefined {
  const tsquery = wordsQuery(wordsMatch(plan.expression));
  if (tsquery !== undefined || plan.retry === undefined) return tsquery;
  return wordsQuery(wordsMatch(plan.retry));
}

/** Whether a words plan matches any message with the filters. */
async function wordsFound(
  query: PgQuery,
  plan: WordsPlan,
  options: PgSearchOptions,
): Promise<boolean> {
  const tsquery = wordsPlanQuery(plan);
  if (tsquery == null) return false;
  const matches = await wordsMatches(query, tsquery, options);
  const rows = await query(
    `SELECT 1 FROM ${matches.from} WHERE ${matches.where} LIMIT 1`,
    matches.params,
    CUSTOM_PLAN,
  );
  return rows.length > 0;
}

/**
 * The messages a trigram plan's `match` (and its `check`) finds, with the
 * filters; `null` when it matches nothing, `undefined` when FTS5 would
 * refuse it.
 */
export function trigramMatches(
  match: string,
  check: Condition | null,
  options: PgSearchOptions,
): Matches | null | undefined {
  const condition = trigramSql(match, 1, SEARCH_COLUMNS_SQL);
  if (condition == null) return condition;
  const params: PgValue[] = [...condition.params];
  let sql = condition.sql;
  // The words too short for the trigram index, each checked as SQLite does: by LIKE.
  if (check !== null) sql += ` AND ${conditionSql(check, params)}`;
  const filters = filterSql(options, params.length + 1);
  params.push(...filters.params);
  return { from: fromSql("messages", filters), where: `${sql}${filters.sql}`, params };
}

async function trigramPage(
  query: PgQuery,
  match: string,
  check: Condition | null,
  options: PgSearchOptions,
  page: Page,
): Promise<PgRow[] | undefined> {
  const matches = trigramMatches(match, check, options);
  if (matches === undefined) return undefined;
  if (matches === null) return [];
  const n = matches.params.length + 1;
  const rows = await query(
    pageOf(
      `SELECT m.id AS id, m.timestamp AS _order
       FROM ${matches.from} WHERE ${matches.where}
       ORDER BY ${orderSql(page.sort, undefined)}
       LIMIT $${n} OFFSET $${n + 1}`,
      orderSql(page.sort, undefined),
    ),
    [...matches.params, page.limit, page.offset],
    CUSTOM_PLAN,
  );
  for (const row of rows) row.snippet = trigramSnippet(String(row._document), match);
  return rows;
}

/**
 * The messages a substring `condition` finds, with the filters; its
 * parameters follow `leading` (which the caller's SQL reads as `$1`…).
 */
export function substringMatches(
  condition: Condition,
  options: PgSearchOptions,
  leading: readonly PgValue[] = [],
): Matches {
  const params: PgValue[] = [...leading];
  const where = conditionSql(condition, params);
  const filters = filterSql(options, params.length + 1);
  params.push(...filters.params);
  return { from: fromSql("messages", filters), where: `${where}${filters.sql}`, params };
}

async function substringPage(
  query: PgQuery,
  condition: Condition,
  options: PgSearchOptions,
  page: Page,
): Promise<PgRow[]> {
  // `$1`: the first word, where the content's snippet is cut.
  const matches = substringMatches(condition, options, [positiveWords(condition)[0]]);
  const n = matches.params.length + 1;
  // SQLite orders substring hits newest first, ties by id ascending, for "newest" too.
  const order = orderSql(page.sort === "oldest" ? "oldest" : "rank", undefined);
  const rows = await query(
    pageOf(
      `SELECT m.id AS id, m.timestamp AS _order
       FROM ${matches.from} WHERE ${matches.where}
       ORDER BY ${order}
       LIMIT $${n} OFFSET $${n + 1}`,
      order,
    ).replace(
      "page._order AS _order",
      "page._order AS _order, substr(m.content, greatest(1, strpos(m.content, $1) - 40), 120) AS snippet, m.tool_calls AS _tool_calls",
    ),
    [...matches.params, page.limit, page.offset],
    CUSTOM_PLAN,
  );
  const words = positiveWords(condition);
  for (const row of rows) {
    const fields = {
      contentSnippet: row.snippet,
      toolName: row.tool_name,
      toolCalls: row._tool_calls,
    };
    row.snippet = substringSnippet(fields, words);
  }
  return rows;
}

/**
 * The messages just before and just after each hit in its session (by
 * `timestamp, id`), joined to the page's rows: the hit's context comes in
 * the same round trip. The session index orders by time only (ties by
 * heap position, not id), so `ORDER BY timestamp, id LIMIT 1` sorted every
 * earlier (later) message of the session for each hit: 500 hits in a
 * session of 2,600 messages took 270 ms. The neighbouring timestamp is
 * found first, one index step, then the id among the rows that share it.
 */
const CONTEXT_JOINS = `
    LEFT JOIN LATERAL (
      SELECT x.role, x.content FROM messages x
      WHERE x.session_id = m.session_id AND x.timestamp = (
          SELECT y.timestamp FROM messages y
          WHERE y.session_id = m.session_id AND y.timestamp <= m.timestamp
            AND (y.timestamp, y.id) < (m.timestamp, m.id)
          ORDER BY y.timestamp DESC LIMIT 1)
        AND (x.timestamp, x.id) < (m.timestamp, m.id)
      ORDER BY x.id DESC LIMIT 1
    ) prev ON true
    LEFT JOIN LATERAL (
      SELECT x.role, x.content FROM messages x
      WHERE x.session_id = m.session_id AND x.timestamp = (
          SELECT y.timestamp FROM messages y
          WHERE y.session_id = m.session_id AND y.timestamp >= m.timestamp
            AND (y.timestamp, y.id) > (m.timestamp, m.id)
          ORDER BY y.timestamp LIMIT 1)
        AND (x.timestamp, x.id) > (m.timestamp, m.id)
      ORDER BY x.id LIMIT 1
    ) nxt ON true`;

/** The context of one hit: the previous, the matching and the next message, 200 characters each. */
function hitContext(row: PgRow): ContextMessage[] {
  const parts: [unknown, unknown][] = [];
  if (row._prev_role != null) parts.push([row._prev_role, row._prev_content]);
  parts.push([row.role, row._content]);
  if (row._next_role != null) parts.push([row._next_role, row._next_content]);
  try {
    return parts.map(([role, content]) => ({
      role: role as string,
      content: contextText(content, 200),
    }));
  } catch (error) {
    // Python catches the failure and gives this hit an empty context.
    if (error instanceof NotTextError) return [];
    throw error;
  }
}

/**
 * Searches messages as `SessionDB.searchMessages` does.
 *
 * @param query The store's query function.
 * @param text The user's query, any text.
 * @param options Filters and paging.
 * @returns The hits, with context.
 * @throws {RangeError} When `limit` or `offset` is not a non-negative
 *   integer, `since` or `until` is given but not a finite number of seconds,
 *   or `sort` is not one of the orders.
 */
export async function searchMessagesPg(
  query: PgQuery,
  text: string,
  options: PgSearchOptions = {},
): Promise<SearchHit[]> {
  const limit = checkCount("search messages", "limit", options.limit ?? 20);
  const offset = checkCount("search messages", "offset", options.offset ?? 0);
  const sort = checkSort(options.sort);
  checkSeconds("search messages", "since", options.since);
  checkSeconds("search messages", "until", options.until);
  const plan = planSearch(text);
  if (plan.kind === "nothing") return [];
  const page = { limit, offset, sort };
  let rows: PgRow[] | undefined;
  if (plan.kind === "substring") {
    rows = await substringPage(query, plan.condition, options, page);
  } else if (plan.index === "words") {
    rows = await wordsPage(query, plan.expression, options, page);
    if (rows === undefined && plan.retry !== undefined) {
      rows = await wordsPage(query, plan.retry, options, page);
    }
    // Nothing by the word index (not merely past its last hit): the words by substring.
    const fallback = rows?.length === 0 ? wordsFallback(text) : undefined;
    if (fallback !== undefined && (offset === 0 || !await wordsFound(query, plan, options))) {
      rows = await substringPage(query, fallback.condition, options, page);
    }
  } else {
    rows = await trigramPage(query, plan.expression, plan.check, options, page);
  }
  if (rows === undefined || rows.length === 0) return [];
  return rows.map((row) => ({
    id: row.id as number,
    session_id: row.session_id as string,
    role: row.role as string,
    snippet: (row.snippet ?? null) as string | null,
    timestamp: row.timestamp as number,
    tool_name: row.tool_name as string | null,
    source: row.source as string,
    model: row.model as string | null,
    session_started: row.session_started as number,
    context: hitContext(row),
  }));
}
