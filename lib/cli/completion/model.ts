/**
 * What a shell completes for hermes-state, read from the command table: the
 * commands with their summaries, each command's options (which take a value,
 * and the words a value may be), and what its arguments are. The bash, zsh
 * and fish scripts are each written from this one model.
 *
 * @module
 */
import type { Command } from "../command.ts";
import type { OptionSpec } from "../parse.ts";

/** The shells `completions` writes a script for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;

/** A shell `completions` writes a script for. */
export type Shell = typeof SHELLS[number];

/** One option as a shell writes it. */
export interface CompletedOption {
  /** Its name with the dashes: `--source`. */
  readonly flag: string;
  /** Whether it takes a value (`--source cli`) or is a flag (`--json`, `--follow[=5]`). */
  readonly takes: "value" | "flag";
  /** The words its value may be; empty when any. */
  readonly choices: readonly string[];
  /** What of the store its value names (asked of the CLI at each Tab), or `null`. */
  readonly names: StoreNames | null;
}

/** What of the store an argument or an option's value names (see {@linkcode OptionSpec.names}). */
export type StoreNames = NonNullable<OptionSpec["names"]>;

/** What a command's arguments are. */
export type ArgumentKind = "sessions" | "files" | "words" | "none";

/** One command as a shell completes it. */
export interface CompletedCommand {
  readonly name: string;
  readonly summary: string;
  /** The global options first, then its own. */
  readonly options: readonly CompletedOption[];
  readonly argument: ArgumentKind;
  /** The words of a `words` argument. */
  readonly words: readonly string[];
}

/** The options given before a command. */
export const LEADING_OPTIONS = ["--db", "--json", "--no-pager", "--help", "--version"] as const;

/** The options every command takes, besides its own (`--db` takes a file). */
const GLOBAL_OPTIONS: readonly CompletedOption[] = [
  { flag: "--db", takes: "value", choices: [], names: null },
  { flag: "--json", takes: "flag", choices: [], names: null },
  { flag: "--no-pager", takes: "flag", choices: [], names: null },
  { flag: "--help", takes: "flag", choices: [], names: null },
];

/** Commands whose arguments name a session. */
const SESSION_ARGUMENTS = new Set(["show", "delete", "lineage", "rename"]);

/** Commands whose arguments are files (or server URLs, typed out). */
const FILE_ARGUMENTS = new Set(["backup", "copy", "demo", "export", "import", "recover", "sync"]);

/** Commands whose argument is one of a few words. */
const WORD_ARGUMENTS: Readonly<Record<string, readonly string[]>> = { completions: SHELLS };

/**
 * The completion model of these commands.
 *
 * @param commands The commands, in the order the help lists them.
 * @returns One entry a command, in the same order.
 */
export function completionModel(commands: readonly Command[]): CompletedCommand[] {
  return commands.map((command) => {
    const options = [...GLOBAL_OPTIONS];
    for (const [name, spec] of Object.entries(command.options)) {
      // An inline value (`--follow=5`) is one word: the next one is not its value.
      options.push({
        flag: `--${name}`,
        takes: spec.type === "string" ? "value" : "flag",
        choices: spec.choices ?? [],
        names: spec.names ?? null,
      });
    }
    const words = WORD_ARGUMENTS[command.name] ?? [];
    const argument: ArgumentKind = SESSION_ARGUMENTS.has(command.name)
      ? "sessions"
      : FILE_ARGUMENTS.has(command.name)
      ? "files"
      : words.length > 0
      ? "words"
      : "none";
    return { name: command.name, summary: command.summary, options, argument, words };
  });
}

/**
 * How a script asks the CLI for the names of a store's sessions, sources or
 * origins: the arguments after `--db`, and, for a `--json` answer, the key
 * whose values its pretty-printed answer holds one a line (`    "key": "…",`),
 * at that indentation (`key` `null`: the answer is the names, one a line).
 * `typed`: the word being completed is passed last. `completions
 * session-ids PREFIX` gives the ids that start with what is typed, of every
 * session (children, `tool` sessions and old ones too); `usage` every
 * source; `origins` fails on a file, which then offers nothing.
 */
export const STORE_NAMES: Readonly<
  Record<
    StoreNames,
    {
      readonly args: readonly string[];
      readonly key: string | null;
      readonly indent: number;
      readonly typed: boolean;
    }
  >
> = {
  sessions: { args: ["completions", "session-ids", "--"], key: null, indent: 0, typed: true },
  sources: {
    args: ["--json", "usage", "--by", "source", "--since", "all"],
    key: "key",
    indent: 6,
    typed: false,
  },
  origins: { args: ["--json", "origins"], key: "origin", indent: 4, typed: false },
};

/**
 * The shell function `__hermes_state_names KIND [TYPED]` of the bash and
 * zsh scripts: it prints the sessions, sources or origins of the store of
 * the `--db` on the line (the caller's array `db`), one a line, from the
 * CLI's answer (a `--json` one through `sed`; fish's script uses `string
 * replace` with the same pattern). `TYPED` is the word being completed.
 *
 * @param program The shell's word for the CLI on the line (`"${COMP_WORDS[0]}"`).
 * @returns The function's text.
 */
export function storeNamesFunction(program: string): string {
  const cases = (Object.keys(STORE_NAMES) as StoreNames[]).map((names) => {
    const { args, key, indent, typed } = STORE_NAMES[names];
    const asked = `${program} "\${db[@]}" ${args.join(" ")}${typed ? ' "$2"' : ""} 2>/dev/null`;
    return key === null ? `    ${names}) ${asked} ;;` : `    ${names}) ${asked} |
      sed -n 's/^${" ".repeat(indent)}"${key}": "\\([^"]*\\)",$/\\1/p' ;;`;
  });
  return `# The sessions, sources or origins of the store of the --db on the line (else the default
# store), one a line, asked of the CLI itself (with the word being typed, $2, for the sessions);
# nothing when it cannot tell.
__hermes_state_names() {
  case $1 in
${cases.join("\n")}
  esac
}`;
}

/** An option whose value a script completes: from its words, or from the store's names. */
export interface ValueCompletion {
  /** `usage --by`: the command, a space, the option. */
  readonly key: string;
  readonly choices: readonly string[];
  readonly names: StoreNames | null;
}

/**
 * The options of these commands whose values a script completes.
 *
 * @param commands The completion model.
 * @returns One entry per command and option, in the model's order.
 */
export function valueCompletions(commands: readonly CompletedCommand[]): ValueCompletion[] {
  return commands.flatMap((command) =>
    command.options.filter((option) => option.choices.length > 0 || option.names !== null)
      .map((option) => ({
        key: `${command.name} ${option.flag}`,
        choices: option.choices,
        names: option.names,
      }))
  );
}
