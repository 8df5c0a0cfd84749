/**
 * The shape of a subcommand and the context it runs in.
 *
 * @module
 */
import type { SessionStore } from "../core/session_store.ts";
import type { Io } from "./io.ts";
import type { OptionSpec, ParsedArgs } from "./parse.ts";
import type { DashWordPurpose } from "./dash_word.ts";
import type { Style } from "../render/style.ts";

/** What a command gets besides its arguments. */
export interface Context {
  /** The process streams, environment and clock. */
  readonly io: Io;
  /** `--json` was given. */
  readonly json: boolean;
  /** Colour for standard output. */
  readonly style: Style;
  /** The database path (`--db`, else the default). */
  readonly dbPath: string;
  /** How `openStore` opens it: `"read"` changes nothing, `"write"` as the agent does. */
  readonly access: "read" | "write";
  /**
   * Opens the store (`--db`, a file or a URL); `main` closes it when the
   * command ends.
   *
   * @param options `create: true` creates a missing file (import, demo);
   * otherwise a missing file is a {@linkcode CommandError}. `path` opens
   * another store than `--db`. A file without the Hermes tables is refused
   * (`NotStateDbError`), except an empty one with `create`. `access` opens
   * it otherwise than the command's table entry says (`serve --allow-writes`).
   */
  openStore(
    options?: { create?: boolean; path?: string; access?: "read" | "write" },
  ): Promise<SessionStore>;
}

/** One subcommand: its name, its hand-written usage text, its options and its code. */
export interface Command {
  /** The word after `hermes-state`. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The full help text (Usage, description, Options, Examples), ending with a newline. */
  readonly usage: string;
  /** Options besides the global ones (`--db`, `--json`, `--help`). */
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Fewest positional arguments. */
  readonly minPositionals: number;
  /** Most positional arguments. */
  readonly maxPositionals: number;
  /** How the positionals are named in a "missing" message. */
  readonly positionalNames?: string;
  /**
   * The positionals are free text (a query, a title): what the command
   * would do with a word starting with `-`, for the hint after "unknown
   * option" (`to search for "--dry-run"`).
   */
  readonly dashWord?: DashWordPurpose;
  /**
   * Runs the command.
   *
   * @param args The parsed arguments.
   * @param ctx Streams, flags and the database.
   * @returns The exit code.
   */
  run(args: ParsedArgs, ctx: Context): Promise<number>;
}
