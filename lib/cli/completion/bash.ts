/**
 * The bash completion script (`hermes-state completions bash`).
 *
 * @module
 */
import {
  type CompletedCommand,
  LEADING_OPTIONS,
  namesSed,
  STORE_NAMES,
  type StoreNames,
} from "./model.ts";

/**
 * The bash completion script for these commands.
 *
 * @param commands The completion model ({@linkcode completionModel}).
 * @returns The script: a function `_hermes_state` and its `complete` line.
 */
export function bashCompletion(commands: readonly CompletedCommand[]): string {
  const names = commands.map((command) => command.name).join(" ");
  const cases = commands.map((command) => {
    const flags = command.options.map((option) => option.flag);
    const valued = command.options.filter((option) => option.takes === "value")
      .map((option) => option.flag);
    return `    ${command.name}) opts="${flags.join(" ")}" valued="${valued.join(" ")}" ` +
      `argument=${command.argument} words="${command.words.join(" ")}" ;;`;
  });
  const choices = commands.flatMap((command) =>
    command.options.filter((option) => option.choices.length > 0 || option.names !== null).map(
      (option) =>
        `      "${command.name} ${option.flag}") ${
          option.names === null ? `choices="${option.choices.join(" ")}"` : `names=${option.names}`
        } ;;`,
    )
  );
  const askers = (Object.keys(STORE_NAMES) as StoreNames[]).map((names) =>
    `    ${names}) "\${COMP_WORDS[0]}" "\${db[@]}" ${
      STORE_NAMES[names].args.join(" ")
    } 2>/dev/null |
      ${namesSed(names)} ;;`
  );
  return `# bash completion for hermes-state (hermes-state completions bash)
# The sessions, sources or origins of the store of the --db on the line (else the default
# store), one a line, asked of the CLI itself; nothing when it cannot tell.
__hermes_state_names() {
  case $1 in
${askers.join("\n")}
  esac
}
_hermes_state() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD - 1]}
  local word command="" db=() i opts valued argument words option choices names
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
      COMPREPLY=($(compgen -W "${LEADING_OPTIONS.join(" ")}" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "${names}" -- "$cur"))
    fi
    return 0
  fi
  case $command in
${cases.join("\n")}
    *) return 0 ;;
  esac
  # The value of an option that takes one: one of its words, or of the store's names, else a
  # file or whatever is typed.
  option=$prev
  [[ $prev == = ]] && option=\${COMP_WORDS[COMP_CWORD - 2]}
  [[ $cur == = ]] && option=$prev cur=""
  if [[ " $valued " == *" $option "* ]]; then
    choices="" names=""
    case "$command $option" in
${choices.join("\n")}
    esac
    [[ -n $names ]] && choices=$(__hermes_state_names "$names")
    if [[ -n $names || -n $choices ]]; then
      compopt +o default 2>/dev/null
      COMPREPLY=($(compgen -W "$choices" -- "$cur"))
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ $argument == sessions ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$(__hermes_state_names sessions)" -- "$cur"))
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
