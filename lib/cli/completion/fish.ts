/**
 * The fish completion script (`hermes-state completions fish`): `complete`
 * lines for a file in `~/.config/fish/completions/`, which also work sourced.
 *
 * @module
 */
import { type CompletedCommand, LEADING_OPTIONS, STORE_NAMES, type StoreNames } from "./model.ts";

/** A word quoted for fish: single quotes, `\` and `'` escaped. */
function quoted(word: string): string {
  return `'${word.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/** The `complete` lines of one command's options and arguments. */
function commandLines(command: CompletedCommand): string[] {
  const when = `-n ${quoted(`__hermes_state_using ${command.name}`)}`;
  const lines = command.options.map((option) => {
    const name = option.flag.slice(2);
    if (option.takes === "flag") return `complete -c hermes-state ${when} -l ${name}`;
    if (option.flag === "--db") return `complete -c hermes-state ${when} -l db -r -F`;
    const words = option.names !== null
      ? ` -a '(__hermes_state_names ${option.names} (__hermes_state_typed))'`
      : option.choices.length > 0
      ? ` -a ${quoted(option.choices.join(" "))}`
      : "";
    return `complete -c hermes-state ${when} -l ${name} -x${words}`;
  });
  if (command.argument === "sessions") {
    lines.push(
      `complete -c hermes-state ${when} -a '(__hermes_state_names sessions (__hermes_state_typed))'`,
    );
  } else if (command.argument === "files") {
    lines.push(`complete -c hermes-state ${when} -F`);
  } else if (command.argument === "words") {
    lines.push(`complete -c hermes-state ${when} -a ${quoted(command.words.join(" "))}`);
  }
  return lines;
}

/**
 * The fish completion script for these commands.
 *
 * @param commands The completion model ({@linkcode completionModel}).
 * @returns The script: two helper functions and the `complete` lines.
 */
export function fishCompletion(commands: readonly CompletedCommand[]): string {
  const leading = LEADING_OPTIONS.map((flag) =>
    `complete -c hermes-state -n 'not __hermes_state_command' -l ${flag.slice(2)}${
      flag === "--db" ? " -r -F" : ""
    }`
  );
  const names = commands.map((command) =>
    `complete -c hermes-state -n 'not __hermes_state_command' -a ${quoted(command.name)} -d ${
      quoted(command.summary)
    }`
  );
  const askers = (Object.keys(STORE_NAMES) as StoreNames[]).map((names) => {
    const { args, key, indent, typed } = STORE_NAMES[names];
    const asked = `$tokens[1] $db ${args.join(" ")}${typed ? " $argv[2]" : ""} 2>/dev/null`;
    return `        case ${names}
            ${asked}${
      key === null ? "" : ` | string replace -rf '^${" ".repeat(indent)}"${key}": "([^"]*)",$' '$1'`
    }`;
  });
  return `# fish completion for hermes-state (hermes-state completions fish)
# The command: the first word that is neither an option nor --db's value.
function __hermes_state_command
    set -l tokens (commandline -opc)
    set -e tokens[1]
    while set -q tokens[1]
        switch $tokens[1]
            case --db
                set -e tokens[1]
            case '-*'
            case '*'
                echo $tokens[1]
                return 0
        end
        set -e tokens[1]
    end
    return 1
end
function __hermes_state_using
    set -l command (__hermes_state_command)
    and test "$command" = $argv[1]
end
# The word being completed, without the option an "=" joins to it (--session=2026).
function __hermes_state_typed
    string replace -r -- '^--[^=]*=' '' (commandline -ct)
end
# The sessions, sources or origins of the store of the --db on the line (else the default
# store), one a line, asked of the CLI itself (with the word being typed, $argv[2], for the
# sessions); nothing when it cannot tell.
function __hermes_state_names
    set -l tokens (commandline -opc)
    set -l db
    for i in (seq 2 (count $tokens))
        if test "$tokens[$i]" = --db
            set db --db $tokens[(math $i + 1)]
        else if string match -q -- '--db=*' $tokens[$i]
            set db --db (string replace -- --db= '' $tokens[$i])
        end
    end
    switch $argv[1]
${askers.join("\n")}
    end
end
complete -c hermes-state -f
${leading.join("\n")}
${names.join("\n")}
${commands.flatMap(commandLines).join("\n")}
`;
}
