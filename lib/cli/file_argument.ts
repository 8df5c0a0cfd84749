/**
 * The first check of an argument that names a file (or a postgres:// URL)
 * and nothing else: `backup`'s DEST, `recover`'s and `copy`'s SRC and DEST,
 * `demo`'s PATH, `sync`'s FILEs and `import`'s FILE (`main` says the same
 * of `--db`). An empty one is a usage error that names it, as `show ""` is,
 * instead of a message about a file with no name ("No database at "); `-`,
 * which `export` and `import` read as standard output and input, is refused
 * where it would be taken for a file of that name (a backup named `-`).
 *
 * @module
 */
import { quotedValue } from "../core/shown_value.ts";
import { UsageError } from "./usage_error.ts";

/** How {@linkcode checkFileArgument} names the argument and what it allows. */
export interface FileArgumentOptions {
  /** The command whose usage the error points at. */
  readonly command: string;
  /** The argument as the usage names it (`DEST`, `FILE`, `--db`). */
  readonly name: string;
  /** Whether the command reads the file or writes it (what `-` would have meant). */
  readonly role: "input" | "output";
  /** `-` is standard input here (`import FILE`), so it is allowed. */
  readonly dashIsStdin?: boolean;
  /**
   * The file is read as text, never opened by SQLite (`import FILE`): `:memory:`
   * names a file there like any other name.
   */
  readonly text?: boolean;
}

/**
 * Whether `value` names SQLite's private in-memory database (`:memory:`, or
 * `sqlite::memory:`), which SQLite opens instead of a file of that name:
 * what a command writes there is gone when it ends.
 *
 * @param value A file argument or `--db`, as typed.
 * @returns True for SQLite's in-memory name.
 *
 * @example
 * ```ts
 * import { namesMemory } from "./file_argument.ts";
 * console.assert(namesMemory(":memory:") && namesMemory("sqlite::memory:"));
 * console.assert(!namesMemory("./:memory:"));
 * ```
 */
export function namesMemory(value: string): boolean {
  return value === ":memory:" || value === "sqlite::memory:";
}

/**
 * The usage error for a store named by SQLite's in-memory name.
 *
 * @param name The argument as the usage names it (`DEST`, `--db`).
 * @param value The argument as typed.
 * @param command The command whose usage the error points at.
 * @returns The error (exit 2).
 *
 * @example
 * ```ts
 * import { memoryStoreError } from "./file_argument.ts";
 * console.assert(memoryStoreError("--db", ":memory:", "import").message.includes("./:memory:"));
 * ```
 */
export function memoryStoreError(name: string, value: string, command: string): UsageError {
  return new UsageError(
    `${name} ${quotedValue(value)} is SQLite's in-memory database, which is gone when the ` +
      `command ends (nothing would be kept): give a file name, or ./:memory: for a file of that name`,
    { command },
  );
}

/**
 * Refuses an empty or blank file argument, `-` where it is no stream, and
 * SQLite's `:memory:` where SQLite would open it.
 *
 * @param value The argument as typed.
 * @param options Its name, its command, and whether `-` is allowed.
 * @throws {UsageError} When `value` is blank, `-` where no stream is read, or
 * `:memory:` where SQLite opens the file.
 *
 * @example
 * ```ts
 * import { checkFileArgument } from "./file_argument.ts";
 * checkFileArgument("state.db", { command: "backup", name: "DEST", role: "output" });
 * let said = "";
 * try {
 *   checkFileArgument("-", { command: "backup", name: "DEST", role: "output" });
 * } catch (error) {
 *   said = (error as Error).message;
 * }
 * console.assert(said.startsWith('DEST "-" would be a file named "-" (backup writes no'));
 * ```
 */
export function checkFileArgument(value: string, options: FileArgumentOptions): void {
  const { command, name } = options;
  if (value.trim() === "") {
    throw new UsageError(`${name} is empty (${quotedValue(value)}): give a file name`, {
      command,
    });
  }
  if (!options.text && namesMemory(value)) throw memoryStoreError(name, value, command);
  if (value === "-" && !options.dashIsStdin) {
    const stream = options.role === "input"
      ? "reads no standard input"
      : "writes no standard output";
    throw new UsageError(
      `${name} "-" would be a file named "-" (${command} ${stream}): give a file name, ` +
        `or ./- for that file`,
      { command },
    );
  }
}
