/**
 * The records of the usage reports (`usageBySource`, `usageReport`), their
 * groupings, and reading a period start (`30d`, `2026-04-01`).
 *
 * @module
 */
import { checkSeconds } from "./paging.ts";
import { checkOptionalText } from "./session_options.ts";
import { checkTimeZone, offsetSpans, shiftedSql, zonedSeconds } from "./time_zone.ts";
import { quotedValue } from "./shown_value.ts";
import { blobAsText } from "./blob_text.ts";
import { checkOptionNames, type OptionNames } from "./option_names.ts";
/** One source's totals, as {@linkcode usageBySource} returns them. */
export interface SourceUsage {
  /** `cli`, `telegram`, `discord`, `tool`… */
  source: string;
  /** Sessions of that source. */
  session_count: number;
  /** Message rows of those sessions. */
  message_count: number;
  /** Sum of `input_tokens`. */
  total_input: number;
  /** Sum of `output_tokens`. */
  total_output: number;
  /** Sum of `cache_read_tokens`. */
  total_cache_read: number;
  /** Sum of `cache_write_tokens`. */
  total_cache_write: number;
  /** Sum of `reasoning_tokens`. */
  total_reasoning: number;
  /** Sum of `estimated_cost_usd`; `null` when none has one. */
  estimated_cost: number | null;
  /** Sum of `actual_cost_usd`; `null` when none has one. */
  actual_cost: number | null;
}

/**
 * How {@linkcode usageReport} groups sessions. `origin`, the file
 * `hermes-state sync` shipped a session from, is recorded only by a
 * PostgreSQL store; a SQLite store refuses it.
 */
export type UsageGrouping = "day" | "week" | "month" | "model" | "source" | "origin";

/**
 * Whether a grouping is by time (day, week, month), so by the report's time zone.
 *
 * @param by The grouping.
 * @returns `true` for `day`, `week` and `month`.
 */
export function isTimeGrouping(by: UsageGrouping): boolean {
  return by === "day" || by === "week" || by === "month";
}

/**
 * The statement that reads the first and the last start of the sessions a
 * report groups, whose time zone's offsets between them its keys need
 * ({@linkcode localTimeSql}); `undefined` when its keys need none (UTC, or a
 * grouping not by time), and `started_at` is read as it is.
 *
 * @param options The report's checked options.
 * @param where Its `WHERE` clause (`""` for none), whose parameters the statement takes.
 * @returns The SQL (columns `first`, `last`), or `undefined`.
 */
export function startRangeSql(options: CheckedUsageOptions, where: string): string | undefined {
  if (options.timeZone === "UTC" || !isTimeGrouping(options.by)) return undefined;
  return `SELECT MIN(started_at) AS first, MAX(started_at) AS last FROM sessions ${where}`;
}

/**
 * SQL for `started_at` in a zone's local time, for an engine's UTC date
 * functions: the zone's offsets between the first and the last start the
 * report reads, each number rendered by `value` (a bound parameter).
 *
 * @param timeZone A name {@linkcode checkTimeZone} accepted.
 * @param first The earliest `started_at` of the sessions read (any value an engine returns; none: now).
 * @param last The latest one.
 * @param value Binds a number and returns its placeholder (`?`, `$3::bigint`).
 * @returns `started_at`, `(started_at + ?)`, or a `CASE` over the zone's changes.
 */
export function localTimeSql(
  timeZone: string,
  first: unknown,
  last: unknown,
  value: (seconds: number) => string,
): string {
  const seconds = (found: unknown) => {
    const n = Number(found ?? NaN);
    return Number.isFinite(n) ? n : Date.now() / 1000;
  };
  return shiftedSql("started_at", offsetSpans(timeZone, seconds(first), seconds(last)), value);
}

/** Every grouping, in the order the CLI lists them. */
export const USAGE_GROUPINGS: readonly UsageGrouping[] = [
  "day",
  "week",
  "month",
  "model",
  "source",
  "origin",
];

/** The options of `usageReport`, checked by name. */
export const USAGE_OPTION_NAMES: OptionNames<UsageReportOptions> = {
  by: true,
  timeZone: true,
  since: true,
  until: true,
  source: true,
};

/** Options of {@linkcode usageReport}. */
export interface UsageReportOptions {
  /**
   * How rows are grouped. Days, weeks (starting on Monday) and months are
   * those of `timeZone`.
   * @default {"day"}
   */
  readonly by?: UsageGrouping;
  /**
   * The time zone whose days, weeks and months group the sessions: an IANA
   * name (`Asia/Shanghai`, `America/New_York`), `UTC`, or an offset (`+05:30`). Its changes of
   * offset (summer time) are followed, as the runtime's `Intl` knows them.
   * Changes before 1970 and after 2100 are not looked for: the nearest
   * offset holds there.
   * @default {"UTC"}
   */
  readonly timeZone?: string | null;
  /** Only sessions started at or after this time (Unix seconds). */
  readonly since?: number | null;
  /** Only sessions started before this time (Unix seconds). */
  readonly until?: number | null;
  /** Only sessions of this source. */
  readonly source?: string | null;
}

/** One group of {@linkcode usageReport}. */
export interface UsageRow {
  /** `2026-04-25` (day; a week by its Monday), `2026-04` (month), the model, the source, or the origin; `null` for sessions without a model, or not synced. */
  key: string | null;
  /** Sessions in the group. */
  sessions: number;
  /** Sum of `input_tokens`. */
  input_tokens: number;
  /** Sum of `output_tokens`. */
  output_tokens: number;
  /** Sum of `cache_read_tokens`. */
  cache_read_tokens: number;
  /** Sum of `cache_write_tokens`. */
  cache_write_tokens: number;
  /** Sum of `reasoning_tokens`. */
  reasoning_tokens: number;
  /** Sum of `estimated_cost_usd`; `null` when no session has one. */
  estimated_cost_usd: number | null;
  /** Sum of `actual_cost_usd`; `null` when no session has one. */
  actual_cost_usd: number | null;
}

/** Seconds of each unit of a relative period. */
const PERIOD_UNITS = {
  min: 60,
  h: 3600,
  d: 86400,
  w: 7 * 86400,
  m: 30 * 86400,
  mo: 30 * 86400,
  y: 365 * 86400,
} as const;

/**
 * Reads a period start: `30d`, `12h`, `2w`, `6mo` or `6m` (months of 30
 * days), `1y` (years of 365 days) or `90min` before `now`, or a date
 * (`2026-04-01`: its midnight in `timeZone`) or an ISO date and time (in
 * `timeZone`, or UTC when it ends in `Z`), or Unix seconds (nine or ten
 * digits). (`m` is a month here, as periods
 * of tokens and cost are counted in days; `6mo` means the same in every
 * command, where the `--since` of `list` and `search` reads `6m` as
 * minutes.)
 *
 * @param text The period as typed.
 * @param now The current time, Unix seconds.
 * @param timeZone The zone of a date or a date and time: a name {@linkcode checkTimeZone}
 *   accepts (default UTC).
 * @returns Unix seconds.
 * @throws {RangeError} When the text is neither, or the zone is not one.
 *
 * @example
 * ```ts
 * import { parseSince } from "./usage.ts";
 * console.assert(parseSince("1d", 86400 * 10) === 86400 * 9);
 * console.assert(parseSince("1970-01-02", 0) === 86400);
 * console.assert(parseSince("1970-01-02", 0, "Asia/Shanghai") === 86400 - 8 * 3600);
 * ```
 */
export function parseSince(text: string, now: number, timeZone = "UTC"): number {
  const zone = timeZone === "UTC" ? timeZone : checkTimeZone("read the period", timeZone);
  const relative = /^\s*(\d{1,6})\s*(min|mo|[hdwmy])\s*$/i.exec(text);
  if (relative !== null) {
    const unit = PERIOD_UNITS[relative[2].toLowerCase() as keyof typeof PERIOD_UNITS];
    return now - Number(relative[1]) * unit;
  }
  // Unix seconds, as `list --since` and the web API take them: nine or ten digits (1973 to
  // 2286; milliseconds, thirteen digits, are no seconds).
  if (/^\s*\d{9,10}(?:\.\d+)?\s*$/.test(text)) return Number(text);
  const written = /^(\d{4}-\d{2}-\d{2})(?:[T ]([\d:.]+)(Z?))?$/.exec(text.trim());
  if (written !== null) {
    const [, date, time = "00:00:00", utc] = written;
    const ms = Date.parse(`${date}T${time}Z`);
    // A day the month does not have (2026-02-30) is no date, not the 2nd of March.
    if (Number.isFinite(ms) && new Date(ms).toISOString().startsWith(date)) {
      return utc === "Z" ? ms / 1000 : zonedSeconds(zone, ms);
    }
  }
  throw new RangeError(
    `Cannot read the period: expected 30d, 12h, 2w, 6mo, 1y, a date like 2026-04-01 or Unix seconds: current value is ${
      quotedValue(text)
    }`,
  );
}

function toNumber(value: unknown): number {
  return value === null || value === undefined ? 0 : Number(value);
}

function toCost(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** {@linkcode UsageReportOptions} checked, with their defaults. */
export interface CheckedUsageOptions {
  /** The grouping. */
  readonly by: UsageGrouping;
  /** Period start, Unix seconds, or `null`. */
  readonly since: number | null;
  /** Period end (exclusive), Unix seconds, or `null`. */
  readonly until: number | null;
  /** The source, or `null` for all. */
  readonly source: string | null;
  /** The time zone of days, weeks and months, as `Intl` spells it. */
  readonly timeZone: string;
}

/** The `source` of a usage report: `null` (every source) when absent or empty, else a string. */
function checkedSource(source: unknown): string | null {
  checkOptionalText("report usage", "source", source);
  return (source as string | null | undefined) || null;
}

/**
 * Checks the options of a usage report (every engine calls this first).
 *
 * @param options As given.
 * @param names The options the engine takes: {@linkcode USAGE_OPTION_NAMES}, or more.
 * @returns The options with their defaults.
 * @throws {RangeError} When `by` is not a grouping, `since`/`until` is not a
 *   finite number, or `timeZone` is not a time zone.
 * @throws {TypeError} When `source` is neither absent, `null` nor a string, naming the value,
 *   or an option is not one of `names`, naming it.
 */
export function checkUsageOptions(
  options: UsageReportOptions = {},
  names: Readonly<Record<string, true>> = USAGE_OPTION_NAMES,
): CheckedUsageOptions {
  checkOptionNames("report usage", options, names);
  const by = options.by ?? "day";
  if (!USAGE_GROUPINGS.includes(by)) {
    throw new RangeError(
      `Cannot report usage: by must be one of ${USAGE_GROUPINGS.join(", ")}: current value is ${
        quotedValue(by)
      }`,
    );
  }
  return {
    by,
    since: checkSeconds("report usage", "since", options.since),
    until: checkSeconds("report usage", "until", options.until),
    source: checkedSource(options.source),
    timeZone: options.timeZone === undefined || options.timeZone === null
      ? "UTC"
      : checkTimeZone("report usage", options.timeZone),
  };
}

/**
 * One result row of an engine's usage query as a {@linkcode UsageRow}.
 *
 * @param row Columns `key, sessions, input_tokens, …, actual_cost_usd` (numbers or numeric text).
 * @returns The row.
 */
export function toUsageRow(row: Record<string, unknown>): UsageRow {
  return {
    // A BLOB model or source (Python's sqlite3 stores `bytes` so) is its UTF-8 text.
    key: row.key === null || row.key === undefined ? null : String(blobAsText(row.key)),
    sessions: toNumber(row.sessions),
    input_tokens: toNumber(row.input_tokens),
    output_tokens: toNumber(row.output_tokens),
    cache_read_tokens: toNumber(row.cache_read_tokens),
    cache_write_tokens: toNumber(row.cache_write_tokens),
    reasoning_tokens: toNumber(row.reasoning_tokens),
    estimated_cost_usd: toCost(row.estimated_cost_usd),
    actual_cost_usd: toCost(row.actual_cost_usd),
  };
}

/**
 * The token columns of `sessions` that usage sums, each with the name
 * `usageBySource` gives its total; the engines write their aggregates from
 * this list, so the two reports never miss a column.
 */
export const TOKEN_TOTALS: readonly { readonly column: string; readonly total: string }[] = [
  { column: "input_tokens", total: "total_input" },
  { column: "output_tokens", total: "total_output" },
  { column: "cache_read_tokens", total: "total_cache_read" },
  { column: "cache_write_tokens", total: "total_cache_write" },
  { column: "reasoning_tokens", total: "total_reasoning" },
];

/** The cost columns of `sessions` that usage sums (a sum stays NULL when no session has one). */
export const COST_COLUMNS: readonly string[] = ["estimated_cost_usd", "actual_cost_usd"];

/**
 * One row of the per-source query as a {@linkcode SourceUsage}: numbers
 * normalized, a cost without any value `null`.
 *
 * @param row The query's row (`source`, `session_count`, `message_count`,
 *   the `total_…` of {@linkcode TOKEN_TOTALS}, `estimated_cost`, `actual_cost`).
 * @returns The record.
 */
export function toSourceUsage(row: Record<string, unknown>): SourceUsage {
  return {
    source: String(blobAsText(row.source)),
    session_count: toNumber(row.session_count),
    message_count: toNumber(row.message_count),
    total_input: toNumber(row.total_input),
    total_output: toNumber(row.total_output),
    total_cache_read: toNumber(row.total_cache_read),
    total_cache_write: toNumber(row.total_cache_write),
    total_reasoning: toNumber(row.total_reasoning),
    estimated_cost: toCost(row.estimated_cost),
    actual_cost: toCost(row.actual_cost),
  };
}
