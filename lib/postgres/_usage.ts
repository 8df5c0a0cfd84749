/**
 * The usage statistics of the PostgreSQL engine: by model, by source, the
 * sessions that used the most tokens, and the usage report, each one
 * statement (the report two) through the store's query.
 *
 * @module
 */
import { checkOptionalText } from "../core/session_options.ts";
import { checkCount } from "../core/paging.ts";
import type { SourceUsage, UsageGrouping, UsageReportOptions, UsageRow } from "../core/usage.ts";
import {
  checkUsageOptions,
  COST_COLUMNS,
  localTimeSql,
  startRangeSql,
  TOKEN_TOTALS,
  toSourceUsage,
  toUsageRow,
  USAGE_OPTION_NAMES,
} from "../core/usage.ts";
import type { ModelUsage, SessionTokens } from "../core/types.ts";
import { MODEL_USAGE_COLUMNS, type SessionModelUsage } from "../core/session_model_usage.ts";
import {
  MODEL_USAGE_TABLE,
  modelUsagePartsSql,
  sessionsWithModelUsageSql,
  type UsageDialect,
} from "../core/usage_by_model.ts";
import type { PgQuery, PgValue } from "./_client_types.ts";
import { jsonParam } from "./_text_codec.ts";
import { type OriginFilter, withOrigin } from "./_session_filters.ts";

/** The options of a usage report here, checked by name: every engine's and `origin`. */
const USAGE_OPTIONS_HERE = withOrigin(USAGE_OPTION_NAMES);

/** The summed columns of a usage row, and their aggregates (a cost sum stays NULL without values). */
const USAGE_NAMES = [...TOKEN_TOTALS.map((t) => t.column), ...COST_COLUMNS].join(", ");
const USAGE_SUMS = TOKEN_TOTALS.map(({ column }) => `COALESCE(SUM(${column}), 0) AS ${column}`)
  .concat(COST_COLUMNS.map((column) => `SUM(${column}) AS ${column}`)).join(", ");
/** The token totals of one source. */
const SOURCE_TOTALS = TOKEN_TOTALS.map((t) => `COALESCE(SUM(s.${t.column}), 0) AS ${t.total}`)
  .join(", ");

/** Milliseconds from the start of the Julian day number to the Unix epoch, as SQLite counts. */
const JULIAN_EPOCH_MS = "210866760000000.0";

/**
 * The UTC timestamp of `time` (seconds since the epoch), rounded to the
 * millisecond as SQLite's `'unixepoch'` rounds it, in the same float
 * operations (milliseconds from the Julian epoch, half up): a session
 * started at 23:59:59.9996 counts on the next day there, and so here
 * (`to_timestamp` keeps microseconds: it counted on the day before).
 */
function utcInstant(time: string): string {
  return `to_timestamp((floor(${time} * 1000.0 + ${JULIAN_EPOCH_MS} + 0.5) - ${JULIAN_EPOCH_MS})` +
    ` / 1000.0) AT TIME ZONE 'UTC'`;
}

/**
 * The group key of each usage grouping, a closed set: days, weeks from Monday and months of
 * `time`, which is `started_at` shifted into the report's time zone.
 */
const USAGE_KEYS: Readonly<Record<UsageGrouping, (time: string) => string>> = {
  day: (time) => `to_char(${utcInstant(time)}, 'YYYY-MM-DD')`,
  week: (time) => `to_char(date_trunc('week', ${utcInstant(time)}), 'YYYY-MM-DD')`,
  month: (time) => `to_char(${utcInstant(time)}, 'YYYY-MM')`,
  model: () => "model",
  source: () => "source",
  origin: () => "(SELECT so.origin FROM sync_sessions so WHERE so.session_id = sessions.id)",
};

/** The order of usage rows, as the SQLite engine gives it (a missing model first among ties). */
const USAGE_BY_COST =
  `COALESCE(estimated_cost_usd, 0) DESC, input_tokens + output_tokens DESC, key COLLATE "C" NULLS FIRST`;
const USAGE_ORDER: Readonly<Record<UsageGrouping, string>> = {
  day: "key",
  week: "key",
  month: "key",
  model: USAGE_BY_COST,
  source: USAGE_BY_COST,
  origin: USAGE_BY_COST,
};

/** The SQL of a report over per-model usage rows here. */
const PG_USAGE: UsageDialect = {
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  sum: (column) => `SUM(${column})`,
};

/**
 * Sessions, tokens and cost by model (`usageByModel`), the costliest first.
 *
 * @param query The store's query.
 * @returns One row per model.
 */
export async function usageByModelPg(query: PgQuery): Promise<ModelUsage[]> {
  return await query(
    `SELECT model, COUNT(*) AS session_count, SUM(input_tokens) AS total_input,
         SUM(output_tokens) AS total_output, SUM(estimated_cost_usd) AS total_cost
       FROM sessions WHERE model IS NOT NULL
       GROUP BY model
       ORDER BY total_cost DESC NULLS LAST, model COLLATE "C"`,
  ) as unknown as ModelUsage[];
}

/**
 * The sessions that used the most tokens (`topSessionsByTokens`).
 *
 * @param query The store's query.
 * @param limit How many (checked).
 * @returns The rows, the most first.
 */
export async function topSessionsByTokensPg(
  query: PgQuery,
  limit: number,
): Promise<SessionTokens[]> {
  checkCount("rank sessions", "limit", limit);
  return await query(
    `SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
       FROM sessions ORDER BY total_tokens DESC NULLS LAST, id COLLATE "C" LIMIT $1`,
    [limit],
  ) as unknown as SessionTokens[];
}

/**
 * Sessions, messages, tokens and cost by source (`usageBySource`).
 *
 * @param query The store's query.
 * @returns One row per source, the most sessions first.
 */
export async function usageBySourcePg(query: PgQuery): Promise<SourceUsage[]> {
  const rows = await query(
    `SELECT s.source AS source, COUNT(*) AS session_count,
         COALESCE(SUM(m.n), 0) AS message_count, ${SOURCE_TOTALS},
         SUM(s.estimated_cost_usd) AS estimated_cost,
         SUM(s.actual_cost_usd) AS actual_cost
       FROM sessions s
       LEFT JOIN (SELECT session_id, COUNT(*) AS n FROM messages GROUP BY session_id) m
         ON m.session_id = s.id
       GROUP BY s.source
       ORDER BY session_count DESC, s.source COLLATE "C"`,
  );
  return rows.map(toSourceUsage);
}

/**
 * The usage report (`usageReport`): sessions, tokens and cost grouped by
 * day, week, month, model, source or origin.
 *
 * @param query The store's query.
 * @param options The grouping, range, source, origin and time zone (checked).
 * @returns One row per group, in the grouping's order.
 */
export async function usageReportPg(
  query: PgQuery,
  options: UsageReportOptions & OriginFilter,
): Promise<UsageRow[]> {
  options ??= {};
  const checked = checkUsageOptions(options, USAGE_OPTIONS_HERE);
  checkOptionalText("report usage", "origin", options.origin);
  const { by, since, until, source, timeZone } = checked;
  const clauses: string[] = [];
  const params: PgValue[] = [];
  if (since !== null) {
    params.push(since);
    clauses.push(`started_at >= $${params.length}`);
  }
  if (until !== null) {
    params.push(until);
    clauses.push(`started_at < $${params.length}`);
  }
  if (source !== null) {
    params.push(source);
    clauses.push(`source = $${params.length}`);
  }
  if (options.origin) {
    params.push(options.origin);
    clauses.push(
      `id IN (SELECT so.session_id FROM sync_sessions so WHERE so.origin = $${params.length})`,
    );
  }
  const where = clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`;
  let time = "started_at";
  const rangeSql = startRangeSql(checked, where);
  if (rangeSql !== undefined) {
    // Two statements, not one snapshot: as on a file (lib/sqlite/usage_report.ts).
    const [range] = await query(rangeSql, params);
    time = localTimeSql(timeZone, range?.first, range?.last, (seconds) => {
      params.push(seconds);
      return `$${params.length}::bigint`;
    });
  }
  if (!await hasModelUsage(query)) {
    const rows = await query(
      `SELECT key, sessions, ${USAGE_NAMES}
         FROM (
           SELECT ${USAGE_KEYS[by](time)} AS key, COUNT(*) AS sessions, ${USAGE_SUMS}
           FROM sessions ${where}
           GROUP BY 1
         ) AS grouped
         ORDER BY ${USAGE_ORDER[by]}`,
      params,
    );
    return rows.map(toUsageRow);
  }
  // Per-model usage rows (`sync` carries a newer Hermes's): read as a file's are. The parts
  // are named `sessions`, as the keys name them.
  const parts = by === "model"
    ? modelUsagePartsSql("chosen", PG_USAGE)
    : sessionsWithModelUsageSql("chosen", PG_USAGE);
  const rows = await query(
    `WITH chosen AS (SELECT * FROM sessions ${where})
     SELECT key, sessions, ${USAGE_NAMES}
       FROM (
         SELECT ${USAGE_KEYS[by](time)} AS key, COUNT(DISTINCT id) AS sessions, ${USAGE_SUMS}
         FROM ${parts} AS sessions
         GROUP BY 1
       ) AS grouped
       ORDER BY ${USAGE_ORDER[by]}`,
    params,
  );
  return rows.map(toUsageRow);
}

/**
 * Whether the store holds per-model usage rows: in the table `sync` makes
 * (an older version's schema, opened read-only, may lack it).
 *
 * @param query The store's query.
 * @returns `true` when the table has a row.
 */
export async function hasModelUsage(query: PgQuery): Promise<boolean> {
  if (!await hasModelUsageTable(query)) return false;
  const [{ any }] = await query(`SELECT EXISTS (SELECT 1 FROM ${MODEL_USAGE_TABLE}) AS any`);
  return Boolean(any);
}

/**
 * A session's per-model usage rows (`getModelUsage`), in key order (the
 * bytes of each key, as SQLite orders text): `[]` in a store without the
 * table.
 *
 * @param query The store's query.
 * @param id The session.
 * @returns Its rows.
 */
export async function modelUsageOfPg(query: PgQuery, id: string): Promise<SessionModelUsage[]> {
  return (await modelUsageBySessionPg(query, [id])).get(id) ?? [];
}

/**
 * The per-model usage rows of several sessions (as {@linkcode modelUsageOfPg}
 * reads one's), in one statement: what an export reads for a page of them.
 *
 * @param query The store's query.
 * @param ids The sessions.
 * @returns Each session's rows, in key order; a session without rows is not in it.
 */
export async function modelUsageBySessionPg(
  query: PgQuery,
  ids: readonly string[],
): Promise<Map<string, SessionModelUsage[]>> {
  if (ids.length === 0 || !await hasModelUsageTable(query)) return new Map();
  return await readModelUsagePg(query, ids);
}

/**
 * {@linkcode modelUsageBySessionPg} on a store known to have the table
 * ({@linkcode hasModelUsageTable} asked once, by a caller that reads many).
 *
 * @param query The store's query.
 * @param ids The sessions.
 * @returns Each session's rows, in key order; a session without rows is not in it.
 */
export async function readModelUsagePg(
  query: PgQuery,
  ids: readonly string[],
): Promise<Map<string, SessionModelUsage[]>> {
  const bySession = new Map<string, SessionModelUsage[]>();
  const keys = MODEL_USAGE_COLUMNS.filter((c) => c.kind === "key").map((c) =>
    `${c.name} COLLATE "C"`
  );
  // Counts as double precision: a number, exact to 2^53 (bigint comes back as its digits).
  const columns = MODEL_USAGE_COLUMNS.map(({ name, kind }) =>
    kind === "count" ? `${name}::double precision AS ${name}` : name
  );
  const rows = await query(
    `SELECT session_id AS hermes_session_id, ${columns.join(", ")} FROM ${MODEL_USAGE_TABLE}
     WHERE session_id IN (SELECT json_array_elements_text($1::text::json))
     ORDER BY ${keys.join(", ")}`,
    [jsonParam(ids)],
  );
  for (const { hermes_session_id: id, ...row } of rows) {
    const list = bySession.get(String(id)) ?? [];
    list.push(row as unknown as SessionModelUsage);
    bySession.set(String(id), list);
  }
  return bySession;
}

/**
 * Whether the store has the per-model usage table (`sync`, `migrate` and an
 * import with rows make it; an older version's schema lacks it).
 *
 * @param query The store's query.
 * @returns `true` when it has.
 */
export async function hasModelUsageTable(query: PgQuery): Promise<boolean> {
  const [{ present }] = await query(
    `SELECT to_regclass('${MODEL_USAGE_TABLE}') IS NOT NULL AS present`,
  );
  return Boolean(present);
}
