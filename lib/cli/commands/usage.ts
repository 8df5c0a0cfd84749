/**
 * `hermes-state usage`: tokens and cost per day, week, month, model or
 * source over a period, as a table, JSON or CSV (the query the web page's
 * Usage view charts).
 *
 * @module
 */
import { isTimeGrouping, parseSince, USAGE_GROUPINGS, type UsageRow } from "../../core/usage.ts";
import { checkTimeZone, localTimeZone } from "../../core/time_zone.ts";
import type { Command, Context } from "../command.ts";
import { alignColumns, formatCost, formatCount, oneLine } from "../../render/format.ts";
import { printJson } from "../json.ts";
import { choiceOption, type ParsedArgs } from "../parse.ts";
import { visibleControls } from "../../render/transcript.ts";
import { originOption, requireOrigins } from "../origin.ts";
import { UsageError } from "../usage_error.ts";
import { quotedValue } from "../../core/shown_value.ts";
import { truncate } from "../../render/width.ts";

const USAGE = `Usage: hermes-state usage [options]

Show tokens and cost per day, week, month, model, source or origin for a
period. A session counts on the day it started (in the local time zone, or
--tz), with all its tokens; weeks start on Monday. Origins (the files
"hermes-state sync" ships) are recorded only on a PostgreSQL store.

Options:
  --by GROUP       day (default), week, month, model, source or origin
  --since PERIOD   30d (default), 12h, 2w, 6mo, 1y, a date like 2026-04-01, an
                   ISO date and time, Unix seconds, or "all"
  --until TIME     Only sessions started before TIME: an age, a date or Unix
                   seconds
  --tz ZONE        Days of this time zone: UTC, Asia/Shanghai… (default: the
                   local one)
  --source SOURCE  Only sessions of this source
  --origin NAME    Only sessions synced from this origin (a PostgreSQL store)
  --csv            Print CSV (a header line, then one line per group)
  --json           Print {by, since, until, source, time_zone, rows} as JSON
  --db PATH        The database file, or a postgres:// URL
  -h, --help       Show this help

Examples:
  hermes-state usage
  hermes-state usage --by model --since 90d
  hermes-state usage --by week --since all --csv > usage.csv
  hermes-state usage --tz UTC --since 2026-04-01
  hermes-state usage --by model --since 2026-04-01 --until 2026-05-01
  hermes-state --db "$URL" usage --by origin --since 7d
`;

const COLUMNS = [
  "sessions",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "estimated_cost_usd",
  "actual_cost_usd",
] as const;

/** One CSV field, quoted when it holds a comma, a quote or a line break. */
function csvField(value: string | number | null): string {
  if (value === null) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function total(rows: readonly UsageRow[], key: (typeof COLUMNS)[number]): number | null {
  const values = rows.map((r) => r[key]).filter((v): v is number => v !== null);
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
}

/** A `--since` or `--until` value in Unix seconds: an age before now, a date in the zone, or seconds. */
function period(
  name: "since" | "until",
  text: string,
  ctx: Context,
  timeZone: string,
): number {
  try {
    return parseSince(text, ctx.io.now(), timeZone);
  } catch {
    throw new UsageError(
      `--${name} must be an age (30d, 12h, 2w, 6mo, 1y), a date like 2026-04-01, ${
        name === "since" ? 'Unix seconds or "all"' : "or Unix seconds"
      }, got ${quotedValue(text)}`,
      { command: "usage" },
    );
  }
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const by = choiceOption(args, "by", {
    choices: USAGE_GROUPINGS,
    fallback: "day",
    command: "usage",
  });
  let timeZone = ctx.io.timeZone ?? localTimeZone();
  const tz = args.string("tz");
  if (tz !== undefined) {
    try {
      timeZone = checkTimeZone("report usage", tz);
    } catch {
      throw new UsageError(
        `--tz must be a time zone like UTC, Asia/Shanghai, America/New_York or +05:30, got ${
          quotedValue(tz)
        }`,
        { command: "usage" },
      );
    }
  }
  const sinceText = args.string("since") ?? "30d";
  const since = sinceText === "all" ? null : period("since", sinceText, ctx, timeZone);
  const untilText = args.string("until");
  const until = untilText === undefined ? null : period("until", untilText, ctx, timeZone);
  if (args.flag("csv") && ctx.json) {
    throw new UsageError("give either --csv or --json, not both", { command: "usage" });
  }
  const source = args.string("source") || null;
  const store = await ctx.openStore();
  const origin = await originOption(args, store);
  if (by === "origin") requireOrigins(store, "--by origin");
  const chosen = { since, until, source, timeZone, ...(origin === undefined ? {} : { origin }) };
  const rows = await store.usageReport({ by, ...chosen });
  if (ctx.json) {
    const only = origin === undefined ? {} : { origin };
    printJson(ctx.io, { by, since, until, source, time_zone: timeZone, ...only, rows });
    return 0;
  }
  if (args.flag("csv")) {
    const lines = [[by, ...COLUMNS].join(",")];
    for (const row of rows) {
      lines.push([row.key, ...COLUMNS.map((c) => row[c])].map(csvField).join(","));
    }
    ctx.io.stdout(lines.join("\n") + "\n");
    return 0;
  }
  if (rows.length === 0) {
    const period = sinceText.trim();
    const when = since === null
      ? untilText === undefined ? "yet" : ""
      : /^\d+[a-z]+$/i.test(period)
      ? `in the last ${period}`
      : `since ${/^\d+(?:\.\d+)?$/.test(period) ? new Date(since * 1000).toISOString() : period}`;
    const before = untilText === undefined ? "" : ` before ${untilText.trim()}`;
    const wider = since === null ? "" : " (--since all for any age)";
    ctx.io.stdout(`${`No sessions started ${when}`.trimEnd()}${before}${wider}.\n`);
    return 0;
  }
  const { style } = ctx;
  // The key of sessions without a model, or (by origin) written to the store, not synced.
  const none = by === "origin" ? "(not synced)" : "(none)";
  const line = (key: string, r: Record<(typeof COLUMNS)[number], number | null>) => [
    key,
    formatCount(r.sessions ?? 0),
    formatCount(r.input_tokens ?? 0),
    formatCount(r.output_tokens ?? 0),
    formatCount(r.cache_read_tokens ?? 0),
    formatCount(r.reasoning_tokens ?? 0),
    formatCost(r.estimated_cost_usd),
  ];
  const totals = Object.fromEntries(COLUMNS.map((c) => [c, total(rows, c)])) as Record<
    (typeof COLUMNS)[number],
    number | null
  >;
  if (by === "model" && rows.length > 1) {
    // A session whose calls used several models counts under each: the total counts it once.
    totals.sessions = total(await store.usageReport({ by: "source", ...chosen }), "sessions");
  }
  const table = alignColumns([
    [
      isTimeGrouping(by) ? `${by} (${timeZone})` : by,
      "sessions",
      "input",
      "output",
      "cache read",
      "reasoning",
      "cost",
    ].map(style.dim),
    ...rows.map((r) => line(truncate(visibleControls(oneLine(r.key ?? none)), 40), r)),
    line(style.bold("total"), totals),
  ]);
  ctx.io.stdout(table.join("\n") + "\n");
  return 0;
}

/** The `usage` command. */
export const usageCommand: Command = {
  name: "usage",
  summary: "Tokens and cost per day, week, month, model, source or origin",
  usage: USAGE,
  options: {
    by: { type: "string", choices: USAGE_GROUPINGS },
    since: { type: "string" },
    until: { type: "string" },
    tz: { type: "string" },
    source: { type: "string", names: "sources" },
    origin: { type: "string", names: "origins" },
    csv: { type: "boolean" },
  },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
