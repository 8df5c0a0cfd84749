/**
 * The PostgreSQL doctor's checks of the sessions, with their repairs:
 *
 * - `counters`: `message_count` and `tool_call_count` against the rows, by
 *   the SPEC's rules (as the SQLite doctor counts them). A synced session's
 *   counters came from its host's file: the file may hold the same fault,
 *   which the host's own `doctor --fix` mends;
 * - `lineage`: parent links that form a cycle (a foreign key keeps every
 *   parent present), which would make every lineage walk stop short;
 * - `origins`: a file `sync` has not shipped for a week, or never finished
 *   shipping.
 *
 * @module
 */
import type { PgQuery } from "../_client_types.ts";
import { finding, type HealthCheck } from "../../core/health_report.ts";
import { findLineageFaults, type LineageFaults, lineageLinkOf } from "../../core/lineage_faults.ts";
import { jsonParam } from "../_text_codec.ts";

/** Messages read per round trip while tool calls are counted. */
const PAGE = 5_000;

/** What one message's stored `tool_calls` adds to `tool_call_count`: an array's length, else 1. */
export function toolCallsInText(text: string | null): number {
  if (text === null) return 0;
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) ? value.length : 1;
  } catch {
    return 1;
  }
}

/** One session whose counters differ from its rows. */
export interface PgCounterFault {
  /** The session. */
  readonly id: string;
  /** The origin it was synced from, or `null`. */
  readonly origin: string | null;
  /** Stored `message_count`. */
  readonly storedMessages: number | null;
  /** Messages it has. */
  readonly messages: number;
  /** Stored `tool_call_count`. */
  readonly storedToolCalls: number | null;
  /** Tool calls its messages hold. */
  readonly toolCalls: number;
}

/** Each session's tool calls, counted from the stored text of every message that has some. */
async function toolCallsBySession(query: PgQuery): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let after = 0;
  for (;;) {
    const rows = await query(
      `SELECT id, session_id, tool_calls FROM messages
       WHERE tool_calls IS NOT NULL AND id > $1::bigint ORDER BY id LIMIT ${PAGE}`,
      [after],
    );
    for (const row of rows) {
      const id = String(row.session_id);
      counts.set(id, (counts.get(id) ?? 0) + toolCallsInText(row.tool_calls as string));
    }
    if (rows.length < PAGE) return counts;
    after = Number(rows[rows.length - 1].id);
  }
}

/** What {@linkcode counterFaults} found. */
export interface PgCounterFaults {
  /** Sessions whose counters differ from their rows, by id. */
  readonly faults: PgCounterFault[];
  /** Sessions of a newer Hermes's file (with columns beyond v11), not judged. */
  readonly notJudged: number;
}

/**
 * Finds the sessions whose counters differ from their rows. A session a
 * newer Hermes wrote (its row has columns beyond v11) is not judged, as
 * the SQLite doctor does not judge such a file: that Hermes counts only
 * the messages it still shows (a compacted transcript keeps its old rows).
 *
 * @param query Runs a statement (in the checks' snapshot).
 * @returns The faults, and how many sessions were not judged.
 */
export async function counterFaults(query: PgQuery): Promise<PgCounterFaults> {
  const tools = await toolCallsBySession(query);
  const rows = await query(
    `SELECT s.id, s.message_count, s.tool_call_count, ss.origin,
       s.extra_columns IS NOT NULL AS newer,
       (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n
     FROM sessions s LEFT JOIN sync_sessions ss ON ss.session_id = s.id
     ORDER BY s.id COLLATE "C"`,
  );
  const faults: PgCounterFault[] = [];
  let notJudged = 0;
  for (const row of rows) {
    if (row.newer === true) {
      notJudged++;
      continue;
    }
    const id = String(row.id);
    const fault: PgCounterFault = {
      id,
      origin: row.origin == null ? null : String(row.origin),
      storedMessages: row.message_count == null ? null : Number(row.message_count),
      messages: Number(row.n),
      storedToolCalls: row.tool_call_count == null ? null : Number(row.tool_call_count),
      toolCalls: tools.get(id) ?? 0,
    };
    if (fault.storedMessages !== fault.messages || fault.storedToolCalls !== fault.toolCalls) {
      faults.push(fault);
    }
  }
  return { faults, notJudged };
}

/**
 * The `counters` finding.
 *
 * @param found What {@linkcode counterFaults} found.
 * @returns ok, or a fixable problem naming the sessions.
 */
export function countersFinding({ faults, notJudged }: PgCounterFaults): HealthCheck {
  const newer = notJudged === 0
    ? ""
    : ` (${notJudged} ${
      notJudged === 1 ? "session" : "sessions"
    } of a newer Hermes not judged: it may count differently)`;
  if (faults.length === 0) {
    return finding("counters", "ok", `message_count and tool_call_count match the rows${newer}`);
  }
  const synced = new Set(faults.flatMap((f) => f.origin === null ? [] : [f.origin]));
  const origins = [...synced].sort();
  const note = origins.length === 0
    ? ""
    : `; ${faults.filter((f) => f.origin !== null).length} of them synced from ${
      origins.join(", ")
    }, whose files may need \`hermes-state doctor --fix\` too`;
  return finding(
    "counters",
    "problem",
    `${faults.length} ${
      faults.length === 1 ? "session has" : "sessions have"
    } counters that differ from their rows${note}${newer}`,
    {
      fix: "hermes-state doctor --fix (recounts them)",
      fixable: true,
      details: faults.map((f) =>
        `${f.id}: message_count ${f.storedMessages} (rows ${f.messages}), ` +
        `tool_call_count ${f.storedToolCalls} (rows ${f.toolCalls})`
      ),
    },
  );
}

/**
 * Recounts each session, one transaction each, its row locked first: an
 * append that is under way either ends before the count (and is counted)
 * or adds its own message to the count written.
 *
 * @param transaction Runs a function in one transaction.
 * @param ids The sessions.
 * @returns What was done, in one line.
 */
export async function recountSessions(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
  ids: readonly string[],
): Promise<string> {
  let recounted = 0;
  for (const id of ids) {
    recounted += await transaction(async (query) => {
      const locked = await query("SELECT id FROM sessions WHERE id = $1 FOR UPDATE", [id]);
      if (locked.length === 0) return 0;
      const [counted] = await query("SELECT count(*) AS n FROM messages WHERE session_id = $1", [
        id,
      ]);
      let toolCalls = 0;
      const calls = await query(
        "SELECT tool_calls FROM messages WHERE session_id = $1 AND tool_calls IS NOT NULL",
        [id],
      );
      for (const row of calls) toolCalls += toolCallsInText(row.tool_calls as string);
      await query(
        "UPDATE sessions SET message_count = $2::bigint, tool_call_count = $3::bigint WHERE id = $1",
        [id, Number(counted?.n ?? 0), toolCalls],
      );
      return 1;
    });
  }
  return `recounted ${recounted} sessions`;
}

/**
 * Finds cycles of parent links (and parents that do not exist, which the
 * foreign key should make impossible).
 *
 * @param query Runs a statement (in the checks' snapshot).
 * @returns The faults.
 */
export async function pgLineageFaults(query: PgQuery): Promise<LineageFaults> {
  const rows = await query("SELECT id, parent_session_id, started_at FROM sessions");
  return findLineageFaults(rows.map(lineageLinkOf));
}

/**
 * Clears the parent links {@linkcode pgLineageFaults} finds, as deleting a
 * parent does, in one transaction.
 *
 * @param transaction Runs a function in one transaction.
 * @returns What was done, in one line.
 */
export async function clearBrokenParentLinks(
  transaction: <T>(fn: (query: PgQuery) => Promise<T>) => Promise<T>,
): Promise<string> {
  const cleared = await transaction(async (query) => {
    const { missingParents, cycleBreaks } = await pgLineageFaults(query);
    const ids = [...missingParents.map(([id]) => id), ...cycleBreaks];
    if (ids.length === 0) return 0;
    const rows = await query(
      `UPDATE sessions SET parent_session_id = NULL
       WHERE id IN (SELECT jsonb_array_elements_text($1::text::jsonb)) RETURNING id`,
      [jsonParam(ids)],
    );
    return rows.length;
  });
  return `cleared ${cleared} parent links`;
}

/** `2026-11-20 (12 days ago)`. */
function daysAgo(at: number, now: number): string {
  const days = Math.floor((now - at) / 86_400);
  return `${new Date(at * 1000).toISOString().slice(0, 10)} (${days} days ago)`;
}

/** A synced file whose last pass is older than this is named (seconds). */
const STALE_ORIGIN_SECONDS = 7 * 86_400;

/**
 * The `origins` finding: each file `sync` ships has had a pass within a week.
 *
 * @param query Runs a statement.
 * @param now The time, in seconds since the epoch.
 * @returns ok, or a warning naming the origins (nothing to repair here).
 */
export async function checkOrigins(query: PgQuery, now: number): Promise<HealthCheck> {
  const rows = await query(
    'SELECT origin, host, path, last_pass_at FROM sync_origins ORDER BY origin COLLATE "C"',
  );
  if (rows.length === 0) return finding("origins", "ok", "no file is synced to this store");
  const stale = rows.filter((row) =>
    row.last_pass_at == null || now - Number(row.last_pass_at) > STALE_ORIGIN_SECONDS
  );
  if (stale.length === 0) {
    const files = rows.length === 1
      ? "1 synced file, with a pass"
      : `${rows.length} synced files, each with a pass`;
    return finding("origins", "ok", `${files} this week`);
  }
  return finding(
    "origins",
    "warning",
    `${stale.length} of ${rows.length} synced ${
      rows.length === 1 ? "file has" : "files have"
    } had no pass for a week or more`,
    {
      fix: "run `hermes-state sync` on their hosts, or remove a host taken out of service " +
        "(hermes-state origins --remove NAME)",
      details: stale.map((row) =>
        `${row.origin}: ${row.host}:${row.path}, ${
          row.last_pass_at == null
            ? "no pass ever finished"
            : `last pass ${daysAgo(Number(row.last_pass_at), now)}`
        }`
      ),
    },
  );
}
