/**
 * Counters: each session's `message_count` and `tool_call_count` against
 * its rows, by the SPEC's rules (+1 per message; + the length of a
 * `tool_calls` array, +1 for any other non-null value). `api_call_count`
 * comes from token updates and is left alone.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import { SCHEMA_VERSION } from "../sqlite/schema/schema_sql.ts";
import { readSchemaVersion } from "../sqlite/schema/schema_version.ts";
import { finding, type HealthCheck } from "../core/health_report.ts";
import { groupedCount } from "../core/grouped_digits.ts";

/** What one message adds to `tool_call_count`, in SQL over `messages` as `m`. */
export const TOOL_CALLS_ADDED_SQL = `CASE WHEN m.tool_calls IS NULL THEN 0
  WHEN json_valid(m.tool_calls) AND json_type(m.tool_calls) = 'array'
  THEN json_array_length(m.tool_calls) ELSE 1 END`;

/** Each session with the counts its rows give (`n`, `t`) beside the stored ones. */
export const RECOUNT_SQL = `SELECT s.id AS id, s.message_count AS stored_messages,
  s.tool_call_count AS stored_tools,
  (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n,
  (SELECT COALESCE(sum(${TOOL_CALLS_ADDED_SQL}), 0) FROM messages m WHERE m.session_id = s.id) AS t
  FROM sessions s`;

/** One session whose counters differ from its rows. */
export interface CounterMismatch {
  /** The session. */
  readonly id: string;
  /** Stored `message_count`. */
  readonly storedMessages: number | null;
  /** Messages it has. */
  readonly messages: number;
  /** Stored `tool_call_count`. */
  readonly storedToolCalls: number | null;
  /** Tool calls its messages hold. */
  readonly toolCalls: number;
}

/**
 * Finds the sessions whose counters differ from their rows.
 *
 * @param db The connection.
 * @returns The mismatches, by session id.
 */
export function counterMismatches(db: SqliteConnection): CounterMismatch[] {
  return db.prepare(
    `SELECT * FROM (${RECOUNT_SQL}) WHERE stored_messages IS NOT n OR stored_tools IS NOT t ORDER BY id`,
  ).all().map((row) => ({
    id: String(row.id),
    storedMessages: row.stored_messages === null ? null : Number(row.stored_messages),
    messages: Number(row.n),
    storedToolCalls: row.stored_tools === null ? null : Number(row.stored_tools),
    toolCalls: Number(row.t),
  }));
}

/**
 * The `counters` finding.
 *
 * @param db The connection.
 * @returns ok, or a fixable problem naming the sessions.
 */
export function checkCounters(db: SqliteConnection): HealthCheck {
  const version = readSchemaVersion(db) ?? undefined;
  if (version !== undefined && version > SCHEMA_VERSION) {
    return finding(
      "counters",
      "ok",
      `not checked: schema ${version} (a newer Hermes) may count messages differently`,
    );
  }
  const found = counterMismatches(db);
  if (found.length === 0) {
    return finding("counters", "ok", "message_count and tool_call_count match the rows");
  }
  return finding(
    "counters",
    "problem",
    `${
      groupedCount(found.length, "session has", "sessions have")
    } counters that differ from their rows`,
    {
      fix: "hermes-state doctor --fix (recounts them)",
      fixable: true,
      details: found.map((m) =>
        `${m.id}: message_count ${m.storedMessages} (rows ${m.messages}), ` +
        `tool_call_count ${m.storedToolCalls} (rows ${m.toolCalls})`
      ),
    },
  );
}
