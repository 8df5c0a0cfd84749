/**
 * `hermes-state completions bash`: a bash completion script, written from
 * the command table, so it completes every command and option this version
 * has: commands, their options, files where a command takes files, and the
 * ids of the newest sessions where it takes a session.
 *
 * @module
 */
import type { Command, Context } from "../command.ts";
import { COMMAND_TABLE } from "../command_table.ts";
import type { ParsedArgs } from "../parse.ts";
import { UsageError } from "../usage_error.ts";

const USAGE = `Usage: hermes-state completions bash

Print a bash completion script: Tab then completes commands, their options,
files where a command takes files, and session ids (the 100 newest of the
--db given, else the default store) where it takes a session.

Examples:
  source <(hermes-state completions bash)          # this shell only
  hermes-state completions bash > ~/.local/share/bash-completion/completions/hermes-state
  hermes-state completions bash | sudo tee /etc/bash_completion.d/hermes-state
`;

/** The options every command takes, besides its own. */
const GLOBAL_OPTIONS = ["--db", "--json", "--help"];

/** Commands whose arguments name a session. */
const SESSION_ARGUMENTS = new Set(["show", "delete", "lineage", "rename"]);

/** Commands whose arguments are files (or server URLs, typed out). */
const FILE_ARGUMENTS = new Set(["backup", "copy", "demo", "export", "import", "recover", "sync"]);

/** Commands whose argument is one of a few words. */
const WORD_ARGUMENTS: Readonly<Record<string, readonly string[]>> = { completions: ["bash"] };

/** A command's options as the shell writes them, and which of them take a value. */
function optionWords(command: Command): { all: string[]; valued: string[] } {
  const all = [...GLOBAL_OPTIONS];
  const valued = ["--db"];
  for (const [name, spec] of Object.entries(command.options)) {
    all.push(`--${name}`);
    // An inline value (`--follow=5`) is one word: the next one is not its value.
    if (spec.type === "string") valued.push(`--${name}`);
  }
  return { all, valued };
}

/**
 * The bash completion script for these commands.
 *
 * @param commands The commands, in the order the help lists them.
 * @returns The script: a function `_hermes_state` and its `complete` line.
 */
export function bashCompletion(commands: readonly Command[]): string {
  const names = commands.map((command) => command.name).join(" ");
  const cases = commands.map((command) => {
    const { all, valued } = optionWords(command);
    const words = WORD_ARGUMENTS[command.name] ?? [];
    const argument = SESSION_ARGUMENTS.has(command.name)
      ? "sessions"
      : FILE_ARGUMENTS.has(command.name)
      ? "files"
      : words.length > 0
      ? "words"
      : "none";
    return `    ${command.name}) opts="${all.join(" ")}" valued="${valued.join(" ")}" ` +
      `argument=${argument} words="${words.join(" ")}" ;;`;
  });
  return `# bash completion for hermes-state (hermes-state completions bash)
_hermes_state() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD - 1]}
  local word command="" db=() i opts valued argument words
  # The command is the first word that is neither an option nor --db's value
  # (bash splits --db=PATH at the =).
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if [[ $word == --db ]]; then
      [[ \${COMP_WORDS[i + 1]} == = ]] && ((i++))
      ((i++))
      db=(--db "\${COMP_WORDS[i]}")
      continue
    fi
    [[ $word == -* || $word == = ]] && continue
    command=$word
    break
  done
  if [[ -z $command ]]; then
    if [[ $prev == --db || ($prev == = && \${COMP_WORDS[COMP_CWORD - 2]} == --db) ]]; then
      return 0 # a file: bash's own completion
    fi
    compopt +o default 2>/dev/null
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--db --json --help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "${names}" -- "$cur"))
    fi
    return 0
  fi
  case $command in
${cases.join("\n")}
    *) return 0 ;;
  esac
  # The value of an option that takes one: files, or whatever is typed.
  [[ " $valued " == *" $prev "* ]] && return 0
  [[ $prev == = && " $valued " == *" \${COMP_WORDS[COMP_CWORD - 2]} "* ]] && return 0
  if [[ $cur == -* ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ $argument == sessions ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$("\${COMP_WORDS[0]}" "\${db[@]}" --json list --limit 100 2>/dev/null |
      sed -n 's/^    "id": "\\([^"]*\\)",$/\\1/p')" -- "$cur"))
  elif [[ $argument == words ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  elif [[ $argument == none ]]; then
    compopt +o default 2>/dev/null
  fi
  return 0
}
complete -o default -F _hermes_state hermes-state
`;
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const shell = args.positionals[0];
  if (shell !== "bash") {
    throw new UsageError(`only bash has a completion script: current value is ${shell}`, {
      command: "completions",
    });
  }
  const commands = await Promise.all(COMMAND_TABLE.map((entry) => entry.load()));
  ctx.io.stdout(bashCompletion(commands));
  return 0;
}

/** The `completions` command. */
export const completionsCommand: Command = {
  name: "completions",
  summary: "Print a bash completion script",
  usage: USAGE,
  options: {},
  minPositionals: 1,
  maxPositionals: 1,
  positionalNames: "SHELL",
  run,
};
