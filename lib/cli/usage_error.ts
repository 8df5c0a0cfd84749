/**
 * Errors a command raises to end the run: {@linkcode UsageError} (the
 * command line is wrong, exit 2, with a "Try:" hint) and
 * {@linkcode CommandError} (the request cannot be done, exit 1). Both carry
 * a one-line message for the user and never show a stack trace.
 *
 * @module
 */
import { printableArgument } from "./shown_argument.ts";

/**
 * The command line is wrong: unknown option, missing argument, bad value.
 * `main` prints `hermes-state: <message>` and a "Try:" hint, and exits 2.
 *
 * @example
 * ```ts
 * import { UsageError } from "./usage_error.ts";
 * const error = new UsageError("missing QUERY", { command: "search" });
 * console.assert(error.hint === "Try: hermes-state search --help");
 * ```
 */
export class UsageError extends Error {
  /** The command whose usage the hint points at; `undefined` for the top level. */
  readonly command: string | undefined;

  /**
   * Creates the error.
   *
   * @param message One line, lower case, no trailing period.
   * @param options The command the hint names.
   */
  constructor(message: string, options: { command?: string } = {}) {
    super(message);
    this.name = "UsageError";
    this.command = options.command;
  }

  /** The hint line: `Try: hermes-state <command> --help`. */
  get hint(): string {
    return `Try: hermes-state ${this.command === undefined ? "" : `${this.command} `}--help`;
  }
}

/**
 * The request is well formed but cannot be done (no such session, no
 * database file…). `main` prints `hermes-state: <message>` and exits 1.
 *
 * @example
 * ```ts
 * import { CommandError } from "./usage_error.ts";
 * console.assert(new CommandError("Session 'x' not found").message === "Session 'x' not found");
 * ```
 */
export class CommandError extends Error {
  /**
   * Creates the error.
   *
   * @param message One line for the user.
   * @param options The underlying error.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CommandError";
  }
}

/**
 * What the user typed names no session (no id, id prefix or title): exit 1,
 * as every {@linkcode CommandError}. Told apart from an ambiguous prefix
 * ({@linkcode AmbiguousSessionError}) so that `delete --json` can list the
 * arguments that named nothing.
 *
 * @example
 * ```ts
 * import { SessionNotFoundError } from "./usage_error.ts";
 * const error = new SessionNotFoundError("2026x");
 * console.assert(error.typed === "2026x" && error.message.startsWith("Session '2026x' not found"));
 * ```
 */
export class SessionNotFoundError extends CommandError {
  /** What the user typed. */
  readonly typed: string;

  /**
   * Creates the error.
   *
   * @param typed What the user typed, as typed.
   * @param instead What to give instead, when not the usual words.
   */
  constructor(typed: string, instead = "give an id, a unique id prefix or a title") {
    // Control characters shown as symbols, as the ambiguous-prefix error shows them.
    super(`Session ${printableArgument(typed, "'")} not found (${instead})`);
    this.name = "SessionNotFoundError";
    this.typed = typed;
  }
}

/**
 * What the user typed is an id prefix (or a synced id) several sessions
 * share: exit 1, as every {@linkcode CommandError}. Carries the sessions it
 * matches so that `delete --json` can report them.
 *
 * @example
 * ```ts
 * import { AmbiguousSessionError } from "./usage_error.ts";
 * const error = new AmbiguousSessionError("2026", ["2026a", "2026b"], 2, "Session '2026' is ambiguous");
 * console.assert(error.typed === "2026" && error.count === 2);
 * ```
 */
export class AmbiguousSessionError extends CommandError {
  /** What the user typed. */
  readonly typed: string;
  /** Some of the ids it matches (the first ten). */
  readonly ids: readonly string[];
  /** How many sessions it matches in all. */
  readonly count: number;

  /**
   * Creates the error.
   *
   * @param typed What the user typed, as typed.
   * @param ids Some of the ids it matches.
   * @param count How many it matches in all.
   * @param message The line for the user, with the ids listed.
   */
  constructor(typed: string, ids: readonly string[], count: number, message: string) {
    super(message);
    this.name = "AmbiguousSessionError";
    this.typed = typed;
    this.ids = ids;
    this.count = count;
  }
}

/**
 * The run was stopped by SIGINT or SIGTERM; what it was writing was removed
 * (or, where it could not be, the message says what is left).
 * Exits with 128 plus the signal number, as a shell reports it.
 *
 * @example
 * ```ts
 * import { InterruptedError } from "./usage_error.ts";
 * console.assert(new InterruptedError("SIGINT").exitCode === 130);
 * ```
 */
export class InterruptedError extends CommandError {
  /** 130 for SIGINT, 143 for SIGTERM. */
  readonly exitCode: number;

  /**
   * Creates the error.
   *
   * @param signal The signal that stopped the run.
   * @param left What became of the output, where it was not removed.
   */
  constructor(signal: "SIGINT" | "SIGTERM", left = "the partial output was removed") {
    super(`interrupted by ${signal}: ${left}`);
    this.name = "InterruptedError";
    this.exitCode = signal === "SIGINT" ? 130 : 143;
  }
}
