/**
 * `hermes-state completions bash|zsh|fish`: a completion script for the
 * shell, written from the command table, so it completes every command and
 * option this version has: commands, their options and the words an option
 * takes, files where a command takes files, and the ids of the newest
 * sessions where it takes a session.
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

const USAGE = `Usage: hermes-state completions bash|zsh|fish

Print a completion script for the shell: Tab then completes commands, their
options and the words an option takes (usage --by, export --format, …), files
where a command takes files, and session ids (the 100 newest of the --db
given, else the default store) where it takes a session.

Examples:
  source <(hermes-state completions bash)          # bash, this shell only
  hermes-state completions bash > ~/.local/share/bash-completion/completions/hermes-state
  source <(hermes-state completions zsh)           # zsh, after compinit
  hermes-state completions zsh > "\${fpath[1]}/_hermes-state"
  hermes-state completions fish > ~/.config/fish/completions/hermes-state.fish
`;

const WRITERS: Readonly<Record<Shell, typeof bashCompletion>> = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
};

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const shell = args.positionals[0];
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(
      `the shell must be one of ${SHELLS.join(", ")}: current value is ${JSON.stringify(shell)}`,
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
  maxPositionals: 1,
  positionalNames: "SHELL",
  run,
};
