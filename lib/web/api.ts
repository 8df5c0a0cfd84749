/**
 * The JSON API under `/api/`: listing, search, a session id (or prefix)
 * resolved, transcript with lineage, usage, export downloads, live events
 * and (with `--allow-writes`) rename and delete. Every parameter is
 * checked and bounded; a bad one is a 400 naming it.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import { quotedValue } from "../core/shown_value.ts";
import type { SearchOptions } from "../core/search/options.ts";
import type { RichSessionRow, SearchHit, SessionRow } from "../core/types.ts";
import { parseSince, USAGE_GROUPINGS, type UsageGrouping } from "../core/usage.ts";
import { checkTimeZone } from "../core/time_zone.ts";
import { sanitizeTitle } from "../core/titles.ts";
import { EXPORT_MEDIA_TYPES, type ExportFormat, exportStoreStream } from "./export_stream.ts";
import { failureLine } from "./failure_line.ts";
import { lineageTree } from "./lineage_tree.ts";
import { transcriptPage } from "./transcript_page.ts";
import { snippetParts } from "./snippet_parts.ts";
import { unmarkedWords } from "../core/search/plan.ts";
import { leadingNotProblem } from "../core/search/leading_not.ts";
import { liveEvents, type LiveStreamLimit } from "./live.ts";
import { HttpError, json, withSecurityHeaders } from "./respond.ts";
import { syncedStore } from "../core/synced_store.ts";
import { originRecord } from "../render/origin_record.ts";
import { MAX_SESSION_ID, sessionNotFound } from "./session_id_param.ts";
import { downloadDisposition } from "./download_name.ts";
import { sessionsWithChildren } from "./sessions_with_children.ts";
import { hitMarks } from "./hit_marks.ts";

/** The largest page of sessions or hits. */
export const MAX_PAGE = 200;
/** The longest search query, in characters. */
export const MAX_QUERY = 1000;

/** What an API route gets. */
export interface ApiRequest {
  /** The store. */
  readonly store: SessionStore;
  /** The request. */
  readonly request: Request;
  /** Its parsed URL. */
  readonly url: URL;
  /** The current time, Unix seconds. */
  readonly now: number;
  /** Writes are allowed. */
  readonly allowWrites: boolean;
  /** The CSRF token writes must carry. */
  readonly csrf: string;
  /**
   * The origin of `--public-url` (`https://box.lan`), which a browser behind
   * a reverse proxy sends as `Origin`; accepted beside the request's own.
   */
  readonly publicOrigin?: string | null;
  /** The hermes-state version. */
  readonly version: string;
  /** How often live pages poll, in milliseconds. */
  readonly pollMs: number;
  /**
   * The longest the live stream waits for the store's change marker before it says failure,
   * in milliseconds (the server's request time limit). @default {10000}
   */
  readonly timeoutMs?: number;
  /**
   * How many messages a transcript answer holds when the request does not say (`limit`).
   * @default {TRANSCRIPT_PAGE}
   */
  readonly transcriptPage?: number;
  /** The server's count of open live streams; none means no limit. */
  readonly liveStreams?: LiveStreamLimit;
  /** Aborts when the request is given up on (timed out, or its client gone). */
  readonly signal?: AbortSignal;
  /**
   * Takes one line for the operator when a response fails after its headers
   * were sent (an export whose file went away midway). Defaults to nothing.
   */
  readonly logError?: (line: string) => void;
  /** Runs a search (the store's, or a worker pool's, which `signal` can cancel). */
  readonly search: (
    query: string,
    options: SearchOptions,
    signal?: AbortSignal,
  ) => Promise<SearchHit[]>;
}

function intParam(url: URL, name: string, fallback: number, max: number, min = 0): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return fallback;
  if (!/^\d{1,16}$/.test(raw) || Number(raw) > max || Number(raw) < min) {
    throw new HttpError(
      400,
      `${name} must be a whole number from ${min} to ${max}: current value is ${quotedValue(raw)}`,
    );
  }
  return Number(raw);
}

function timeParam(url: URL, name: string, now: number, timeZone = "UTC"): number | null {
  const raw = url.searchParams.get(name);
  if (raw === null || raw.trim() === "" || raw === "all") return null;
  if (raw.length > 40) {
    throw new HttpError(400, `${name} is too long: current value is ${raw.length} characters`);
  }
  // Unix seconds too (nine digits or more): what the page sends for a day its reader picked
  // (their local midnight). A shorter number is no time (`since=30` is not 30 days).
  try {
    return parseSince(raw, now, timeZone);
  } catch (error) {
    throw new HttpError(400, `${name}: ${(error as Error).message}`);
  }
}

function textParam(url: URL, name: string, max = 200): string | null {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return null;
  if (raw.length > max) {
    throw new HttpError(
      400,
      `${name} is too long (at most ${max} characters): current value is ${raw.length} characters`,
    );
  }
  return raw;
}

/** `children=1`: only sessions with children; `0` or none: all. Anything else is named. */
function childrenParam(url: URL): boolean {
  const value = url.searchParams.get("children");
  if (value === null || value === "0") return false;
  if (value === "1") return true;
  throw new HttpError(400, `children must be 1 or 0: current value is ${quotedValue(value)}`);
}

/**
 * Which origin `hermes-state sync` shipped each of `ids` from (PostgreSQL):
 * a row shows it, as two hosts' sessions of the same id otherwise look
 * alike. Empty on a file.
 */
async function originsOf(
  store: SessionStore,
  ids: readonly string[],
): Promise<Map<string, string>> {
  return await syncedStore(store)?.syncedFrom([...new Set(ids)]) ?? new Map();
}

/** The columns a listing row sends (no system prompt, no model config), and its origin. */
function listingRow(row: RichSessionRow, origins: Map<string, string>) {
  return {
    id: row.id,
    origin: origins.get(row.id) ?? null,
    title: row.title,
    preview: row.preview,
    source: row.source,
    model: row.model,
    started_at: row.started_at,
    ended_at: row.ended_at,
    end_reason: row.end_reason,
    last_active: row.last_active,
    message_count: row.message_count,
    tool_call_count: row.tool_call_count,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    estimated_cost_usd: row.estimated_cost_usd,
    actual_cost_usd: row.actual_cost_usd,
    parent_session_id: row.parent_session_id,
    lineage_root_id: row._lineage_root_id ?? null,
  };
}

/**
 * The `origin` parameter: only the sessions `hermes-state sync` shipped from
 * that origin, on a store that records origins (PostgreSQL).
 */
/** Known origins a 400 names at most. */
const ORIGINS_NAMED = 20;

/**
 * The `origin` parameter, checked against the origins the store records (a
 * name that is none, a removed origin in a bookmark, answered as an origin
 * without sessions does: an empty listing).
 */
async function originParam(api: ApiRequest): Promise<{ origin?: string }> {
  const origin = textParam(api.url, "origin");
  if (origin === null) return {};
  const synced = syncedStore(api.store);
  if (synced === undefined) {
    throw new HttpError(
      400,
      `origin needs a store that "hermes-state sync" fills (PostgreSQL): current value is ${
        quotedValue(origin)
      }`,
    );
  }
  const known = (await synced.syncOrigins()).map((one) => one.origin);
  if (known.includes(origin)) return { origin };
  const named = known.length === 0
    ? "it records none"
    : `known origins are ${known.slice(0, ORIGINS_NAMED).join(", ")}${
      known.length > ORIGINS_NAMED ? ", …" : ""
    }`;
  throw new HttpError(400, `no origin ${quotedValue(origin)} in this store: ${named}`);
}

async function listSessions(api: ApiRequest): Promise<Response> {
  const { url } = api;
  const limit = intParam(url, "limit", 50, MAX_PAGE, 1);
  const offset = intParam(url, "offset", 0, 1_000_000_000);
  const order = url.searchParams.get("order") ?? "last-active";
  if (order !== "started" && order !== "last-active") {
    throw new HttpError(
      400,
      `order must be "started" or "last-active": current value is ${quotedValue(order)}`,
    );
  }
  const source = textParam(url, "source");
  const rows = await api.store.listSessionsRich({
    ...await originParam(api),
    source,
    excludeSources: source === null ? ["tool"] : null,
    startedAfter: timeParam(url, "from", api.now),
    startedBefore: timeParam(url, "to", api.now),
    hasChildren: childrenParam(url),
    orderByLastActive: order === "last-active",
    limit: limit + 1,
    offset,
  });
  const page = rows.slice(0, limit);
  const origins = await originsOf(api.store, page.map((row) => row.id));
  return json({
    sessions: page.map((row) => listingRow(row, origins)),
    limit,
    offset,
    more: rows.length > limit,
  });
}

async function sources(api: ApiRequest): Promise<Response> {
  const rows = await api.store.usageReport({ by: "source" });
  // Once each: a BLOB source reads as the text another session's source holds.
  const keys = new Set(rows.map((r) => r.key).filter((k) => k !== null));
  return json({ sources: [...keys].sort() });
}

/** The files `hermes-state sync` ships to the store, by name; none on a file. */
async function origins(api: ApiRequest): Promise<Response> {
  const origins = await syncedStore(api.store)?.syncOrigins() ?? [];
  return json({ origins: origins.map(originRecord) });
}

/** Refuses a query that starts with NOT, as the CLI does: FTS5 would find the very word. */
function checkQuery(query: string): void {
  const problem = leadingNotProblem(query);
  if (problem !== null) throw new HttpError(400, problem);
}

/** The deepest offset a search page may start at (each page reads the hits before it). */
export const MAX_SEARCH_OFFSET = 10_000;

async function search(api: ApiRequest): Promise<Response> {
  const { url } = api;
  const query = url.searchParams.get("q") ?? "";
  if (query.length > MAX_QUERY) {
    throw new HttpError(
      400,
      `q is too long (at most ${MAX_QUERY} characters): current value is ${query.length} characters`,
    );
  }
  const limit = intParam(url, "limit", 20, MAX_PAGE, 1);
  const offset = intParam(url, "offset", 0, MAX_SEARCH_OFFSET);
  const source = textParam(url, "source");
  if (query.trim() === "") {
    return json({ query, hits: [], limit, offset, more: false, capped: false });
  }
  checkQuery(query);
  const hits = await api.search(query, {
    ...await originParam(api),
    limit: limit + 1,
    offset,
    sourceFilter: source === null ? null : [source],
  }, api.signal);
  // Each hit's session is named as the listing names it: its title, else its first words.
  const names = new Map<string, { title: string | null; preview: string }>();
  for (const hit of hits.slice(0, limit)) {
    if (!names.has(hit.session_id)) names.set(hit.session_id, await sessionName(api.store, hit));
  }
  const origins = await originsOf(api.store, [...names.keys()]);
  // A hit on a row the transcript leaves out (a compacted one) is marked as the transcript marks it.
  const marks = await hitMarks(api.store, hits.slice(0, limit));
  // Substring matches (CJK, emoji) come unmarked, cut from their message as they are: mark
  // them, and their cut ends, as the CLI does. The page reads `snippet_parts` (text, match,
  // text…): `snippet`'s markers cannot be told from a `>>>` in the message.
  const words = unmarkedWords(query);
  // A hit read by substring because its index is missing or stale has no marks of FTS5's.
  const allWords = unmarkedWords(query, { fts: false, trigram: false });
  return json({
    query,
    hits: hits.slice(0, limit).map((hit, i) => {
      const parts = snippetParts(hit, hit.snippet?.includes(">>>") ? words : allWords);
      return {
        ...hit,
        snippet: parts === null
          ? null
          : parts.map((part, i) => i % 2 === 1 ? `>>>${part}<<<` : part).join(""),
        snippet_parts: parts,
        title: names.get(hit.session_id)?.title ?? null,
        preview: names.get(hit.session_id)?.preview ?? "",
        origin: origins.get(hit.session_id) ?? null,
        marks: marks[i],
      };
    }),
    limit,
    offset,
    ...morePages(hits.length > limit, offset + limit),
  });
}

/**
 * Whether a search has hits past this page that the next page may ask for
 * (`more`), and whether it has more than {@linkcode MAX_SEARCH_OFFSET} lets
 * a page reach (`capped`: `more` is then false).
 */
function morePages(left: boolean, next: number): { more: boolean; capped: boolean } {
  const more = left && next <= MAX_SEARCH_OFFSET;
  return { more, capped: left && !more };
}

function sessionIdFrom(segment: string): string {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new HttpError(
      400,
      `session id is not valid URL encoding: current value is ${quotedValue(segment)}`,
    );
  }
  return checkedSessionId(id, "session id");
}

/** A session id of 1 to {@linkcode MAX_SESSION_ID} characters, as given; `name` says where. */
function checkedSessionId(id: string, name: string): string {
  if (id === "" || id.length > MAX_SESSION_ID) {
    throw new HttpError(
      400,
      `${name} must be 1 to ${MAX_SESSION_ID} characters: current value is ${id.length}`,
    );
  }
  return id;
}

/** The most sessions of one host id (one per origin) that {@linkcode resolve} names. */
const NAMED_MAX = 10;

/**
 * The session an exact id or a unique id prefix names, as the CLI resolves
 * what it is given (`null` for none, or for a prefix of more than one): the
 * search box offers it above the hits, as a delegate child is in no listing
 * and an operator may hold only an id from a log. On a store that `sync`
 * fills, a host's own id (as its Hermes and its log show it, without the
 * `ORIGIN/`) names the session shipped from it, or a unique prefix of one;
 * an id that several hosts hold names each of theirs (`sessions`).
 */
async function resolve(api: ApiRequest): Promise<Response> {
  const typed = checkedSessionId(api.url.searchParams.get("id") ?? "", "id");
  const id = await api.store.resolveSessionId(typed);
  const ids = id !== undefined ? [id] : await hostIds(api.store, typed);
  const sessions = [];
  for (const one of ids) {
    const session = await api.store.getSession(one);
    if (session !== undefined) sessions.push(await namedSession(api.store, session));
  }
  if (sessions.length > 1) return json({ id: typed, session: null, sessions });
  return json({ id: typed, session: sessions[0] ?? null });
}

/**
 * The store ids of the sessions `sync` shipped under the host id `typed`:
 * the one it, or a unique prefix of it, names, or each origin's whose id is
 * `typed` exactly (a prefix of several names none, as on a file).
 */
async function hostIds(store: SessionStore, typed: string): Promise<readonly string[]> {
  const synced = await syncedStore(store)?.syncedSessionIds(typed, { limit: NAMED_MAX });
  if (synced === undefined || synced.count === 0) return [];
  if (synced.count === 1) return synced.ids;
  const origins = await originsOf(store, synced.ids);
  return synced.ids.every((one) => one === `${origins.get(one)}/${typed}`) ? synced.ids : [];
}

/** What the search box shows of a session it names. */
async function namedSession(store: SessionStore, session: SessionRow) {
  return {
    id: session.id,
    title: session.title,
    // Only an untitled session needs its first words to be told apart.
    preview: session.title ? "" : await listingPreview(store, session),
    source: session.source,
    started_at: session.started_at,
  };
}

/** A hit's session's title, and its listing preview when it has none (`""` otherwise). */
async function sessionName(
  store: SessionStore,
  hit: SearchHit,
): Promise<{ title: string | null; preview: string }> {
  const title = await store.getSessionTitle(hit.session_id) ?? null;
  if (title) return { title, preview: "" };
  const session = await store.getSession(hit.session_id);
  return { title, preview: session === undefined ? "" : await listingPreview(store, session) };
}

/** The most sessions started at the same instant that {@linkcode listingPreview} looks through. */
const SAME_START_MAX = 50;

/**
 * A session's listing preview (the start of its first user message), read
 * as the listing reads it: one indexed row of the session's messages, not
 * all of them. The listing of the sessions started at its very instant (all
 * of them, children and archived too) holds its row; `""` when more than
 * {@linkcode SAME_START_MAX} started then.
 */
async function listingPreview(store: SessionStore, session: SessionRow): Promise<string> {
  const start = session.started_at;
  if (typeof start !== "number" || !Number.isFinite(start)) return "";
  const rows = await store.listSessionsRich({
    startedAfter: start,
    // The next number up: the range holds this instant only.
    startedBefore: start + Math.max(Math.abs(start) * Number.EPSILON, Number.MIN_VALUE),
    includeChildren: true,
    includeArchived: true,
    projectCompressionTips: false,
    limit: SAME_START_MAX,
  });
  return rows.find((row) => row.id === session.id)?.preview ?? "";
}

/**
 * How many messages a transcript answer holds unless `limit` (or the
 * server's `transcriptPage`) says otherwise: a session of 200,000 messages is
 * some 75 MB of JSON, which no tab draws; a few thousand are drawn at once.
 */
export const TRANSCRIPT_PAGE = 5000;
/** The most messages one transcript answer may be asked for. */
export const MAX_TRANSCRIPT_PAGE = 1_000_000;
/** A message id parameter, or `undefined` when it is not given. */
function messageIdParam(url: URL, name: string): number | undefined {
  return url.searchParams.has(name) ? intParam(url, name, 0, Number.MAX_SAFE_INTEGER) : undefined;
}

/** A message's timestamp parameter (`at`), or `undefined` when not given; a 400 when no number. */
function timestampParam(url: URL, name: string): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null) return undefined;
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value)) {
    throw new HttpError(
      400,
      `${name} must be a message's timestamp: current value is ${quotedValue(text)}`,
    );
  }
  return value;
}

/** `all=1`: every row of the transcript (see {@linkcode transcript}); `0` or none: those shown. */
function allParam(url: URL): boolean {
  const value = url.searchParams.get("all");
  if (value === null || value === "0") return false;
  if (value === "1") return true;
  throw new HttpError(400, `all must be 1 or 0: current value is ${quotedValue(value)}`);
}

/**
 * A session's transcript, a page of it: the newest `limit` messages
 * (the server's `transcriptPage`, {@linkcode TRANSCRIPT_PAGE} by default), with how many the session shows
 * before them (`earlier`) and after them (`later`). `before` (a message id)
 * asks for the page before that message, `beyond` for the page after it,
 * `from` for the page that starts at it, and `m` for the page that holds it
 * (with a few messages above it); a `before` or `beyond` message no longer
 * there is a 409.
 *
 * With `after` (the newest message id the page has read, hidden rows
 * included) and `shown` (how many messages it shows: from `first`, a message
 * id, or from the session's first message when `first` is not given, up to
 * `after`), only the messages after it are sent while those it shows are all
 * still there (`appended: true`, as a running gateway writes) and they are at
 * most `limit`; anything else (a rewind, a compaction, a rewrite, a deletion)
 * sends the newest page again. Whether they are all still there is told by
 * counting them again, not by the session's counters: a rewind changes rows
 * in place and no counter. Either way only the page's rows are read, and
 * counted those before and after it (`transcript_page.ts`).
 *
 * `all=1` reads every row, those a newer Hermes rewound, compacted or
 * hides too, each message with its `marks` (`[rewound]`, `[compacted]`,
 * `[hidden]`), as `show --all` prints them; the counts and `newest` are then
 * those of every row.
 *
 * `limit=0` answers the counts and `newest` without a message: what a page
 * opened at an earlier message asks on a live change (`beyond=` its last
 * message), to tell messages appended after the session's end (only its
 * "later" count grows) from a change of the messages it shows (its last one
 * gone, a 409, or `earlier` no longer the messages up to it).
 */
async function transcript(api: ApiRequest, id: string): Promise<Response> {
  const session = await api.store.getSession(id);
  if (session === undefined) throw new HttpError(404, sessionNotFound(id));
  const url = api.url;
  const limit = intParam(
    url,
    "limit",
    api.transcriptPage ?? TRANSCRIPT_PAGE,
    MAX_TRANSCRIPT_PAGE,
    0,
  );
  const since = url.searchParams.has("after")
    ? {
      after: intParam(url, "after", 0, Number.MAX_SAFE_INTEGER),
      shown: intParam(url, "shown", 0, Number.MAX_SAFE_INTEGER),
      first: messageIdParam(url, "first"),
      at: timestampParam(url, "at"),
    }
    : undefined;
  const [page, lineage, synced] = await Promise.all([
    transcriptPage(api.store, id, {
      limit,
      since,
      param: (name) => messageIdParam(url, name),
      all: allParam(url),
    }),
    lineageTree(api.store, id),
    syncedStore(api.store)?.syncedFrom([id]),
  ]);
  return json({
    session,
    messages: page.messages,
    appended: page.appended,
    newest: page.newest,
    // Its timestamp: a live update sends it back (`at`), so that the same id with another
    // message (a backup restored) is told apart.
    newest_at: page.newestAt,
    // How many messages the session shows before this page's (those of the page the reader
    // sees, when appended), and after them.
    earlier: page.earlier,
    later: page.later,
    // How many rows a newer Hermes rewound, compacted or hides: those `all=1` shows too.
    left_out: page.leftOut,
    lineage,
    // The origin `sync` shipped it from (PostgreSQL), else null.
    origin: synced?.get(id) ?? null,
  });
}

async function usage(api: ApiRequest): Promise<Response> {
  const by = (api.url.searchParams.get("by") ?? "day") as UsageGrouping;
  if (!USAGE_GROUPINGS.includes(by)) {
    throw new HttpError(
      400,
      `by must be one of ${USAGE_GROUPINGS.join(", ")}: current value is ${quotedValue(by)}`,
    );
  }
  if (by === "origin" && syncedStore(api.store) === undefined) {
    throw new HttpError(
      400,
      'by=origin needs a store that "hermes-state sync" fills (PostgreSQL): this one records no origins',
    );
  }
  // Days of the reader's time zone (the page sends it); UTC when none is given.
  const tz = textParam(api.url, "tz", 100);
  let timeZone = "UTC";
  if (tz !== null) {
    try {
      timeZone = checkTimeZone("report usage", tz);
    } catch (error) {
      throw new HttpError(400, `tz: ${(error as Error).message}`);
    }
  }
  const since = timeParam(api.url, "since", api.now, timeZone);
  const source = textParam(api.url, "source");
  const origin = await originParam(api);
  const rows = await api.store.usageReport({ by, since, source, timeZone, ...origin });
  return json({ by, since, source, time_zone: timeZone, ...origin, rows });
}

/**
 * A download of one session or of the listing's selection, in JSON Lines,
 * Markdown or HTML, read from the store a chunk of messages at a time
 * (`readExportPieces`): a session of any size is sent with the server's
 * memory bounded by a chunk. Not one held snapshot (the server's connection
 * stays free for its writes): a session's row and the list of its messages
 * are read together, each chunk as it is then (a message deleted meanwhile
 * is left out).
 */
async function exportDownload(api: ApiRequest): Promise<Response> {
  const format = (api.url.searchParams.get("format") ?? "jsonl") as ExportFormat;
  if (!Object.hasOwn(EXPORT_MEDIA_TYPES, format)) {
    throw new HttpError(
      400,
      `format must be jsonl, md or html: current value is ${quotedValue(format)}`,
    );
  }
  const id = textParam(api.url, "session", MAX_SESSION_ID);
  const source = textParam(api.url, "source");
  const cutOff = (error: unknown) => api.logError?.(failureLine(api.request, error));
  let stream: ReadableStream<Uint8Array> | undefined;
  let disposition: string;
  if (id !== null) {
    stream = await exportStoreStream(
      api.store,
      { id },
      format,
      (session) => session.title || id,
      cutOff,
    );
    if (stream === undefined) throw new HttpError(404, sessionNotFound(id));
    disposition = downloadDisposition(id, format);
  } else {
    const origin = await originParam(api);
    // What the listing's filters select: source, origin, start range (children included).
    const filter = {
      source,
      startedAfter: timeParam(api.url, "from", api.now),
      startedBefore: timeParam(api.url, "to", api.now),
      ...origin,
    };
    // "Has children": only the sessions that have one, as the listing shows.
    const only = childrenParam(api.url) ? await sessionsWithChildren(api.store, filter) : undefined;
    const parts = [origin.origin, source].filter((part) => part !== undefined && part !== null);
    disposition = downloadDisposition(["sessions", ...parts].join("-"), format);
    const title = `hermes-state export${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
    // Without a source the listing leaves out the `tool` sessions (subagents' own): so does this.
    const leaveOut = source === null ? "tool" : undefined;
    // Asked of each session's row before its messages are read: those left out are never read.
    const keep = (session: SessionRow) =>
      session.source !== leaveOut && (only === undefined || only.has(session.id));
    // As the listing shows them: a compression chain whole (one row there), `keep` or not.
    stream = await exportStoreStream(api.store, { filter }, format, title, cutOff, { keep }, true);
  }
  return new Response(stream, {
    headers: withSecurityHeaders({
      "content-type": EXPORT_MEDIA_TYPES[format],
      "content-disposition": disposition,
    }),
  });
}

function events(api: ApiRequest): Response {
  // The stream ends when the client goes away (the runtime cancels it); no request.signal needed.
  const leave = api.liveStreams === undefined ? () => {} : api.liveStreams.enter();
  if (leave === undefined) {
    throw new HttpError(
      503,
      `Too many live streams at once (at most ${api.liveStreams?.max}); try again later`,
    );
  }
  const stream = liveEvents(api.store, {
    pollMs: api.pollMs,
    answerMs: api.timeoutMs,
    onEnd: leave,
  });
  return new Response(stream, {
    headers: withSecurityHeaders({
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    }),
  });
}

/** The largest body a write takes, in bytes (a title, or a confirmation). */
export const MAX_WRITE_BODY = 10_000;

function tooLarge(): HttpError {
  return new HttpError(413, `The request body is too large (at most ${MAX_WRITE_BODY} bytes)`);
}

/**
 * The body's text, read only up to {@linkcode MAX_WRITE_BODY} bytes: a
 * larger one (said by its `Content-Length`, or found while reading) is a 413
 * at once, not held in memory, and a body that stops coming is not waited
 * for past that size.
 */
async function boundedText(request: Request): Promise<string> {
  const length = request.headers.get("content-length");
  if (length !== null && Number(length) > MAX_WRITE_BODY) throw tooLarge();
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (true) {
      const { done, value } = await reader.read().catch(() => {
        // The client went away (or its connection broke) mid-body: no failure of the server's.
        throw new HttpError(400, "The request body was cut off before its end");
      });
      if (done) break;
      size += value.byteLength;
      if (size > MAX_WRITE_BODY) throw tooLarge();
      chunks.push(value);
    }
  } finally {
    if (size > MAX_WRITE_BODY) void reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

async function readJsonBody(request: Request): Promise<Record<string, unknown>> {
  const text = await boundedText(request);
  try {
    const value = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // reported below
  }
  throw new HttpError(400, "The request body must be a JSON object");
}

function checkWrite(api: ApiRequest): void {
  if (!api.allowWrites) {
    throw new HttpError(403, "This server is read-only (start it with --allow-writes)");
  }
  if (api.request.headers.get("x-hermes-csrf") !== api.csrf) {
    throw new HttpError(403, "The CSRF token is missing or wrong (reload the page)");
  }
  const origin = api.request.headers.get("origin");
  if (origin !== null && origin !== api.url.origin && origin !== api.publicOrigin) {
    throw new HttpError(403, `Cross-origin write refused: current origin is ${origin}`);
  }
}

async function rename(api: ApiRequest, id: string): Promise<Response> {
  checkWrite(api);
  const body = await readJsonBody(api.request);
  const title = body.title;
  if (title !== null && typeof title !== "string") {
    throw new HttpError(400, "title must be a string or null");
  }
  // A title no session may hold (too long) is a bad request (400); one another session holds is
  // a conflict with it (409). Checked before the session's existence: a bad title is bad anywhere.
  let titleChecked = false;
  try {
    sanitizeTitle(title);
    titleChecked = true;
    if ((await api.store.getSession(id)) === undefined) {
      throw new HttpError(404, `Session '${id}' not found`);
    }
    // Gone between the two (deleted by the CLI meanwhile): not found, not renamed.
    if (!(await api.store.setSessionTitle(id, title))) {
      throw new HttpError(404, `Session '${id}' not found`);
    }
  } catch (error) {
    if ((error as Error).name !== "TitleError") throw error;
    throw new HttpError(titleChecked ? 409 : 400, (error as Error).message);
  }
  return json({ id, title: (await api.store.getSessionTitle(id)) ?? null });
}

async function remove(api: ApiRequest, id: string): Promise<Response> {
  checkWrite(api);
  const body = await readJsonBody(api.request);
  if (body.confirm !== id) {
    throw new HttpError(400, 'Deleting needs confirmation: send {"confirm": "<the session id>"}');
  }
  const deleted = await api.store.deleteSession(id);
  if (!deleted) throw new HttpError(404, `Session '${id}' not found`);
  return json({ id, deleted });
}

/**
 * Answers one `/api/` request.
 *
 * @param api The store, the request and the server's settings.
 * @returns The response.
 * @throws {HttpError} For a bad request, an unknown route, or a refused write.
 */
export async function handleApi(api: ApiRequest): Promise<Response> {
  const path = api.url.pathname;
  const method = api.request.method;
  const session = /^\/api\/sessions\/([^/]+)(\/title)?$/.exec(path);
  // The same routes with the id in the query (`/api/session?id=…`): a URL's path cannot hold
  // the ids "." and "..", which even as %2e are steps up the path.
  const byQuery = /^\/api\/session(\/title)?$/.exec(path);
  if (byQuery !== null) {
    const id = checkedSessionId(api.url.searchParams.get("id") ?? "", "id");
    if ((method === "GET" || method === "HEAD") && byQuery[1] === undefined) {
      return await transcript(api, id);
    }
    if (method === "PUT" && byQuery[1] === "/title") return await rename(api, id);
    if (method === "DELETE" && byQuery[1] === undefined) return await remove(api, id);
  }
  if (method === "GET" || method === "HEAD") {
    if (path === "/api/config") {
      return json({
        version: api.version,
        engine: api.store.engine,
        readonly: api.store.readonly || !api.allowWrites,
        allowWrites: api.allowWrites && !api.store.readonly,
        csrf: api.csrf,
        limits: {
          page: MAX_PAGE,
          query: MAX_QUERY,
          transcript: api.transcriptPage ?? TRANSCRIPT_PAGE,
        },
      });
    }
    if (path === "/api/sessions") return await listSessions(api);
    if (path === "/api/sources") return await sources(api);
    if (path === "/api/origins") return await origins(api);
    if (path === "/api/search") return await search(api);
    if (path === "/api/resolve") return await resolve(api);
    if (path === "/api/usage") return await usage(api);
    if (path === "/api/export") return await exportDownload(api);
    if (path === "/api/events") return events(api);
    if (session !== null && session[2] === undefined) {
      return await transcript(api, sessionIdFrom(session[1]));
    }
  }
  if (session !== null) {
    const id = sessionIdFrom(session[1]);
    if (method === "PUT" && session[2] === "/title") return await rename(api, id);
    if (method === "DELETE" && session[2] === undefined) return await remove(api, id);
  }
  const allowed = methodsOf(path);
  if (allowed === undefined) throw new HttpError(404, `No such API: ${method} ${path}`);
  return json(
    { error: { status: 405, message: `Method ${method} is not allowed on ${path}` } },
    405,
    { allow: allowed.join(", ") },
  );
}

/** The read-only routes: GET and HEAD. */
const READ_ROUTES = new Set([
  "/api/config",
  "/api/sessions",
  "/api/sources",
  "/api/origins",
  "/api/search",
  "/api/resolve",
  "/api/usage",
  "/api/export",
  "/api/events",
]);

/**
 * The methods an API route takes (for a 405's `Allow`).
 *
 * @param path The request's path, `/api/…`.
 * @returns The methods, or `undefined` where no route has that path.
 */
export function methodsOf(path: string): string[] | undefined {
  if (READ_ROUTES.has(path)) return ["GET", "HEAD"];
  if (/^\/api\/sessions\/[^/]+\/title$/.test(path) || path === "/api/session/title") return ["PUT"];
  if (/^\/api\/sessions\/[^/]+$/.test(path) || path === "/api/session") {
    return ["GET", "HEAD", "DELETE"];
  }
  return undefined;
}
