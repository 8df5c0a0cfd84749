/**
 * `hermes-state list`: sessions with title, preview, last activity, source
 * and id, in columns sized to their content and fitted to the terminal.
 *
 * @module
 */
import type { RichSessionRow } from "../../core/types.ts";
import type { Command, Context } from "../command.ts";
import { originOption } from "../origin.ts";
import { formatCount, oneLine, plural, relativeTime } from "../../render/format.ts";
import { timeOption } from "../time_option.ts";
import { printJson } from "../json.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";
import { choiceOption, integerOption, type ParsedArgs } from "../parse.ts";
import { displayWidth, fitToWidth } from "../../render/width.ts";

const USAGE = `Usage: hermes-state list [options]

List sessions, newest first: title, preview (the first user message), last
activity, source and id, fitted to the terminal's width (COLUMNS, else the
terminal, else 100 columns), with a count at the end ("20 of 35
sessions"). A compression chain shows as one row, its live tip. Child
sessions (delegates, compression continuations) are hidden unless --all.
Sessions of the "tool" source are hidden unless --source is given, as in
"hermes sessions list".

Options:
  --source SOURCE   Only sessions of this source (cli, telegram, discord, tool,
                    ...)
  --since TIME      Only sessions started at or after TIME: a date
                    (2026-04-20), a date and time (2026-04-20 09:30), an
                    age (30m, 12h, 7d, 2w, 6mo, 1y) or Unix seconds
  --until TIME      Only sessions started before TIME
  --origin NAME     Only sessions synced from this origin (a PostgreSQL store;
                    see sync)
  --limit N         Show at most N sessions (default 20)
  --offset N        Skip the first N sessions (default 0)
  --all             Include child sessions, and the sessions a newer Hermes
                    archived (marked [archived])
  --order ORDER     "started" (default) or "last-active"
  --json            Print the rows as a JSON array
  --db PATH         The database file, or a postgres:// URL
  -h, --help        Show this help

Examples:
  hermes-state list
  hermes-state list --source telegram --limit 5
  hermes-state list --since 7d --order last-active --json
`;

/** Columns when neither COLUMNS nor a terminal says. */
const DEFAULT_WIDTH = 100;
/** Columns between two cells. */
const GAP = 2;
/** The widest a title or a source gets. */
const TITLE_MAX = 30;
const SOURCE_MAX = 12;
/** The narrowest a preview gets before the row is let overflow. */
const PREVIEW_MIN = 12;

/** The width to fit: `COLUMNS` when it is a number, else the terminal's, else 100. */
function outputWidth(ctx: Pick<Context, "io">): number {
  const fromEnv = Number(ctx.io.env("COLUMNS"));
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  const tty = ctx.io.columns;
  return tty !== undefined && tty > 0 ? tty : DEFAULT_WIDTH;
}

/** A cell's text and the columns it takes, measured once. */
interface Cell {
  text: string;
  columns: number;
}

function cell(text: string): Cell {
  return { text, columns: displayWidth(text) };
}

function widest(cells: readonly Cell[], floor: number): number {
  return cells.reduce((w, c) => Math.max(w, c.columns), floor);
}

/** A cell padded, or cut and padded, to `width` columns; one that fits is not measured again. */
function fit(c: Cell, width: number): string {
  return c.columns <= width ? c.text + " ".repeat(width - c.columns) : fitToWidth(c.text, width);
}

function renderRows(ctx: Context, sessions: readonly RichSessionRow[]): string {
  const { style } = ctx;
  const now = ctx.io.now();
  const titled = sessions.some((s) => s.title);
  // One line each: a newline or a tab another writer stored (import keeps titles as given)
  // broke the row, and a tab took columns the width count gave it none of.
  const rows = sessions.map((s) => ({
    title: cell(visibleControls(oneLine(s.title ?? "") || "—")),
    preview: cell(visibleControls(oneLine(s.preview ?? ""))),
    active: cell(relativeTime(s.last_active ?? s.started_at, now)),
    source: cell(visibleInline(s.source)),
    id: cell(visibleInline(s.id)),
  }));
  const idWidth = widest(rows.map((r) => r.id), 2);
  const activeWidth = widest(rows.map((r) => r.active), "Last Active".length);
  const sourceWidth = Math.min(SOURCE_MAX, widest(rows.map((r) => r.source), "Source".length));
  const fixed = idWidth + activeWidth + sourceWidth + GAP * (titled ? 4 : 3);
  const room = outputWidth(ctx) - fixed;
  const previewWanted = widest(rows.map((r) => r.preview), "Preview".length);
  let titleWidth = titled
    ? Math.min(TITLE_MAX, widest(rows.map((r) => r.title), "Title".length))
    : 0;
  if (titled && room - titleWidth < PREVIEW_MIN) {
    titleWidth = Math.max("Title".length, room - PREVIEW_MIN);
  }
  const previewWidth = Math.max(PREVIEW_MIN, Math.min(previewWanted, room - titleWidth));
  const cells = (title: Cell, preview: Cell, active: Cell, source: Cell) => {
    const parts = titled ? [fit(title, titleWidth)] : [];
    parts.push(fit(preview, previewWidth), fit(active, activeWidth), fit(source, sourceWidth));
    return parts.join(" ".repeat(GAP));
  };
  const names = ["Title", "Preview", "Last Active", "Source"].map(cell);
  const header = `${cells(names[0], names[1], names[2], names[3])}${" ".repeat(GAP)}ID`;
  const total = displayWidth(header.trimEnd()) + idWidth - 2;
  const lines = [style.bold(header), style.dim("─".repeat(total))];
  for (const r of rows) {
    lines.push(
      `${cells(r.title, r.preview, r.active, r.source)}${" ".repeat(GAP)}${style.cyan(r.id.text)}`,
    );
  }
  return lines.map((line) => line.trimEnd()).join("\n") + "\n";
}

/** The count under the rows: `3 sessions`, `20 of 35 sessions`, `21–40 of 95 sessions`. */
function footer(shown: number, offset: number, total: number): string {
  if (offset === 0 && shown === total) return plural(total, "session");
  const range = offset === 0
    ? formatCount(shown)
    : shown === 1
    ? formatCount(offset + 1)
    : `${formatCount(offset + 1)}–${formatCount(offset + shown)}`;
  return `${range} of ${plural(total, "session")}`;
}

/** The orders `--order` takes. */
const ORDERS = ["started", "last-active"] as const;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const limit = integerOption(args, "limit", { fallback: 20, min: 1, command: "list" });
  const offset = integerOption(args, "offset", { fallback: 0, command: "list" });
  const order = choiceOption(args, "order", {
    choices: ORDERS,
    fallback: "started",
    command: "list",
  });
  const now = ctx.io.now();
  const since = timeOption(args, "since", { now, command: "list" });
  const until = timeOption(args, "until", { now, command: "list" });
  const source = args.string("source") ?? null;
  const store = await ctx.openStore();
  const origin = await originOption(args, store);
  const filters = {
    ...(origin === undefined ? {} : { origin }),
    source,
    excludeSources: source ? null : ["tool"],
    includeChildren: args.flag("all"),
    includeArchived: args.flag("all"),
    startedAfter: since,
    startedBefore: until,
  };
  const sessions = await store.listSessionsRich({
    ...filters,
    limit,
    offset,
    orderByLastActive: order === "last-active",
  });
  if (ctx.json) {
    printJson(ctx.io, sessions);
    return 0;
  }
  const total = await store.listedSessionCount(filters);
  if (sessions.length === 0) {
    ctx.io.stdout(
      total === 0
        ? "No sessions found.\n"
        : `No sessions past the first ${plural(total, "session")}.\n`,
    );
    return 0;
  }
  ctx.io.stdout(renderRows(ctx, sessions.map(markArchived)));
  ctx.io.stdout(ctx.style.dim(`${footer(sessions.length, offset, total)}\n`));
  return 0;
}

/** A session a newer Hermes archived, marked in its title (`list --all` shows it). */
function markArchived(session: RichSessionRow): RichSessionRow {
  if (!session.archived) return session;
  return { ...session, title: `[archived] ${session.title ?? session.preview}`.trimEnd() };
}

/** The `list` command. */
export const listCommand: Command = {
  name: "list",
  summary: "List sessions, newest first",
  usage: USAGE,
  options: {
    source: { type: "string", names: "sources" },
    origin: { type: "string", names: "origins" },
    since: { type: "string" },
    until: { type: "string" },
    limit: { type: "string" },
    offset: { type: "string" },
    all: { type: "boolean" },
    order: { type: "string", choices: ORDERS },
  },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
