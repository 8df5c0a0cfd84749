/**
 * `hermes-state completions bash|zsh|fish`: a completion script for the
 * shell, written from the command table, so it completes every command and
 * option this version has: commands, their options and the words an option
 * takes, files where a command takes files, and the ids of the sessions
 * that start with what is typed where it takes a session (which the script
 * asks of `completions session-ids PREFIX` at each Tab).
 *
 * @module
 */
import type { Command, Context } from "../command.ts";
import { COMMAND_TABLE } from "../command_table.ts";
import type { ParsedArgs } from "../parse.ts";
import { UsageError } from "../usage_error.ts";
import { completionModel, type Shell, SHELLS } from "../completion/model.ts";
import { bashCompletion } from "../completion/bash.ts";
import { zshCompletion } from "../completion/zsh.ts";
import { fishCompletion } from "../completion/fish.ts";
import { quotedValue } from "../../core/shown_value.ts";

/** The most ids `session-ids` prints: more than a shell shows usefully. */
const ID_LIMIT = 200;

const USAGE = `Usage: hermes-state completions bash|zsh|fish
       hermes-state completions session-ids [PREFIX]

Print a completion script for the shell: Tab then completes commands, their
options and the words an option takes (usage --by, export --format, …), files
where a command takes files, and session ids where it takes a session: those
of every session (children, tool sessions, old ones) that start with what is
typed, of the --db given, else the default store.

"session-ids" prints those ids, one a line, the newest-started first, at most
${ID_LIMIT} (what the scripts ask at each Tab; it never reads messages).

Examples:
  source <(hermes-state completions bash)          # bash, this shell only
  hermes-state completions bash \\
    > ~/.local/share/bash-completion/completions/hermes-state
  source <(hermes-state completions zsh)           # zsh, after compinit
  hermes-state completions zsh > "\${fpath[1]}/_hermes-state"
  hermes-state completions fish > ~/.config/fish/completions/hermes-state.fish
`;

const WRITERS: Readonly<Record<Shell, typeof bashCompletion>> = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
};

/**
 * `completions session-ids PREFIX`: the ids of the sessions that start with
 * `PREFIX`, one a line, newest-started first, at most {@linkcode ID_LIMIT}.
 */
async function printSessionIds(prefix: string, ctx: Context): Promise<number> {
  const store = await ctx.openStore({ access: "read" });
  const { ids } = await store.sessionIdsWithPrefix(prefix, { limit: ID_LIMIT });
  // One a line: an id holding a line break could not be offered whole anyway.
  const lines = ids.filter((id) => !/[\r\n]/.test(id));
  ctx.io.stdout(lines.map((id) => `${id}\n`).join(""));
  return 0;
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const shell = args.positionals[0];
  if (shell === "session-ids") return await printSessionIds(args.positionals[1] ?? "", ctx);
  if (args.positionals.length > 1) {
    throw new UsageError(`unexpected argument ${quotedValue(args.positionals[1])}`, {
      command: "completions",
    });
  }
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(
      `the shell must be one of ${SHELLS.join(", ")}, got ${quotedValue(shell)}`,
      { command: "completions" },
    );
  }
  const commands = await Promise.all(COMMAND_TABLE.map((entry) => entry.load()));
  ctx.io.stdout(WRITERS[shell as Shell](completionModel(commands)));
  return 0;
}

/** The `completions` command. */
export const completionsCommand: Command = {
  name: "completions",
  summary: "Print a completion script for bash, zsh or fish",
  usage: USAGE,
  options: {},
  minPositionals: 1,
  maxPositionals: 2,
  positionalNames: "SHELL",
  run,
};
