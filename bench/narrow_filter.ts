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
 * The wide cases ("search, wide filter") use the corpus's own sources, of
 * about 5% and a third of the sessions (the first also at a deep page), one
 * role and the second half of the file's time: filters that pass a good
 * share of a word's matches.
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
  const offset = Number(c.options.offset ?? 0);
  const rows = stmt(conn, pageSql("messages_fts", c.sql)).all(word, ...c.params, 20, offset);
  stmt(conn, CONTEXT_SQL).all(JSON.stringify(rows.map((r) => r.id)));
  return rows;
}

/** How a phase times its rows, and where they go. */
interface PhaseOptions {
  readonly iterations: number;
  readonly latencyRow: LatencyRow;
  readonly rows: Row[];
}

/**
 * Times `word` with the filter `one`, ours against the raw floor, and adds
 * the row to `options.rows` in `group`, its note from the raw page's hits.
 */
function timeSearch(
  c: NarrowContestants,
  options: PhaseOptions,
  group: string,
  word: string,
  one: NarrowCase,
  note: (hits: number) => string = (hits) => `${hits} hits`,
): void {
  const ours = c.db.searchMessages(word, { limit: 20, ...one.options });
  const raw = floor(c.raw, word, one) as { id: SqlValue }[];
  options.rows.push(options.latencyRow({
    group,
    op: `${word} ${one.name}`,
    same: ours.map((h) => h.id).join() === raw.map((r) => Number(r.id)).join(),
    note: note(raw.length),
  }, {
    ours: () => c.db.searchMessages(word, { limit: 20, ...one.options }),
    raw: () => floor(c.raw, word, one),
    native: () => floor(c.native, word, one),
  }, options.iterations));
}

/**
 * Times each word with each narrow filter, ours against the raw floor, and
 * adds a row per case to `rows`.
 *
 * @param c The library and the raw connections, on the corpus file.
 * @param options How many iterations, how a row is timed, where rows go.
 */
export function narrowFilterPhase(c: NarrowContestants, options: PhaseOptions): void {
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
        timeSearch(
          c,
          options,
          "search, narrow filter",
          word,
          one,
          (hits) =>
            one.name.startsWith("--source")
              ? `${(share * 100).toFixed(2)}% of the messages; ${hits} hits`
              : `${hits} hits`,
        );
      }
    }
  } finally {
    narrowed.forEach((id, i) => relabel(id, was[i]));
  }
  widePhase(c, options);
}

/** The corpus's sources near a twentieth and near a third of the sessions (`corpus.ts`). */
const WIDE_SOURCES = [["whatsapp"], ["telegram", "discord"]];

/**
 * The wide filters, over the corpus's own sources: a source of about 5% (also
 * at a deep page) and about 30% of the sessions, one role, the second half
 * of the file's time.
 */
function wideCases(conn: RawConnection): NarrowCase[] {
  const sessions = Number(one(conn, "SELECT count(*) AS n FROM sessions").n);
  const span = one(conn, "SELECT min(timestamp) AS lo, max(timestamp) AS hi FROM messages");
  const half = Math.floor((Number(span.lo) + Number(span.hi)) / 2);
  const bySource: NarrowCase[] = WIDE_SOURCES.map((sources) => {
    const list = JSON.stringify(sources);
    const share = Number(
      one(
        conn,
        "SELECT count(*) AS n FROM sessions WHERE source IN (SELECT value FROM json_each(?))",
        list,
      ).n,
    ) / sessions;
    return {
      name: `--source ${sources.join(",")} (${(share * 100).toFixed(0)}% of sessions)`,
      options: { sourceFilter: sources },
      sql: " AND s.source IN (SELECT value FROM json_each(?))",
      params: [list],
    };
  });
  // A deep page: its count-first walk (ranked.ts) reads matches in id order up to the offset's.
  const [fivePercent] = bySource;
  return [
    ...bySource,
    {
      ...fivePercent,
      name: `${fivePercent.name} --offset 1000`,
      options: { ...fivePercent.options, offset: 1000 },
    },
    {
      name: "--role user",
      options: { roleFilter: ["user"] },
      sql: " AND m.role IN (SELECT value FROM json_each(?))",
      params: [JSON.stringify(["user"])],
    },
    {
      name: "--since (half the file)",
      options: { since: half },
      sql: " AND m.timestamp >= ?",
      params: [half],
    },
  ];
}

/** Each word with each wide filter, ours against the raw floor in the same run. */
function widePhase(c: NarrowContestants, options: PhaseOptions): void {
  const all = wideCases(c.raw);
  const deep = (one: NarrowCase) => one.options.offset !== undefined;
  // The deep pages last: after them, some connections (the library's or a plain one) stay ~3×
  // slower at ranking until their page cache is freed (`PRAGMA shrink_memory`), helper-141.
  const runs = [false, true].flatMap((last) =>
    WORDS.flatMap((word) => all.filter((one) => deep(one) === last).map((one) => ({ word, one })))
  );
  for (const { word, one } of runs) timeSearch(c, options, "search, wide filter", word, one);
}
