/**
 * `main(argv, io)`: the whole CLI as a function of its arguments and its
 * streams. Global options, the command table, and exit codes: 0 success
 * (nothing found included), 1 failure, 2 usage error (with a "Try:" hint),
 * 130 / 143 for a run stopped by SIGINT / SIGTERM. A user's mistake gets one
 * line on standard error, never a stack trace, and never JSON.
 *
 * @module
 */
import { jsonLinesGivenAsDatabase } from "./not_a_database.ts";
import { shellWord } from "../core/shell_word.ts";
import { recoverCommand } from "../core/salvage_hint.ts";
import {
  NotStateDbError,
  OpenError,
  ReadonlyError,
  StorageError,
  TitleError,
  UnexportableIdError,
} from "../core/errors.ts";
import { lockedReason, lockGivenUp } from "./locked_file.ts";
import { chooseReadAccess, readsUnlocked } from "../sqlite/read_access.ts";
import { isPostgresTarget } from "../open_store.ts";
import { defaultDbPath } from "../core/paths.ts";
import type { Command } from "./command.ts";
import { COMMAND_TABLE, type CommandEntry, loadCommands } from "./command_table.ts";
import type { OpenContext } from "./context.ts";
import type { Io, Paged } from "./io.ts";
import { pagerOf } from "./pager.ts";
import { type OptionSpec, parseCommand } from "./parse.ts";
import { topUsage } from "./usage.ts";
import { CommandError, InterruptedError, UsageError } from "./usage_error.ts";
import { VERSION } from "../core/version.ts";
import { quotedArgument } from "./shown_argument.ts";
import { visibleControls } from "../render/transcript.ts";
import { memoryStoreError, namesMemory } from "./file_argument.ts";
import { clippedText, quotedValue } from "../core/shown_value.ts";

/** Options every command accepts. */
const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  db: { type: "string" },
  json: { type: "boolean" },
  "no-pager": { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

/** Errors whose message is meant for the user as it is. */
function isUserFacing(error: unknown): error is Error {
  return error instanceof CommandError || error instanceof OpenError ||
    error instanceof TitleError || error instanceof ReadonlyError ||
    error instanceof StorageError || error instanceof UnexportableIdError;
}

/** Global options given before the command name. */
interface Leading {
  db?: string;
  json: boolean;
  noPager: boolean;
  help: boolean;
  version: boolean;
  rest: string[];
}

function takeLeading(argv: readonly string[]): Leading {
  const out: Leading = { json: false, noPager: false, help: false, version: false, rest: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--json") out.json = true;
    else if (arg === "--no-pager") out.noPager = true;
    else if (arg === "--help" || arg === "-h") out.help = true;
    else if (arg === "--version" || arg === "-V") out.version = true;
    else if (arg.startsWith("--db=")) out.db = arg.slice(5);
    else if (arg === "--db") {
      const value = argv[i + 1];
      if (value === undefined || (value.startsWith("--") && value.length > 2)) {
        throw new UsageError("option --db needs a value");
      }
      out.db = value;
      i++;
    } else if (arg.startsWith("-") && arg !== "-") {
      throw new UsageError(`unknown option ${clippedText(arg.split("=")[0])}`);
    } else break;
  }
  out.rest = argv.slice(i);
  return out;
}

/** True when `--help`/`-h` appears before any `--`. */
function asksHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

/** Edits (insert, delete, replace, swap two neighbours) between two short words. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** The command a mistyped name most likely meant, if one is close. */
function suggestion(name: string): string | undefined {
  const typed = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const { name: candidate } of COMMAND_TABLE) {
    const d = candidate.startsWith(typed) && typed.length >= 2 ? 0 : distance(typed, candidate);
    if (best === undefined || d < best.distance) best = { name: candidate, distance: d };
  }
  return best !== undefined && best.distance <= Math.max(1, Math.floor(best.name.length / 3))
    ? best.name
    : undefined;
}

function findEntry(name: string): CommandEntry {
  const entry = COMMAND_TABLE.find((c) => c.name === name);
  if (entry === undefined) {
    const near = suggestion(name);
    throw new UsageError(
      `unknown command ${quotedArgument(name)}${
        near === undefined ? "" : `; did you mean "${near}"?`
      }`,
    );
  }
  return entry;
}

async function findCommand(name: string): Promise<Command> {
  return await findEntry(name).load();
}

/**
 * The Deno permission a refused call needed (`read`, `env`…), when `error`
 * is Deno refusing it: the CLI runs without `-A` or some `--allow-*`.
 */
function missingPermission(error: unknown): { flag: string; detail: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name !== "NotCapable" && error.name !== "PermissionDenied") return undefined;
  const kind = /Requires (\w+) access/.exec(error.message)?.[1];
  if (kind === undefined) return undefined;
  const detail = error.message.replace(/, run again with the --allow-\w+ flag$/, "");
  return { flag: `--allow-${kind}`, detail };
}

/** An environment variable, or `undefined` when it cannot be read (no env permission). */
function safeEnv(io: Io, name: string): string | undefined {
  try {
    return io.env(name);
  } catch {
    return undefined;
  }
}

/** The commands whose store is `--db` (the others name their files as arguments). */
const ON_DB = new Set([
  "list",
  "show",
  "search",
  "export",
  "import",
  "delete",
  "prune",
  "vacuum",
  "rename",
  "lineage",
  "stats",
  "usage",
  "migrate",
  "info",
  "origins",
  "serve",
]);

/** The one line for a condition that has its own wording in the CLI, or `undefined`. */
function conditionLine(
  error: unknown,
  command: string | undefined,
  dbPath: string | undefined,
): string | undefined {
  if (error instanceof NotStateDbError) {
    return `not a Hermes state.db (no ${error.missing} table): ${error.path}`;
  }
  if (lockGivenUp(error)) return lockedReason(error, dbPath ?? "the database");
  const jsonLines = jsonLinesGivenAsDatabase(error);
  if (jsonLines !== undefined) return jsonLines;
  // Read without locks (another user's file): the owner's checkpoint tore the read, most likely.
  if (
    error instanceof StorageError && error.kind === "corrupt" && dbPath !== undefined &&
    !isPostgresTarget(dbPath) && readWithoutLocks(dbPath)
  ) {
    return `${error.message}: ${dbPath} is read without locks (this user may not write it or its ` +
      `-shm), so its owner's Hermes may have written it during the read; run it again (as the ` +
      `owner or root it is read with locks), and "hermes-state --db ${
        shellWord(dbPath)
      } doctor" if it stays`;
  }
  // Damage found mid-read ("database disk image is malformed"): which file, and what to do.
  if (
    error instanceof StorageError && error.kind === "corrupt" && !(error instanceof OpenError) &&
    command !== undefined && ON_DB.has(command) && dbPath !== undefined &&
    !isPostgresTarget(dbPath)
  ) {
    return `${error.message}: ${dbPath} is damaged ("hermes-state --db ${
      shellWord(dbPath)
    } doctor" ` +
      `says where; "${recoverCommand(dbPath)}" saves what can still be read)`;
  }
  return undefined;
}

/** Whether the read-only commands read `path` without the locks that hold a read still. */
function readWithoutLocks(path: string): boolean {
  try {
    return readsUnlocked(chooseReadAccess(path), path);
  } catch {
    return false;
  }
}

function report(
  error: unknown,
  io: Io,
  command: string | undefined,
  dbPath: string | undefined,
): number {
  const permission = missingPermission(error);
  if (permission !== undefined) {
    io.stderr(
      `hermes-state: missing permission ${permission.flag} (${permission.detail}): ` +
        `run it as "deno run -A cli.ts"\n`,
    );
    return 1;
  }
  const prefix = `hermes-state${command === undefined ? "" : ` ${command}`}: `;
  if (error instanceof UsageError) {
    io.stderr(`${prefix}${visibleControls(error.message)}\n${visibleControls(error.hint)}\n`);
    return 2;
  }
  if (error instanceof InterruptedError) {
    io.stderr(`${prefix}${visibleControls(error.message)}\n`);
    return error.exitCode;
  }
  const line = conditionLine(error, command, dbPath);
  if (line !== undefined) {
    io.stderr(`hermes-state: ${visibleControls(line)}\n`);
    return 1;
  }
  if (isUserFacing(error)) {
    io.stderr(`hermes-state: ${visibleControls(error.message)}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr(`hermes-state: unexpected error: ${visibleControls(message)}\n`);
  if ((safeEnv(io, "HERMES_STATE_DEBUG") ?? "") !== "" && error instanceof Error) {
    io.stderr(`${error.stack ?? ""}\n`);
  } else {
    io.stderr("(set HERMES_STATE_DEBUG=1 to see where it happened)\n");
  }
  return 1;
}

/**
 * Runs the CLI.
 *
 * @param argv Arguments after the program name.
 * @param io Streams, environment and clock.
 * @returns The exit code: 0 success, 1 failure, 2 usage error, 130 / 143 interrupted.
 *
 * @example
 * ```ts ignore
 * const code = await main(["list", "--limit", "5"], defaultIo());
 * ```
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let command: string | undefined;
  let dbPath: string | undefined;
  let open: OpenContext | undefined;
  let stopClosing: (() => void) | undefined;
  let paged: Paged | undefined;
  try {
    const leading = takeLeading(argv);
    if (leading.version) {
      io.stdout(`hermes-state ${VERSION}\n`);
      return 0;
    }
    const [name, ...rest] = leading.rest;
    if (name === undefined) {
      const usage = topUsage(await loadCommands());
      if (leading.help) {
        io.stdout(usage);
        return 0;
      }
      io.stderr(usage);
      return 2;
    }
    if (name === "help") {
      if (rest.length === 0) io.stdout(topUsage(await loadCommands()));
      else io.stdout((await findCommand(rest[0])).usage);
      return 0;
    }
    const entry = findEntry(name);
    const cmd = await entry.load();
    command = cmd.name;
    if (leading.help || asksHelp(rest)) {
      io.stdout(cmd.usage);
      return 0;
    }
    const args = parseCommand({
      command: cmd.name,
      options: { ...GLOBAL_OPTIONS, ...cmd.options },
      minPositionals: cmd.minPositionals,
      maxPositionals: cmd.maxPositionals,
      positionalNames: cmd.positionalNames,
      dashWord: cmd.dashWord,
    }, rest);
    const fromEnv = io.env("HERMES_STATE_DB")?.trim() || undefined;
    dbPath = args.string("db") ?? leading.db ?? fromEnv ?? defaultDbPath();
    if (dbPath.trim() === "") throw new UsageError("--db needs a file path", { command });
    if (dbPath.startsWith("sqlite:") && dbPath.slice("sqlite:".length).trim() === "") {
      throw new UsageError(`--db ${quotedValue(dbPath)} names no file: give sqlite:PATH`, {
        command,
      });
    }
    if (dbPath === "-") {
      // Not a stream: a write command would make a database named "-".
      throw new UsageError(
        '--db "-": the database is a file or a postgres:// URL, never standard input or ' +
          'output (for a file named "-", give ./-)',
        { command },
      );
    }
    // SQLite opens a private database for this name, not a file: an import there said
    // "Imported" and kept nothing.
    if (namesMemory(dbPath)) throw memoryStoreError("--db", dbPath, command);
    if (dbPath.includes("\u0000")) {
      throw new UsageError(
        `--db ${quotedValue(dbPath)}: a file name cannot contain a NUL character`,
        { command },
      );
    }
    const { createContext } = await import("./context.ts");
    const json = leading.json || args.flag("json");
    const noPager = leading.noPager || args.flag("no-pager");
    const pager = noPager ? undefined : pagerOf(io, cmd.name, args);
    if (pager !== undefined) paged = await io.startPager?.(pager);
    open = createContext(paged?.io ?? io, { dbPath, json, access: entry.access });
    // Ended at once (`show --follow | head`, a second Ctrl-C): the stores are closed first,
    // so that a read leaves no -wal or -shm beside a file that had none.
    const opened = open;
    stopClosing = io.onAbruptExit?.(() => opened.closeAtOnce());
    return await cmd.run(args, open.ctx);
  } catch (error) {
    // The pager quit first: the error is then the last thing on the terminal.
    await paged?.end();
    return report(error, io, command, dbPath);
  } finally {
    stopClosing?.();
    await open?.close();
    await paged?.end();
  }
}
