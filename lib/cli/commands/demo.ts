/**
 * `hermes-state demo`: builds a realistic demo database and shows what
 * `list` and `search` print on it, so a newcomer sees the tool work at once.
 *
 * @module
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openStore } from "../../open_store.ts";
import type { Command, Context } from "../command.ts";
import { createContext } from "../context.ts";
import { writeDemo } from "../demo_data.ts";
import { printJson } from "../json.ts";
import { parseCommand, type ParsedArgs } from "../parse.ts";
import { CommandError } from "../usage_error.ts";
import { checkFileArgument } from "../file_argument.ts";
import { printableArgument } from "../shown_argument.ts";
import { shellWord } from "../../core/shell_word.ts";
import { listCommand } from "./list.ts";
import { searchCommand } from "./search.ts";

const USAGE = `Usage: hermes-state demo [options] [PATH]

Build a demo database (a few days of sessions from the CLI, Telegram,
Discord, ACP, cron, the TUI and a tool; English, Chinese, Japanese and
Korean text; tool calls and their results; a compression chain, a branch
and a delegate; titles) at PATH, or in a new temporary folder, then show
what "list" and "search docker" print on it. PATH must not exist yet.
--db is ignored: the demo never touches your own database.

Options:
  --json        Print the path and counts as JSON instead
  -h, --help    Show this help

Examples:
  hermes-state demo
  hermes-state demo ./demo.db && hermes-state --db ./demo.db search 记忆
`;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const given = args.positionals[0];
  if (given !== undefined) {
    checkFileArgument(given, { command: "demo", name: "PATH", role: "output" });
  }
  const path = given === undefined
    ? join(mkdtempSync(join(tmpdir(), "hermes-state-demo-")), "state.db")
    : resolve(given);
  if (given !== undefined && existsSync(path)) {
    throw new CommandError(`${given} already exists: the demo writes a new file`);
  }
  const clock = { now: ctx.io.now() - 3 * 86400 };
  const store = await openStore(path, { clock: () => clock.now });
  let ids;
  try {
    ids = await writeDemo(store, clock);
  } finally {
    await store.close();
  }
  const shown = createContext(ctx.io, { dbPath: path, json: false });
  try {
    const reopened = await shown.ctx.openStore();
    if (ctx.json) {
      printJson(ctx.io, {
        path,
        sessions: await reopened.sessionCount(),
        messages: await reopened.messageCount(),
        ids,
      });
      return 0;
    }
    const { style, io } = ctx;
    io.stdout(`${style.bold("Demo database:")} ${printableArgument(path)}\n\n`);
    io.stdout(`${style.bold("$ hermes-state list")}\n`);
    await listCommand.run(parseCommand({ options: listCommand.options }, []), shown.ctx);
    io.stdout(`\n${style.bold("$ hermes-state search docker --limit 3")}\n`);
    await searchCommand.run(
      parseCommand({ options: searchCommand.options }, ["docker", "--limit", "3"]),
      shown.ctx,
    );
    // Quoted as a shell reads it back (a `'` in the path ended the quotes early), its control
    // characters as marks (a path holding `ESC [31m` coloured the rest of the line).
    const db = `--db ${printableArgument(shellWord(path))}`;
    io.stdout(`\n${style.bold("Try next:")}\n`);
    for (
      const line of [
        `hermes-state ${db} show ${ids.docker}`,
        `hermes-state ${db} search 记忆`,
        `hermes-state ${db} lineage ${ids.tip}`,
        `hermes-state ${db} list --all`,
        `hermes-state ${db} stats`,
      ]
    ) io.stdout(`  ${line}\n`);
    return 0;
  } finally {
    await shown.close();
  }
}

/** The `demo` command. */
export const demoCommand: Command = {
  name: "demo",
  summary: "Build a demo database and show what the tool does with it",
  usage: USAGE,
  options: {},
  minPositionals: 0,
  maxPositionals: 1,
  positionalNames: "PATH",
  run,
};
