/**
 * A common word searched with a narrow filter: a source of a few sessions
 * (0.1% of the messages), one small session, a role no message has, the
 * last hour. The raw floor is Python's ranked statement with the filter's
 * terms, and the context statement of the page, as the library reads it:
 * FTS5 ranks every match of the word before the filter refuses nearly all.
 *
 * The corpus has no source that narrow, so the phase gives three sessions,
 * a quarter, a half and three quarters into the file, a source of their
 * own (`narrow`) through the raw connection, and gives them back their
 * sources when it is done.
 *
 * @module
 */
import type { SessionDB } from "../lib/sqlite/session_db.ts";
import type { SqlValue } from "../lib/sqlite/driver/types.ts";
import { pageSql } from "../lib/sqlite/search/ranked.ts";
import { CONTEXT_SQL } from "../lib/sqlite/search/context.ts";
import type { RawConnection } from "./native.ts";
import { stmt } from "./raw.ts";
import type { Row } from "./report.ts";

/** The contestants of one case. */
export interface NarrowContestants {
  /** The library. */
  readonly db: SessionDB;
  /** The raw floor over `lib/driver`. */
  readonly raw: RawConnection;
  /** The raw floor on the runtime module itself. */
  readonly native: RawConnection;
}

/** Times one case: `ours`, `raw`, `native`; a row of p50 and p95. */
export type LatencyRow = (
  base: Omit<Row, "unit">,
  contenders: { ours?: () => unknown; raw: () => unknown; native: () => unknown },
  iterations: number,
) => Row;

/** The words: the most common, a common one, a rarer one. */
const WORDS = ["the", "docker", "kernel"];

/** The source the phase gives its few sessions. */
const NARROW_SOURCE = "narrow";

interface NarrowCase {
  readonly name: string;
  readonly options: Record<string, unknown>;
  /** The filter's terms in Python's statement, and their parameters. */
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

function one(conn: RawConnection, sql: string, ...params: SqlValue[]): Record<string, SqlValue> {
  return stmt(conn, sql).get(...params) ?? {};
}

/** The ids of three sessions a quarter, a half and three quarters into the file. */
function narrowSessions(conn: RawConnection): string[] {
  const count = Number(one(conn, "SELECT count(*) AS n FROM sessions").n);
  return [1, 2, 3].map((q) =>
    String(
      one(
        conn,
        "SELECT id FROM sessions ORDER BY rowid LIMIT 1 OFFSET ?",
        Math.floor(q * count / 4),
      )
        .id,
    )
  );
}

function cases(conn: RawConnection, narrowed: readonly string[]): NarrowCase[] {
  const small = String(
    one(
      conn,
      "SELECT session_id AS id FROM messages GROUP BY session_id HAVING count(*) BETWEEN 20 AND 60 " +
        "LIMIT 1",
    ).id,
  );
  const last = Number(one(conn, "SELECT max(timestamp) AS t FROM messages").t);
  const sources = JSON.stringify([NARROW_SOURCE]);
  const roles = JSON.stringify(["system"]);
  return [
    {
      name: `--source (${narrowed.length} sessions)`,
      options: { sourceFilter: [NARROW_SOURCE] },
      sql: " AND s.source IN (SELECT value FROM json_each(?))",
      params: [sources],
    },
    {
      name: "--session (a small one)",
      options: { sessionId: small },
      sql: " AND m.session_id = ?",
      params: [small],
    },
    {
      name: "--role system (none)",
      options: { roleFilter: ["system"] },
      sql: " AND m.role IN (SELECT value FROM json_each(?))",
      params: [roles],
    },
    {
      name: "--since (the last hour)",
      options: { since: last - 3600 },
      sql: " AND m.timestamp >= ?",
      params: [last - 3600],
    },
  ];
}

/** Python's page with the filter, then the page's contexts, as the library reads them. */
function floor(conn: RawConnection, word: string, c: NarrowCase): unknown {
  const rows = stmt(conn, pageSql("messages_fts", c.sql)).all(word, ...c.params, 20, 0);
  stmt(conn, CONTEXT_SQL).all(JSON.stringify(rows.map((r) => r.id)));
  return rows;
}

/**
 * Times each word with each narrow filter, ours against the raw floor, and
 * adds a row per case to `rows`.
 *
 * @param c The library and the raw connections, on the corpus file.
 * @param options How many iterations, how a row is timed, where rows go.
 */
export function narrowFilterPhase(
  c: NarrowContestants,
  options: { iterations: number; latencyRow: LatencyRow; rows: Row[] },
): void {
  const narrowed = narrowSessions(c.raw);
  const was = narrowed.map((id) =>
    String(one(c.raw, "SELECT source FROM sessions WHERE id = ?", id).source)
  );
  const relabel = (id: string, source: string) =>
    stmt(c.raw, "UPDATE sessions SET source = ? WHERE id = ?").run(source, id);
  narrowed.forEach((id) => relabel(id, NARROW_SOURCE));
  try {
    const messages = Number(one(c.raw, "SELECT count(*) AS n FROM messages").n);
    const share = Number(
      one(
        c.raw,
        "SELECT count(*) AS n FROM messages WHERE session_id IN (SELECT value FROM json_each(?))",
        JSON.stringify(narrowed),
      ).n,
    ) / messages;
    for (const word of WORDS) {
      for (const one of cases(c.raw, narrowed)) {
        const ours = c.db.searchMessages(word, { limit: 20, ...one.options });
        const raw = floor(c.raw, word, one) as { id: SqlValue }[];
        options.rows.push(options.latencyRow({
          group: "search, narrow filter",
          op: `${word} ${one.name}`,
          same: ours.map((h) => h.id).join() === raw.map((r) => Number(r.id)).join(),
          note: one.name.startsWith("--source")
            ? `${(share * 100).toFixed(2)}% of the messages; ${raw.length} hits`
            : `${raw.length} hits`,
        }, {
          ours: () => c.db.searchMessages(word, { limit: 20, ...one.options }),
          raw: () => floor(c.raw, word, one),
          native: () => floor(c.native, word, one),
        }, options.iterations));
      }
    }
  } finally {
    narrowed.forEach((id, i) => relabel(id, was[i]));
  }
}
