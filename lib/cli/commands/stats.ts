/**
 * `hermes-state stats`: counts by source, model and origin, tokens and
 * cost, the sessions that used the most tokens, and file sizes.
 *
 * @module
 */
import type { Command, Context } from "../command.ts";
import { fileSizes, serverBytes, sizeText } from "../files.ts";
import { isPostgresTarget, sqlitePath } from "../../open_store.ts";
import { alignColumns, formatCost, formatCount, oneLine, tidyCost } from "../../render/format.ts";
import { printJson } from "../json.ts";
import { syncedStore } from "../../core/synced_store.ts";
import { integerOption, type ParsedArgs } from "../parse.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";
import { truncate } from "../../render/width.ts";

const USAGE = `Usage: hermes-state stats [options]

Show how much the database holds: sessions and messages by source, tokens
and cost by source and by model (and, on a PostgreSQL store that sync
fills, by origin), the sessions that used the most tokens, and the size of
the file with its write-ahead log (-wal) and shared-memory (-shm)
companions.

Options:
  --top N       How many of the biggest sessions to list (default 5)
  --json        Print everything as one JSON document
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state stats
  hermes-state stats --json | jq '.by_model'
`;

function sumCost(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : tidyCost(known.reduce((a, b) => a + b, 0));
}

/** A blank line, a bold title, and the rows aligned and indented by two spaces. */
function section(
  ctx: Context,
  title: string,
  rows: readonly (readonly string[])[],
  right: readonly number[],
): string[] {
  return ["", ctx.style.bold(title), ...alignColumns(rows, { right }).map((line) => `  ${line}`)];
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const top = integerOption(args, "top", { fallback: 5, command: "stats" });
  // Measured before opening, as info does: what is on disk, not the -wal and -shm this
  // read's own connection makes beside a file that has none (and removes when it closes).
  const files = isPostgresTarget(ctx.dbPath) ? null : fileSizes(sqlitePath(ctx.dbPath));
  const store = await ctx.openStore();
  const bySource = await store.usageBySource();
  const byModel = await store.usageByModel();
  const topSessions = top > 0 ? await store.topSessionsByTokens(top) : [];
  // A store that sync fills: each synced file's share too (a file, or a store that holds no
  // synced session, has none to show).
  const perOrigin = syncedStore(store) === undefined
    ? []
    : await store.usageReport({ by: "origin", since: null });
  const byOrigin = perOrigin.some((o) => o.key !== null) ? perOrigin : undefined;
  const sessions = bySource.reduce((n, s) => n + s.session_count, 0);
  const messages = await store.messageCount();
  const totals = {
    input_tokens: bySource.reduce((n, s) => n + s.total_input, 0),
    output_tokens: bySource.reduce((n, s) => n + s.total_output, 0),
    cache_read_tokens: bySource.reduce((n, s) => n + s.total_cache_read, 0),
    cache_write_tokens: bySource.reduce((n, s) => n + s.total_cache_write, 0),
    reasoning_tokens: bySource.reduce((n, s) => n + s.total_reasoning, 0),
    estimated_cost_usd: sumCost(bySource.map((s) => s.estimated_cost)),
    actual_cost_usd: sumCost(bySource.map((s) => s.actual_cost)),
  };
  const server = await serverBytes(store);
  if (ctx.json) {
    printJson(ctx.io, {
      path: store.target,
      sessions,
      messages,
      totals,
      files,
      bytes: server ?? files!.total,
      by_source: bySource.map((s) => ({
        ...s,
        estimated_cost: tidyCost(s.estimated_cost),
        actual_cost: tidyCost(s.actual_cost),
      })),
      by_model: byModel.map((m) => ({ ...m, total_cost: tidyCost(m.total_cost) })),
      ...(byOrigin === undefined ? {} : {
        by_origin: byOrigin.map((o) => ({
          ...o,
          estimated_cost_usd: tidyCost(o.estimated_cost_usd),
          actual_cost_usd: tidyCost(o.actual_cost_usd),
        })),
      }),
      top_sessions: topSessions.map((s) => ({
        ...s,
        estimated_cost_usd: tidyCost(s.estimated_cost_usd),
      })),
    });
    return 0;
  }
  const { style } = ctx;
  const out: string[] = [];
  out.push(`${style.bold("Total sessions:")} ${formatCount(sessions)}`);
  out.push(`${style.bold("Total messages:")} ${formatCount(messages)}`);
  out.push(
    `${style.bold("Tokens:")} ${formatCount(totals.input_tokens)} in · ${
      formatCount(totals.output_tokens)
    } out · ${formatCount(totals.cache_read_tokens)} cache read · ${
      formatCount(totals.cache_write_tokens)
    } cache write · ${formatCount(totals.reasoning_tokens)} reasoning`,
  );
  out.push(
    `${style.bold("Cost:")} ${formatCost(totals.estimated_cost_usd)} estimated · ${
      formatCost(totals.actual_cost_usd)
    } actual`,
  );
  out.push(`${style.bold("Database size:")} ${sizeText(files, server ?? 0)}`);
  if (bySource.length > 0) {
    out.push(...section(ctx, "By source", [
      ["source", "sessions", "messages", "input", "output", "est. cost"].map(style.dim),
      ...bySource.map((s) => [
        visibleInline(s.source),
        formatCount(s.session_count),
        formatCount(s.message_count),
        formatCount(s.total_input),
        formatCount(s.total_output),
        formatCost(s.estimated_cost),
      ]),
    ], [1, 2, 3, 4, 5]));
  }
  if (byModel.length > 0) {
    out.push(...section(ctx, "By model", [
      ["model", "sessions", "input", "output", "est. cost"].map(style.dim),
      ...byModel.map((m) => [
        visibleInline(m.model ?? "(none)"),
        formatCount(m.session_count),
        formatCount(m.total_input),
        formatCount(m.total_output),
        formatCost(m.total_cost),
      ]),
    ], [1, 2, 3, 4]));
  }
  if (byOrigin !== undefined) {
    out.push(...section(ctx, "By origin", [
      ["origin", "sessions", "input", "output", "est. cost"].map(style.dim),
      ...byOrigin.map((o) => [
        o.key ?? "(not synced)",
        formatCount(o.sessions),
        formatCount(o.input_tokens),
        formatCount(o.output_tokens),
        formatCost(o.estimated_cost_usd),
      ]),
    ], [1, 2, 3, 4]));
  }
  // Sessions that used no tokens are no one's top (a file whose gateway records none lists none).
  const spenders = topSessions.filter((s) => s.total_tokens > 0);
  if (spenders.length > 0) {
    out.push(...section(
      ctx,
      "Most tokens",
      spenders.map((s) => [
        visibleInline(s.id),
        formatCount(s.total_tokens),
        formatCost(s.estimated_cost_usd),
        truncate(visibleControls(oneLine(s.title ?? "")), 40),
      ]),
      [1, 2],
    ));
  }
  ctx.io.stdout(out.join("\n") + "\n");
  return 0;
}

/** The `stats` command. */
export const statsCommand: Command = {
  name: "stats",
  summary: "Counts, tokens and cost by source, model and origin; file sizes",
  usage: USAGE,
  options: { top: { type: "string" } },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
