/**
 * The zsh completion script (`hermes-state completions zsh`): a `#compdef`
 * file for a folder of `$fpath`, which also works sourced.
 *
 * @module
 */
import {
  type CompletedCommand,
  LEADING_OPTIONS,
  storeNamesFunction,
  valueCompletions,
} from "./model.ts";

/** A word quoted for zsh: single quotes, a quote inside written `'\''`. */
function quoted(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * The zsh completion script for these commands.
 *
 * @param commands The completion model ({@linkcode completionModel}).
 * @returns The script: `#compdef hermes-state`, a function `_hermes_state`,
 *   and the line that runs it when zsh autoloads the file or registers it
 *   with `compdef` when the file is sourced.
 */
export function zshCompletion(commands: readonly CompletedCommand[]): string {
  const described = commands.map((command) =>
    `    ${quoted(`${command.name}:${command.summary.replaceAll(":", "\\:")}`)}`
  );
  const cases = commands.map((command) => {
    const flags = command.options.map((option) => option.flag);
    const valued = command.options.filter((option) => option.takes === "value")
      .map((option) => option.flag);
    return `    ${command.name}) opts=(${flags.join(" ")}) valued=(${valued.join(" ")}) ` +
      `argument=${command.argument} arguments=(${command.words.join(" ")}) ;;`;
  });
  const choices = valueCompletions(commands).map(({ key, choices, names }) =>
    `      ${quoted(key)}) ${
      names === null ? `choices=(${choices.join(" ")})` : `names=${names}`
    } ;;`
  );
  return `#compdef hermes-state
# zsh completion for hermes-state (hermes-state completions zsh)
${storeNamesFunction(`"\${words[1]}"`)}
# A word as typed, as the shell will pass it: one level of quotes gone, ~ expanded.
__hermes_state_unquoted() {
  local word=\${(Q)1}
  [[ $word == "~" || $word == "~/"* ]] && word=$HOME\${word:1}
  print -r -- "$word"
}
_hermes_state() {
  local -a commands opts valued arguments choices db
  local i word command="" option argument names
  commands=(
${described.join("\n")}
  )
  # The command is the first word that is neither an option nor --db's value; --db may come
  # before or after it, as the CLI takes it.
  for ((i = 2; i < CURRENT; i++)); do
    word=\${words[i]}
    if [[ $word == --db ]]; then
      ((i++))
      db=(--db "$(__hermes_state_unquoted "\${words[i]}")")
      continue
    fi
    if [[ $word == --db=* ]]; then
      db=(--db "$(__hermes_state_unquoted "\${word#--db=}")")
      continue
    fi
    [[ $word == -* ]] && continue
    # The command's words after it are its arguments; a --db among them is read all the same.
    [[ -z $command ]] && command=$word
  done
  # The option whose value is being typed: the word before, or the one before "=".
  option=\${words[CURRENT - 1]}
  if [[ $PREFIX == --*=* ]]; then
    option=\${PREFIX%%=*}
    compset -P '*='
  elif [[ $PREFIX == -* ]]; then
    option=""
  fi
  if [[ -z $command ]]; then
    if [[ $option == --db ]]; then
      _files
    elif [[ $PREFIX == -* ]]; then
      compadd -- ${LEADING_OPTIONS.join(" ")}
    else
      _describe -t commands 'hermes-state command' commands
    fi
    return
  fi
  case $command in
${cases.join("\n")}
    *) return 1 ;;
  esac
  # The value of an option that takes one: one of its words, or of the store's names, a file
  # after --db, else as typed.
  if (( \${valued[(Ie)$option]} )); then
    choices=() names=""
    case "$command $option" in
${choices.join("\n")}
    esac
    [[ -n $names ]] && choices=(\${(f)"$(__hermes_state_names $names "\${(Q)PREFIX}")"})
    if (( \${#choices} )); then
      compadd -- "\${choices[@]}"
    elif [[ $option == --db ]]; then
      _files
    fi
    return
  fi
  if [[ $PREFIX == -* ]]; then
    compadd -- "\${opts[@]}"
  elif [[ $argument == sessions ]]; then
    choices=(\${(f)"$(__hermes_state_names sessions "\${(Q)PREFIX}")"})
    compadd -- "\${choices[@]}"
  elif [[ $argument == files ]]; then
    _files
  elif [[ $argument == words ]]; then
    compadd -- "\${arguments[@]}"
  fi
}
# Autoloaded from $fpath (at the first Tab), run it; sourced, register it.
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  _hermes_state "$@"
else
  compdef _hermes_state hermes-state
fi
`;
}
