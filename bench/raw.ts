/**
 * The raw-SQLite floor: the work each measured library call does, written as
 * plain prepared statements (the statements the Python store runs, or the
 * tightest plain SQL with the same result), with no `Store`, no retry loop and
 * no option checking. It runs over `lib/driver` (the adapter) or over the
 * runtime module itself (see `native.ts`), whichever connection it is given.
 *
 * @module
 */
import {
  contentText,
  decodeContent,
  decodeJson,
  encodeContent,
  encodeJson,
} from "../lib/core/content.ts";
import type { SqlRow, SqlValue } from "../lib/sqlite/driver/types.ts";
import type { JsonValue, NewMessage } from "../lib/core/types.ts";
import type { RawConnection, RawStatement } from "./native.ts";
import type { SessionPlan } from "./corpus.ts";
import type { QuerySpec } from "./queries.ts";
import { pageSql } from "../lib/sqlite/search/ranked.ts";
import { CONTEXT_SQL as PAGE_CONTEXT_SQL } from "../lib/sqlite/search/context.ts";
import { CACHE_KIB } from "../lib/sqlite/open.ts";

const caches = new WeakMap<RawConnection, Map<string, RawStatement>>();

/**
 * The statement for `sql` on `conn`, prepared once.
 *
 * @param conn The connection.
 * @param sql The statement text.
 * @returns The prepared statement.
 */
export function stmt(conn: RawConnection, sql: string): RawStatement {
  let cache = caches.get(conn);
  if (cache === undefined) caches.set(conn, cache = new Map());
  let s = cache.get(sql);
  if (s === undefined) cache.set(sql, s = conn.prepare(sql));
  return s;
}

const commits = new WeakMap<RawConnection, number>();

/**
 * Runs `fn` inside `BEGIN IMMEDIATE … COMMIT`, and after every 50th commit
 * runs a passive WAL checkpoint, as the library (and Python) do.
 *
 * @param conn The connection.
 * @param fn The work.
 * @returns What `fn` returns.
 */
export function tx<T>(conn: RawConnection, fn: () => T): T {
  conn.exec("BEGIN IMMEDIATE");
  let result: T;
  try {
    result = fn();
    conn.exec("COMMIT");
  } catch (error) {
    conn.exec("ROLLBACK");
    throw error;
  }
  const n = (commits.get(conn) ?? 0) + 1;
  commits.set(conn, n);
  if (n % 50 === 0) conn.exec("PRAGMA wal_checkpoint(PASSIVE)");
  return result;
}

/**
 * Applies the pragmas the library applies on open.
 *
 * @param conn The connection.
 * @param synchronous `FULL` or `NORMAL`; `"readonly"` for a read-only connection.
 */
export function rawPragmas(
  conn: RawConnection,
  synchronous: "FULL" | "NORMAL" | "readonly" = "FULL",
): void {
  conn.exec("PRAGMA busy_timeout = 1000");
  // The page cache the library gives each connection (lib/sqlite/open.ts).
  conn.exec(`PRAGMA cache_size = -${CACHE_KIB}`);
  conn.exec("PRAGMA foreign_keys = ON");
  if (synchronous === "readonly") return;
  stmt(conn, "PRAGMA journal_mode = WAL").get();
  conn.exec(`PRAGMA synchronous = ${synchronous}`);
}

// ── Writes ──────────────────────────────────────────────────────────────────

const INSERT_MESSAGE = `INSERT INTO messages (session_id, role, content, tool_call_id,
  tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, reasoning_content,
  reasoning_details, codex_reasoning_items, codex_message_items)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const BUMP_COUNTERS = `UPDATE sessions SET message_count = message_count + ?,
  tool_call_count = tool_call_count + ? WHERE id = ?`;

function toolCallCount(calls: unknown): number {
  if (calls === undefined || calls === null) return 0;
  return Array.isArray(calls) ? calls.length : 1;
}

function insertMessage(conn: RawConnection, sessionId: string, m: NewMessage, at: number): number {
  const result = stmt(conn, INSERT_MESSAGE).run(
    sessionId,
    m.role,
    encodeContent(m.content),
    m.toolCallId ?? null,
    encodeJson(m.toolCalls),
    m.toolName ?? null,
    at,
    m.tokenCount ?? null,
    m.finishReason ?? null,
    m.reasoning ?? null,
    m.reasoningContent ?? null,
    encodeJson(m.reasoningDetails),
    encodeJson(m.codexReasoningItems),
    encodeJson(m.codexMessageItems),
  ) as { lastInsertRowid: number | bigint };
  return Number(result.lastInsertRowid);
}

/**
 * One message in its own transaction: insert, then bump the counters.
 *
 * @param conn The connection.
 * @param sessionId The session.
 * @param message The message.
 * @param at Its timestamp.
 * @returns The new id.
 */
export function rawAppendMessage(
  conn: RawConnection,
  sessionId: string,
  message: NewMessage,
  at: number,
): number {
  return tx(conn, () => {
    const id = insertMessage(conn, sessionId, message, at);
    stmt(conn, BUMP_COUNTERS).run(1, toolCallCount(message.toolCalls), sessionId);
    return id;
  });
}

/**
 * Many messages in one transaction, counters bumped once.
 *
 * @param conn The connection.
 * @param sessionId The session.
 * @param messages The messages.
 * @param clock Gives each message its timestamp.
 * @returns The new ids.
 */
export function rawAppendMessages(
  conn: RawConnection,
  sessionId: string,
  messages: readonly NewMessage[],
  clock: () => number,
): number[] {
  return tx(conn, () => {
    let calls = 0;
    const ids = messages.map((m) => {
      calls += toolCallCount(m.toolCalls);
      return insertMessage(conn, sessionId, m, clock());
    });
    stmt(conn, BUMP_COUNTERS).run(messages.length, calls, sessionId);
    return ids;
  });
}

/**
 * Creates the session of a plan (its own transaction).
 *
 * @param conn The connection.
 * @param plan The session.
 */
export function rawCreateSession(conn: RawConnection, plan: SessionPlan): void {
  tx(conn, () =>
    stmt(
      conn,
      `INSERT OR IGNORE INTO sessions (id, source, user_id, model, model_config, system_prompt,
       parent_session_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      plan.id,
      plan.source,
      plan.userId,
      plan.model,
      encodeJson({ temperature: 0.7 }),
      plan.systemPrompt,
      plan.parentId,
      plan.startedAt,
    ));
}

/**
 * Ends, titles and bills the session of a plan (one transaction each, as the
 * library's calls are).
 *
 * @param conn The connection.
 * @param plan The session.
 */
export function rawFinishSession(conn: RawConnection, plan: SessionPlan): void {
  if (plan.endedAt !== null) {
    tx(
      conn,
      () =>
        stmt(
          conn,
          "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
        )
          .run(plan.endedAt, plan.endReason, plan.id),
    );
  }
  if (plan.title !== null) {
    tx(conn, () => {
      stmt(conn, "SELECT id FROM sessions WHERE title = ? AND id != ?").get(plan.title, plan.id);
      stmt(conn, "UPDATE sessions SET title = ? WHERE id = ?").run(plan.title, plan.id);
    });
  }
  tx(conn, () => {
    stmt(conn, "INSERT OR IGNORE INTO sessions (id, source, model, started_at) VALUES (?, ?, ?, ?)")
      .run(plan.id, "unknown", plan.model, plan.startedAt);
    stmt(
      conn,
      `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
       estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE(?, 0),
       model = COALESCE(model, ?), api_call_count = COALESCE(api_call_count, 0) + ? WHERE id = ?`,
    ).run(plan.inputTokens, plan.outputTokens, plan.costUsd, plan.model, 1, plan.id);
  });
}

// ── Search ──────────────────────────────────────────────────────────────────

/** One search hit, as the library returns it. */
export interface RawHit {
  id: number;
  session_id: string;
  role: string;
  snippet: string | null;
  timestamp: number;
  tool_name: string | null;
  source: string;
  model: string | null;
  session_started: number;
  context: { role: string; content: string }[];
}

const HIT_COLUMNS = `m.id, m.session_id, m.role, %SNIPPET% AS snippet, m.content, m.timestamp,
  m.tool_name, s.source, s.model, s.started_at AS session_started`;

/**
 * The ranked page: the very statement the library prepares (one per
 * table), so the floor differs from ours only by what runs around it.
 */
function ftsSql(table: string): string {
  return pageSql(table, "");
}

/**
 * Python's statement for `search_messages(sort="newest" | "oldest")`
 * (`ORDER BY m.timestamp DESC, rank`), with the library's id tie-break.
 */
function sortedSql(table: string, order: "newest" | "oldest"): string {
  const dir = order === "newest" ? "DESC" : "ASC";
  return pageSql(table, "").replace(
    /ORDER BY rank/,
    `ORDER BY m.timestamp ${dir}, rank, m.id ${dir}`,
  );
}

const LIKE_CLAUSE = `(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\'
  OR m.tool_calls LIKE ? ESCAPE '\\')`;

function likeSql(tokens: number): string {
  const clauses = Array.from({ length: tokens }, () => LIKE_CLAUSE).join(" OR ");
  return `SELECT ${
    HIT_COLUMNS.replace("%SNIPPET%", "substr(m.content, max(1, instr(m.content, ?) - 40), 120)")
  } FROM messages m JOIN sessions s ON s.id = m.session_id WHERE (${clauses})
    ORDER BY m.timestamp DESC LIMIT ? OFFSET ?`;
}

const CONTEXT_SQL = `WITH target AS (SELECT session_id, timestamp, id FROM messages WHERE id = ?)
SELECT role, content FROM (SELECT m.role, m.content FROM messages m, target t
  WHERE m.session_id = t.session_id
    AND (m.timestamp < t.timestamp OR (m.timestamp = t.timestamp AND m.id < t.id))
  ORDER BY m.timestamp DESC, m.id DESC LIMIT 1)
UNION ALL
SELECT role, content FROM messages WHERE id = ?
UNION ALL
SELECT role, content FROM (SELECT m.role, m.content FROM messages m, target t
  WHERE m.session_id = t.session_id
    AND (m.timestamp > t.timestamp OR (m.timestamp = t.timestamp AND m.id > t.id))
  ORDER BY m.timestamp ASC, m.id ASC LIMIT 1)`;

function escapeLike(token: string): string {
  return token.replaceAll("\\", "\\\\").replaceAll("%", "\\%").replaceAll("_", "\\_");
}

/** The first 200 code points of what a context line shows. */
function contextLine(stored: unknown): string {
  const content = decodeContent(stored);
  let text: string;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) text = contentText(content).trim() || "[multimodal content]";
  else text = "";
  let cut = 0, points = 0;
  while (cut < text.length && points < 200) {
    cut += text.codePointAt(cut)! > 0xffff ? 2 : 1;
    points++;
  }
  return text.slice(0, cut);
}

/**
 * One search with plain statements: for full-text kinds, the library's own
 * page and context statements (`rank`), or Python's full sort by time
 * (`newest` / `oldest`); for the LIKE kind, Python's full scan and one
 * context query per hit.
 *
 * @param conn The connection.
 * @param query The query, already sanitized and routed (see `queries.ts`).
 * @param limit Page size.
 * @param order The order of the hits.
 * @returns The hits with their context.
 */
export function rawSearch(
  conn: RawConnection,
  query: QuerySpec,
  limit = 20,
  order: "rank" | "newest" | "oldest" = "rank",
): RawHit[] {
  let rows: SqlRow[];
  if (query.path === "like") {
    const params: SqlValue[] = [query.tokens[0]];
    for (const token of query.tokens) {
      const pattern = `%${escapeLike(token)}%`;
      params.push(pattern, pattern, pattern);
    }
    rows = stmt(conn, likeSql(query.tokens.length)).all(...params, limit, 0);
  } else {
    const table = query.path === "fts" ? "messages_fts" : "messages_fts_trigram";
    const sql = order === "rank" ? ftsSql(table) : sortedSql(table, order);
    rows = stmt(conn, sql).all(query.match, limit, 0);
    // The library's statements: one context query for the page.
    const contexts = rows.map(() => [] as { role: string; content: string }[]);
    const found = stmt(conn, PAGE_CONTEXT_SQL).all(JSON.stringify(rows.map((r) => r.id)));
    found.sort((a, b) => Number(a.ord) - Number(b.ord) || Number(a.pos) - Number(b.pos));
    for (const c of found) {
      contexts[Number(c.ord)].push({ role: c.role as string, content: contextLine(c.content) });
    }
    return rows.map((row, i) => hit(row, contexts[i]));
  }
  const context = stmt(conn, CONTEXT_SQL);
  return rows.map((row) =>
    hit(
      row,
      context.all(row.id, row.id).map((c) => ({
        role: c.role as string,
        content: contextLine(c.content),
      })),
    )
  );
}

function hit(row: SqlRow, context: { role: string; content: string }[]): RawHit {
  return {
    id: Number(row.id),
    session_id: row.session_id as string,
    role: row.role as string,
    snippet: row.snippet as string | null,
    timestamp: row.timestamp as number,
    tool_name: row.tool_name as string | null,
    source: row.source as string,
    model: row.model as string | null,
    session_started: row.session_started as number,
    context,
  };
}

// ── Messages and conversations ──────────────────────────────────────────────

/** Content decoded and `tool_calls` parsed; the other JSON columns stay text, as in Python. */
function messageRow(row: SqlRow): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  out.content = decodeContent(row.content);
  out.tool_calls = decodeJson(row.tool_calls, []);
  return out;
}

/**
 * Every message of a session, decoded, by `timestamp, id`.
 *
 * @param conn The connection.
 * @param sessionId The session.
 * @returns The rows.
 */
export function rawGetMessages(conn: RawConnection, sessionId: string): Record<string, unknown>[] {
  return stmt(conn, "SELECT * FROM messages WHERE session_id = ? ORDER BY timestamp, id")
    .all(sessionId).map(messageRow);
}

const MEMORY_FENCE = /<\s*memory-context\s*>[\s\S]*?<\/\s*memory-context\s*>/gi;
const MEMORY_NOTE =
  /\[System note:\s*The following is recalled memory context,\s*NOT new user input\.\s*Treat as (?:informational background data|authoritative reference data[^\]]*)\.\]\s*/gi;
const MEMORY_TAG = /<\/?\s*memory-context\s*>/gi;

/**
 * A transcript in the chat shape; with `ancestors`, the whole parent chain
 * first and re-recorded prompts dropped.
 *
 * @param conn The connection.
 * @param sessionId The session.
 * @param ancestors Prepend the parent chain.
 * @returns The conversation.
 */
export function rawConversation(
  conn: RawConnection,
  sessionId: string,
  ancestors: boolean,
): Record<string, unknown>[] {
  const ids = [sessionId];
  if (ancestors) {
    const parentOf = stmt(conn, "SELECT parent_session_id FROM sessions WHERE id = ?");
    const seen = new Set(ids);
    let cur: string | null = sessionId;
    for (let i = 0; i < 100 && cur; i++) {
      const row = parentOf.get(cur);
      cur = (row?.parent_session_id as string | null | undefined) ?? null;
      if (!cur || seen.has(cur)) break;
      seen.add(cur);
      ids.unshift(cur);
    }
  }
  const rows = stmt(
    conn,
    `SELECT role, content, tool_call_id, tool_calls, tool_name, finish_reason, reasoning,
     reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items
     FROM messages WHERE session_id IN (${ids.map(() => "?").join(", ")}) ORDER BY timestamp, id`,
  ).all(...ids);
  const out: Record<string, unknown>[] = [];
  for (const row of rows) {
    let content = decodeContent(row.content);
    if ((row.role === "user" || row.role === "assistant") && typeof content === "string") {
      content = content.replace(MEMORY_FENCE, "").replace(MEMORY_NOTE, "").replace(MEMORY_TAG, "")
        .trim();
    }
    const msg: Record<string, unknown> = { role: row.role, content };
    if (row.tool_call_id) msg.tool_call_id = row.tool_call_id;
    if (row.tool_name) msg.tool_name = row.tool_name;
    if (row.tool_calls) msg.tool_calls = decodeJson(row.tool_calls, []);
    if (row.role === "assistant") {
      if (row.finish_reason) msg.finish_reason = row.finish_reason;
      if (row.reasoning) msg.reasoning = row.reasoning;
      if (row.reasoning_content !== null) msg.reasoning_content = row.reasoning_content;
      for (const key of ["reasoning_details", "codex_reasoning_items", "codex_message_items"]) {
        if (row[key]) msg[key] = decodeJson(row[key], null) as JsonValue;
      }
    }
    if (ancestors && row.role === "user" && typeof content === "string" && content !== "") {
      let replayed = false;
      for (let i = out.length - 1; i >= 0; i--) {
        const prev = out[i];
        if (prev.role === "assistant" && (prev.content || prev.tool_calls)) break;
        if (prev.role === "user" && prev.content === content) {
          replayed = true;
          break;
        }
      }
      if (replayed) continue;
    }
    out.push(msg);
  }
  return out;
}

// ── Listing ─────────────────────────────────────────────────────────────────

const VISIBLE = `(s.parent_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions p
  WHERE p.id = s.parent_session_id AND p.end_reason = 'branched' AND s.started_at >= p.ended_at))`;
const RICH_COLUMNS = `s.*,
  COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63)
    FROM messages m WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
    ORDER BY m.timestamp, m.id LIMIT 1), '') AS _preview_raw,
  COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at)
    AS last_active`;
const LIST_BY_STARTED = `SELECT ${RICH_COLUMNS} FROM sessions s WHERE ${VISIBLE}
  ORDER BY s.started_at DESC LIMIT ? OFFSET ?`;
const LIST_BY_ACTIVE = `WITH RECURSIVE chain(root_id, cur_id) AS (
    SELECT s.id, s.id FROM sessions s WHERE ${VISIBLE}
    UNION ALL
    SELECT c.root_id, child.id FROM chain c JOIN sessions parent ON parent.id = c.cur_id
      JOIN sessions child ON child.parent_session_id = c.cur_id
      WHERE parent.end_reason = 'compression' AND child.started_at >= parent.ended_at
  ), chain_max(root_id, effective_last_active) AS (
    SELECT root_id, MAX(COALESCE((SELECT MAX(timestamp) FROM messages WHERE session_id = cur_id),
      (SELECT started_at FROM sessions WHERE id = cur_id))) FROM chain GROUP BY root_id
  )
  SELECT ${RICH_COLUMNS}, COALESCE(cm.effective_last_active, s.started_at) AS _effective_last_active
  FROM sessions s LEFT JOIN chain_max cm ON cm.root_id = s.id WHERE ${VISIBLE}
  ORDER BY _effective_last_active DESC, s.started_at DESC, s.id DESC LIMIT ? OFFSET ?`;
const TIP_STEP = `SELECT id FROM sessions WHERE parent_session_id = ?1 AND started_at >=
  (SELECT ended_at FROM sessions WHERE id = ?1 AND end_reason = 'compression')
  ORDER BY started_at DESC LIMIT 1`;
const TIP_KEYS = [
  "id",
  "ended_at",
  "end_reason",
  "message_count",
  "tool_call_count",
  "title",
  "last_active",
  "preview",
  "model",
  "system_prompt",
];

function withPreview(row: SqlRow): Record<string, unknown> {
  const { _preview_raw, _effective_last_active: _, ...rest } = row;
  const raw = String(_preview_raw ?? "").trim();
  const points = Array.from(raw);
  const preview = points.length === 0
    ? ""
    : points.slice(0, 60).join("") + (points.length > 60 ? "..." : "");
  return { ...rest, preview };
}

/**
 * `listSessionsRich` with the Python statements (roots and branches, tips
 * projected).
 *
 * @param conn The connection.
 * @param byLastActive Order by the chain's last activity.
 * @param limit Page size.
 * @returns The rows.
 */
export function rawListSessionsRich(
  conn: RawConnection,
  byLastActive: boolean,
  limit = 20,
): Record<string, unknown>[] {
  const rows = stmt(conn, byLastActive ? LIST_BY_ACTIVE : LIST_BY_STARTED).all(limit, 0)
    .map(withPreview);
  return rows.map((row) => {
    if (row.end_reason !== "compression") return row;
    let tip = row.id as string;
    for (let i = 0; i < 100; i++) {
      const next = stmt(conn, TIP_STEP).get(tip);
      if (!next) break;
      tip = next.id as string;
    }
    if (tip === row.id) return row;
    const tipRow = stmt(conn, `SELECT ${RICH_COLUMNS} FROM sessions s WHERE s.id = ?`).get(tip);
    if (!tipRow) return row;
    const projected: Record<string, unknown> = { ...row };
    const enriched = withPreview(tipRow);
    for (const key of TIP_KEYS) projected[key] = enriched[key];
    projected._lineage_root_id = row.id;
    return projected;
  });
}

const SEARCH_SESSIONS = `SELECT s.*, COALESCE(m.last_active, s.started_at) AS last_active
  FROM sessions s LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active FROM messages
  GROUP BY session_id) m ON m.session_id = s.id
  ORDER BY last_active DESC, s.started_at DESC, s.id DESC LIMIT ? OFFSET ?`;

/**
 * `searchSessions` with the Python statement.
 *
 * @param conn The connection.
 * @param limit Page size.
 * @returns The rows.
 */
export function rawSearchSessions(conn: RawConnection, limit = 20): SqlRow[] {
  return stmt(conn, SEARCH_SESSIONS).all(limit, 0);
}

/**
 * The whole export, one session at a time, in `searchSessions` order.
 *
 * @param conn The connection.
 * @returns A generator of sessions with their messages.
 */
export function* rawIterateExport(conn: RawConnection): Generator<Record<string, unknown>> {
  for (const session of stmt(conn, SEARCH_SESSIONS).all(100000, 0)) {
    yield { ...session, messages: rawGetMessages(conn, session.id as string) };
  }
}
