/**
 * The bash completion script (`hermes-state completions bash`).
 *
 * @module
 */
import {
  type CompletedCommand,
  LEADING_OPTIONS,
  storeNamesFunction,
  valueCompletions,
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
  const choices = valueCompletions(commands).map(({ key, choices, names }) =>
    `      "${key}") ${names === null ? `choices="${choices.join(" ")}"` : `names=${names}`} ;;`
  );
  return `# bash completion for hermes-state (hermes-state completions bash)
${storeNamesFunction(`"\${COMP_WORDS[0]}"`)}
# Offers the store's names of one kind that start with $cur, as they are (compgen -W would
# expand a "$(…)" in a name).
__hermes_state_offer() {
  local name
  compopt +o default 2>/dev/null
  while IFS= read -r name; do
    [[ $name == "$cur"* ]] && COMPREPLY+=("$name")
  done < <(__hermes_state_names "$1" "$(__hermes_state_unquoted "$cur")")
}
# A word as typed, as the shell will pass it: one level of quotes or backslashes gone, ~ expanded.
__hermes_state_unquoted() {
  local word=$1
  case $word in
    \\'*\\') word=\${word:1:\${#word}-2} ;;
    \\"*\\") word=\${word:1:\${#word}-2} ;;
    *) word=\${word//\\\\/} ;;
  esac
  [[ $word == "~" || $word == "~/"* ]] && word=$HOME\${word:1}
  printf '%s' "$word"
}
_hermes_state() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD - 1]}
  local word command="" db=() i k n rest opts valued argument words option choices names
  local -a typed=()
  # bash splits a word at COMP_WORDBREAKS ("=", ":" and "@" among them, so a URL comes in
  # pieces): the pieces that touch in the line are glued back into the words as typed.
  if [[ -n \${COMP_LINE+set} ]]; then
    rest=\${COMP_LINE:0:COMP_POINT} k=-1
    for ((i = 0; i <= COMP_CWORD; i++)); do
      word=\${COMP_WORDS[i]}
      if ((k < 0)) || [[ $rest == [[:space:]]* ]]; then
        rest=\${rest#"\${rest%%[![:space:]]*}"}
        typed[++k]=$word
      else
        typed[k]+=$word
      fi
      rest=\${rest#"$word"}
    done
  else
    typed=("\${COMP_WORDS[@]:0:COMP_CWORD + 1}")
  fi
  n=\${#typed[@]}
  # The command is the first word before this one that is neither an option nor --db's value;
  # --db may come before or after it, as the CLI takes it.
  for ((i = 1; i < n - 1; i++)); do
    word=\${typed[i]}
    if [[ $word == --db ]]; then
      ((i++))
      ((i < n - 1)) && db=(--db "$(__hermes_state_unquoted "\${typed[i]}")")
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
  if [[ -z $command ]]; then
    if [[ \${typed[n - 2]} == --db || \${typed[n - 1]} == --db=* ]]; then
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
    if [[ -n $names ]]; then
      __hermes_state_offer "$names"
    elif [[ -n $choices ]]; then
      compopt +o default 2>/dev/null
      COMPREPLY=($(compgen -W "$choices" -- "$cur"))
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    compopt +o default 2>/dev/null
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ $argument == sessions ]]; then
    __hermes_state_offer sessions
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
