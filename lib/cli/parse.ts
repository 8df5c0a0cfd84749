/**
 * A small, strict argument parser: long options (`--limit 5`, `--limit=5`),
 * flags with an optional inline value (`--follow`, `--follow=10`), one-letter aliases (`-y`), repeatable options, `--` ends the options.
 * Every mistake becomes a {@linkcode UsageError} with the same wording on
 * every runtime.
 *
 * @module
 */
import { dashWordHint, type DashWordPurpose } from "./dash_word.ts";
import { UsageError } from "./usage_error.ts";
import { printableArgument, quotedArgument } from "./shown_argument.ts";
import { quotedValue } from "../core/shown_value.ts";

/** One option a command accepts. */
export interface OptionSpec {
  /** `boolean` is a flag; `string` takes a value. */
  readonly type: "string" | "boolean";
  /** A one-letter alias, without the dash. */
  readonly short?: string;
  /** The option may be given several times (`--source cli --source tui`). */
  readonly multiple?: boolean;
  /**
   * A flag that may carry a value after `=` (`--follow` or `--follow=10`,
   * never `--follow 10`): `has` tells whether it was given, `string` its value.
   */
  readonly inlineValue?: boolean;
  /**
   * The words the value may be, for shell completion; the command checks
   * the value with {@linkcode choiceOption} or {@linkcode choicesOption}
   * against the same list.
   */
  readonly choices?: readonly string[];
  /**
   * What of the store the value names, for shell completion: the script
   * asks the CLI for the sessions, sources or origins of the `--db` on the
   * line as the user presses Tab.
   */
  readonly names?: "sessions" | "sources" | "origins";
}

/** What a command accepts. */
export interface ParseSpec {
  /** The command name, for error hints. */
  readonly command?: string;
  /** Options by long name. */
  readonly options: Readonly<Record<string, OptionSpec>>;
  /**
   * Fewest positional arguments.
   * @default {0}
   */
  readonly minPositionals?: number;
  /**
   * Most positional arguments.
   * @default {Infinity}
   */
  readonly maxPositionals?: number;
  /**
   * How the positionals are named in a "missing" message (`ID`, `QUERY`…);
   * several joined by " and " (`SRC and DEST`), of which the message names
   * only those not given.
   */
  readonly positionalNames?: string;
  /**
   * The positionals are free text (a query, a title): an unknown option's
   * error then says how to give that word as text (with `--`).
   */
  readonly dashWord?: DashWordPurpose;
}

/** The parsed command line. */
export class ParsedArgs {
  readonly #values: Map<string, string[] | true>;
  /** The positional arguments, in order. */
  readonly positionals: readonly string[];

  /**
   * @param values Option values by long name.
   * @param positionals The positional arguments.
   */
  constructor(values: Map<string, string[] | true>, positionals: readonly string[]) {
    this.#values = values;
    this.positionals = positionals;
  }

  /**
   * The value of a string option (the last one when given several times).
   *
   * @param name The long name.
   * @returns The value, or `undefined` when not given.
   */
  string(name: string): string | undefined {
    const value = this.#values.get(name);
    return Array.isArray(value) ? value[value.length - 1] : undefined;
  }

  /**
   * Every value of a repeatable option.
   *
   * @param name The long name.
   * @returns The values, in order (empty when not given).
   */
  strings(name: string): string[] {
    const value = this.#values.get(name);
    return Array.isArray(value) ? [...value] : [];
  }

  /**
   * Whether a flag was given.
   *
   * @param name The long name.
   * @returns True when given.
   */
  flag(name: string): boolean {
    return this.#values.get(name) === true;
  }

  /**
   * Whether an option was given at all.
   *
   * @param name The long name.
   * @returns True when given.
   */
  has(name: string): boolean {
    return this.#values.has(name);
  }
}

function looksLikeOption(arg: string): boolean {
  return arg.length > 1 && arg.startsWith("-") && !/^-\d/.test(arg);
}

/** The positionals still missing when `given` are there: `DEST` of `SRC and DEST` after one. */
function missingNames(spec: ParseSpec, given: number): string {
  const names = (spec.positionalNames ?? "argument").split(" and ");
  return names.length > 1 && given < names.length
    ? names.slice(given).join(" and ")
    : names.join(" and ");
}

/**
 * Parses `argv` against `spec`.
 *
 * @param spec The options and positional counts the command accepts.
 * @param argv The arguments after the command name.
 * @returns The parsed arguments.
 * @throws {UsageError} On an unknown option, a missing, empty or unexpected
 * value, or too few or too many positional arguments.
 *
 * @example
 * ```ts
 * import { parseCommand } from "./parse.ts";
 * const args = parseCommand(
 *   { options: { limit: { type: "string" }, yes: { type: "boolean", short: "y" } } },
 *   ["--limit=5", "-y", "abc"],
 * );
 * console.assert(args.string("limit") === "5" && args.flag("yes"));
 * console.assert(args.positionals[0] === "abc");
 * ```
 */
export function parseCommand(spec: ParseSpec, argv: readonly string[]): ParsedArgs {
  const fail = (message: string) => new UsageError(message, { command: spec.command });
  /** Which arguments were positionals: the others before an unknown option stay options in its hint. */
  const positionalAt = new Set<number>();
  const unknown = (name: string, at: number) => {
    const shown = printableArgument(name);
    if (spec.dashWord === undefined) return fail(`unknown option ${shown}`);
    const options = argv.slice(0, at).filter((_, k) => !positionalAt.has(k));
    const hint = dashWordHint(spec.command ?? "", spec.dashWord, {
      options,
      before: positionals,
      word: argv[at],
    });
    return fail(`unknown option ${shown}; ${hint}`);
  };
  const shorts = new Map<string, string>();
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.short !== undefined) shorts.set(option.short, name);
  }
  const values = new Map<string, string[] | true>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!looksLikeOption(arg)) {
      positionalAt.add(i);
      positionals.push(arg);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
    } else {
      const long = shorts.get(arg.slice(1));
      if (long === undefined) throw unknown(arg, i);
      name = long;
    }
    const option = Object.hasOwn(spec.options, name) ? spec.options[name] : undefined;
    if (option === undefined) throw unknown(`--${name}`, i);
    if (option.type === "boolean") {
      if (inline !== undefined && option.inlineValue) {
        if (inline.trim() === "") throw fail(`option --${name}= needs a value after "="`);
        values.set(name, [inline]);
        continue;
      }
      if (inline !== undefined) throw fail(`option --${name} takes no value`);
      values.set(name, true);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("--") && next.length > 2)) {
        throw fail(`option --${name} needs a value`);
      }
      value = next;
      i++;
    }
    if (value.trim() === "") {
      throw fail(`option --${name} needs a value, got ${quotedValue(value)}`);
    }
    const previous = values.get(name);
    if (Array.isArray(previous) && option.multiple) previous.push(value);
    else values.set(name, [value]);
  }
  const min = spec.minPositionals ?? 0;
  const max = spec.maxPositionals ?? Infinity;
  if (positionals.length < min) throw fail(`missing ${missingNames(spec, positionals.length)}`);
  if (positionals.length > max) {
    throw fail(`unexpected argument ${quotedArgument(positionals[max])}`);
  }
  return new ParsedArgs(values, positionals);
}

/**
 * Reads a whole-number option.
 *
 * @param args The parsed arguments.
 * @param name The long name.
 * @param options The default, the smallest accepted value, and the command for the hint.
 * @returns The number.
 * @throws {UsageError} When the value is not a whole number at least `min`.
 *
 * @example
 * ```ts
 * import { integerOption, parseCommand } from "./parse.ts";
 * const args = parseCommand({ options: { limit: { type: "string" } } }, ["--limit", "7"]);
 * console.assert(integerOption(args, "limit", { fallback: 20 }) === 7);
 * ```
 */
export function integerOption(
  args: ParsedArgs,
  name: string,
  options: { fallback: number; min?: number; command?: string },
): number {
  const text = args.string(name);
  if (text === undefined) return options.fallback;
  const min = options.min ?? 0;
  const value = /^[+-]?\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  // A whole number too large to count exactly is no typo of form: the bound is what is wrong.
  const bound = value > Number.MAX_SAFE_INTEGER
    ? `from ${min} to ${Number.MAX_SAFE_INTEGER}`
    : `of at least ${min}`;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new UsageError(
      `--${name} must be a whole number ${bound}, got ${quotedArgument(text)}`,
      {
        command: options.command,
      },
    );
  }
  return value;
}

/**
 * Reads an option that takes one of a few words.
 *
 * @param args The parsed arguments.
 * @param name The long name.
 * @param options The accepted words, the default, and the command for the hint.
 * @returns The word.
 * @throws {UsageError} When the value is not one of `choices`.
 *
 * @example
 * ```ts
 * import { choiceOption, parseCommand } from "./parse.ts";
 * const args = parseCommand({ options: { format: { type: "string" } } }, ["--format", "md"]);
 * console.assert(choiceOption(args, "format", { choices: ["jsonl", "md"], fallback: "jsonl" }) === "md");
 * ```
 */
export function choiceOption<T extends string>(
  args: ParsedArgs,
  name: string,
  options: { choices: readonly T[]; fallback: T; command?: string },
): T {
  const text = args.string(name);
  if (text === undefined) return options.fallback;
  if (!(options.choices as readonly string[]).includes(text)) {
    throw new UsageError(
      `--${name} must be one of ${options.choices.join(", ")}, got ${quotedArgument(text)}`,
      { command: options.command },
    );
  }
  return text as T;
}

/**
 * Reads a repeatable option whose every value is one of a few words.
 *
 * @param args The parsed arguments.
 * @param name The long name.
 * @param options The accepted words, and the command for the hint.
 * @returns The words given, in order (empty when none).
 * @throws {UsageError} When some value is not one of `choices`.
 *
 * @example
 * ```ts
 * import { choicesOption, parseCommand } from "./parse.ts";
 * const args = parseCommand({ options: { role: { type: "string", multiple: true } } }, [
 *   "--role", "user", "--role", "tool",
 * ]);
 * console.assert(choicesOption(args, "role", { choices: ["user", "tool"] }).join() === "user,tool");
 * ```
 */
export function choicesOption<T extends string>(
  args: ParsedArgs,
  name: string,
  options: { choices: readonly T[]; command?: string },
): T[] {
  const values = args.strings(name);
  for (const text of values) {
    if (!(options.choices as readonly string[]).includes(text)) {
      throw new UsageError(
        `--${name} must be one of ${options.choices.join(", ")}, got ${quotedArgument(text)}`,
        { command: options.command },
      );
    }
  }
  return values as T[];
}

/**
 * The shortest pause a follow takes, in seconds: a shorter one would read the
 * store (or pass a sync again) thousands of times a second, for nothing a
 * person could see.
 */
export const MIN_PAUSE_SECONDS = 0.05;

/**
 * Reads a pause given in seconds (`--follow=SECONDS`): a positive number,
 * fractions allowed, at least {@linkcode MIN_PAUSE_SECONDS}. A shorter one
 * is refused rather than raised to the floor, so that the run does what it
 * was told or says why not.
 *
 * @param name The option as written (`--follow`, `--every`).
 * @param text Its value.
 * @param command The command, for the hint.
 * @returns The seconds.
 * @throws {UsageError} When the value is not a positive number, or is
 *   below {@linkcode MIN_PAUSE_SECONDS}.
 *
 * @example
 * ```ts
 * import { positiveSeconds } from "./parse.ts";
 * console.assert(positiveSeconds("--follow", "0.5", "show") === 0.5);
 * ```
 */
export function positiveSeconds(name: string, text: string, command: string): number {
  const seconds = text.trim() === "" ? NaN : Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(
      `${name} must be a positive number of seconds, got ${quotedValue(text)}`,
      {
        command,
      },
    );
  }
  if (seconds < MIN_PAUSE_SECONDS) {
    throw new UsageError(
      `${name} must be at least ${MIN_PAUSE_SECONDS} seconds, got ${quotedValue(text)}`,
      { command },
    );
  }
  return seconds;
}
