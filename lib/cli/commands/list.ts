/**
 * `hermes-state list`: sessions with title, preview, last activity and id,
 * laid out as `hermes sessions list` does.
 *
 * @module
 */
import type { RichSessionRow } from "../../types.ts";
import type { Command, Context } from "../command.ts";
import { padEnd, relativeTime, truncate } from "../format.ts";
import { printJson } from "../json.ts";
import { visibleControls } from "../transcript.ts";
import { choiceOption, integerOption, type ParsedArgs } from "../parse.ts";

const USAGE = `Usage: hermes-state list [options]

List sessions, newest first: title, preview (the first user message), last
activity and id. A compression chain shows as one row, its live tip. Child
sessions (delegates, compression continuations) are hidden unless --all.
Sessions of the "tool" source are hidden unless --source is given, as in
"hermes sessions list".

Options:
  --source SOURCE   Only sessions of this source (cli, telegram, discord, tool, ...)
  --limit N         Show at most N sessions (default 20)
  --offset N        Skip the first N sessions (default 0)
  --all             Include child sessions, and the sessions a newer Hermes
                    archived (marked [archived])
  --order ORDER     "started" (default) or "last-active"
  --json            Print the rows as a JSON array
  --db PATH         The database file
  -h, --help        Show this help

Examples:
  hermes-state list
  hermes-state list --source telegram --limit 5
  hermes-state list --order last-active --json
`;

function renderRows(ctx: Context, sessions: readonly RichSessionRow[]): string {
  const { style } = ctx;
  const now = ctx.io.now();
  const lines: string[] = [];
  const titled = sessions.some((s) => s.title);
  if (titled) {
    lines.push(
      style.bold(`${padEnd("Title", 32)} ${padEnd("Preview", 40)} ${padEnd("Last Active", 13)} ID`),
    );
    lines.push(style.dim("─".repeat(110)));
  } else {
    lines.push(
      style.bold(`${padEnd("Preview", 50)} ${padEnd("Last Active", 13)} ${padEnd("Src", 6)} ID`),
    );
    lines.push(style.dim("─".repeat(95)));
  }
  for (const s of sessions) {
    const active = padEnd(relativeTime(s.last_active ?? s.started_at, now), 13);
    const preview = visibleControls(s.preview ?? "");
    if (titled) {
      const title = truncate(visibleControls(s.title || "—"), 30);
      lines.push(
        `${padEnd(title, 32)} ${padEnd(truncate(preview, 38), 40)} ${active} ${style.cyan(s.id)}`,
      );
    } else {
      lines.push(
        `${padEnd(truncate(preview, 48), 50)} ${active} ${padEnd(s.source, 6)} ${style.cyan(s.id)}`,
      );
    }
  }
  return lines.map((line) => line.trimEnd()).join("\n") + "\n";
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const limit = integerOption(args, "limit", { fallback: 20, command: "list" });
  const offset = integerOption(args, "offset", { fallback: 0, command: "list" });
  const order = choiceOption(args, "order", {
    choices: ["started", "last-active"],
    fallback: "started",
    command: "list",
  });
  const source = args.string("source") || null;
  const store = await ctx.openStore();
  const sessions = await store.listSessionsRich({
    source,
    excludeSources: source ? null : ["tool"],
    limit,
    offset,
    includeChildren: args.flag("all"),
    includeArchived: args.flag("all"),
    orderByLastActive: order === "last-active",
  });
  if (ctx.json) printJson(ctx.io, sessions);
  else if (sessions.length === 0) ctx.io.stdout("No sessions found.\n");
  else ctx.io.stdout(renderRows(ctx, sessions.map(markArchived)));
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
    source: { type: "string" },
    limit: { type: "string" },
    offset: { type: "string" },
    all: { type: "boolean" },
    order: { type: "string" },
  },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
