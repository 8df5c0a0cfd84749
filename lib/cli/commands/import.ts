/**
 * `hermes-state import`: reads a JSON Lines export back. Idempotent: a
 * session already present is skipped (or replaced with `--replace`); each
 * session is written whole or not at all; a malformed line is reported with
 * its number and nothing of it is written.
 *
 * @module
 */
import { statSync } from "node:fs";
import type { ParentLink } from "../../core/transfer_options.ts";
import type { SessionStore } from "../../core/session_store.ts";
import type { Command, Context } from "../command.ts";
import { formatCount, oneLine, plural } from "../../render/format.ts";
import { checkJsonLines, inputLines, InvalidTextLineError, isGzipError } from "../jsonl_input.ts";
import { printJson } from "../json.ts";
import { visibleControls } from "../../render/transcript.ts";
import { writeFailureReason } from "../../files/output_path.ts";
import type { ParsedArgs } from "../parse.ts";
import { Progress } from "../progress.ts";
import { isDatabaseFile } from "../../files/same_file.ts";
import { CommandError, InterruptedError } from "../usage_error.ts";
import { checkFileArgument } from "../file_argument.ts";
import { LockPacer } from "../../sqlite/batches.ts";
import { renamedNote } from "../renamed_note.ts";
import { diskFullReason, isDiskFull } from "../../sqlite/disk_space.ts";
import { delay } from "../../core/delay.ts";
import { StorageError } from "../../core/storage_error.ts";
import { parseExportLine } from "../../core/exact_json.ts";
import { checkImportRecord } from "../../core/import_record.ts";
import { printableArgument } from "../shown_argument.ts";
import { truncate } from "../../render/width.ts";
import { lockedReason, type LockGivenUp, lockGivenUp } from "../locked_file.ts";
import { replaceAgain } from "../replace_again.ts";

const USAGE = `Usage: hermes-state import [options] FILE|-

Read a JSON Lines export (from "hermes-state export" or "hermes sessions
export") into the database, creating the file if needed; "-" reads standard
input; FILE may be a pipe (<(zcat backup.jsonl.gz)); a FILE ending in .gz
is decompressed. Sessions keep their ids, columns, timestamps and (when
free) message ids. A session already in the database is skipped, so
importing twice changes nothing; --replace rewrites it instead. Each
session is written whole or not at all: a malformed line is reported with
its line number, nothing of it is written, and the other lines are still
imported (the exit code is then 1); after 20 bad lines the import stops. A
file that is not JSON Lines (a database, a compressed stream) is refused. A
child is linked to its parent as soon as both are in, also when the child
was imported by an earlier run: after an interrupted import, run it again.

Options:
  --replace     Replace sessions that are already present
  --json        Report the result as JSON
  --db PATH     The database file (created when missing)
  -h, --help    Show this help

Examples:
  hermes-state import backup.jsonl
  hermes-state import backup.jsonl.gz
  hermes-state export - --db old.db | hermes-state import - --db new.db
`;

/** Checks that FILE can be read (before the database is created for it). */
function checkInput(source: string, dbPath: string): void {
  if (source === "-") return;
  // Reading the database through a descriptor of ours would drop the locks
  // of the connection this command holds on it when the descriptor closes.
  if (isDatabaseFile(source, dbPath)) {
    throw new CommandError(
      `Cannot import ${source}: it is the database itself (or one of its files)`,
    );
  }
  if (source.includes("\u0000")) {
    throw new CommandError(
      `Cannot read ${printableArgument(source)}: a file name cannot contain a NUL character`,
    );
  }
  let readable: boolean;
  try {
    // A pipe (`import <(zcat backup.jsonl.gz)`, a FIFO) or a device streams as a file does.
    const stat = statSync(source);
    readable = stat.isFile() || stat.isFIFO() || stat.isCharacterDevice();
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === "ENOENT"
      ? "no such file"
      : code === "ENAMETOOLONG"
      ? "the name is too long"
      : writeFailureReason(error);
    throw new CommandError(`Cannot read ${printableArgument(source)}: ${reason}`, { cause: error });
  }
  if (!readable) throw new CommandError(`Cannot read ${printableArgument(source)}: not a file`);
}

/** A line's failure in one short, printable line (JSON.parse quotes the line itself). */
function reason(error: unknown): string {
  const text = error instanceof SyntaxError
    ? `not valid JSON (${error.message})`
    : error instanceof Error
    ? error.message
    : String(error);
  return truncate(visibleControls(oneLine(text)), 160);
}

/** What the read of a line gives way to once Ctrl-C or SIGTERM came. */
const INTERRUPTED = Symbol("interrupted");

/** After this many bad lines the input is taken for something else than an export. */
const MAX_FAILURES = 20;

/** What an import has counted, as `--json` prints it. */
type Counts = Record<
  "imported" | "replaced" | "skipped" | "messages" | "failed" | "linked" | "waiting",
  number
>;

/**
 * Where a lock given up on stopped an import: `open`, the database before
 * any line went in; `line`, the session of line `line`, not written; `links`,
 * after that session went in, before the children read earlier were linked
 * to it; `end`, after the last line, linking the children whose parent the
 * run did not import.
 */
interface LockStop {
  readonly error: LockGivenUp;
  readonly at: "open" | "line" | "links" | "end";
  /** The line of `line` and `links`; for `open`, the first line that is JSON (none when empty). */
  readonly line: number | null;
}

/**
 * What the same import run again does: with `--replace` it writes again
 * every session this run wrote, before it goes on where this one stopped.
 */
function sameImportAgain(replace: boolean, written: number): string {
  if (!replace || written === 0) return "the same import again goes on";
  return replaceAgain("import", written);
}

/**
 * The first line a lock stop left out (`--json`'s `not_imported_from_line`):
 * the refused line, the one after a line that went in, `null` when every
 * line was read.
 */
function firstLineLeftOut(stop: LockStop): number | null {
  if (stop.at === "line" || stop.at === "open") return stop.line;
  return stop.at === "links" ? (stop.line ?? 0) + 1 : null;
}

/**
 * The error of an import a lock stopped: what is in, why it stopped, and
 * what to run once the lock is free.
 */
function lockStopError(
  stop: LockStop,
  counts: Counts,
  path: string,
  replace: boolean,
): CommandError {
  const why = lockedReason(stop.error, path);
  const written = counts.imported + counts.replaced;
  const again = sameImportAgain(replace, written);
  const text = stop.at === "open"
    ? `nothing was imported: ${why} (once it is free, run the same import again)`
    : stop.at === "line"
    ? `Cannot import line ${stop.line}: ${why} (every session before it is in, each whole; ${again})`
    : stop.at === "links"
    ? `the session of line ${stop.line} is in, its children read before it not yet linked to it: ` +
      `${why} (every session up to it is in, each whole; once it is free, ${again}, linking them)`
    : `every line was read (${plural(written, "session")} written, ${
      formatCount(counts.skipped)
    } skipped already present, each whole), but ${plural(counts.waiting, "session")} naming a ` +
      `parent not in this file ${counts.waiting === 1 ? "is" : "are"} not linked: ${why}; once ` +
      `it is free, the same import again${
        replace ? " without --replace (which would write every session again)" : ""
      } links those whose parent is in by then`;
  return new CommandError(text, { cause: stop.error });
}

/** Children whose parent was not in the database when they were read, by parent. */
class PendingLinks {
  readonly #byParent = new Map<string, ParentLink[]>();

  add(link: ParentLink): void {
    const list = this.#byParent.get(link.parentId) ?? [];
    list.push(link);
    this.#byParent.set(link.parentId, list);
  }

  /** The links that wait for `parentId`, removed from the set. */
  take(parentId: string): ParentLink[] {
    const list = this.#byParent.get(parentId) ?? [];
    this.#byParent.delete(parentId);
    return list;
  }

  /** Every link still waiting, removed from the set. */
  takeAll(): ParentLink[] {
    const all = [...this.#byParent.values()].flat();
    this.#byParent.clear();
    return all;
  }
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const source = args.positionals[0];
  checkFileArgument(source, {
    command: "import",
    name: "FILE",
    role: "input",
    dashIsStdin: true,
    text: true,
  });
  checkInput(source, ctx.dbPath);
  const lines = inputLines(ctx.io, source)[Symbol.asyncIterator]();
  const first = await firstLine(lines, source);
  if (first !== undefined) checkJsonLines(first.text, source);
  // Opened (created when missing) at the first line that is JSON: an input none of whose
  // lines is (a text file, a log) leaves the database as it was, or not there at all.
  let store: SessionStore | undefined;
  const opened = async () => store ??= await ctx.openStore({ create: true });
  const replace = args.flag("replace");
  // A lock given up on stops the run (every later write would wait as long): what is in stays.
  let stop: LockStop | undefined;
  /** Opens the database; a lock given up on there stops the run before `line`. */
  const openedUnlessLocked = async (line: number | null) => {
    try {
      return await opened();
    } catch (error) {
      if (!lockGivenUp(error)) throw error;
      stop = { error, at: "open", line };
      return undefined;
    }
  };
  const counts: Counts = {
    imported: 0,
    replaced: 0,
    skipped: 0,
    messages: 0,
    failed: 0,
    linked: 0,
    waiting: 0,
  };
  const failures: { line: number; error: string }[] = [];
  /** Sessions imported under another title, the record's being taken. */
  const renamed: { id: string; title: string }[] = [];
  const pending = new PendingLinks();
  const dropped = new Set<string>();
  const progress = new Progress(ctx.io, "Imported");
  const pacer = new LockPacer();
  let number = first?.number ?? 0;
  let stoppedAt: number | undefined;
  // Ctrl-C or SIGTERM stops between two sessions (each is written whole), and says how far.
  let interrupted: "SIGINT" | "SIGTERM" | undefined;
  let wake = () => {};
  const interruption = new Promise<typeof INTERRUPTED>((resolve) => {
    wake = () => resolve(INTERRUPTED);
  });
  const stopListening = ctx.io.onInterrupt?.((signal) => {
    interrupted = signal;
    wake();
  });
  const lineFailed = (error: unknown) => {
    counts.failed++;
    failures.push({ line: number, error: reason(error) });
    if (!ctx.json) ctx.io.stderr(`hermes-state: import: line ${number}: ${reason(error)}\n`);
  };
  const importLine = async (line: string) => {
    let record: unknown;
    try {
      record = parseExportLine(line);
    } catch (error) {
      lineFailed(error);
      return;
    }
    try {
      // Before the database is opened: an input none of whose lines is a session record leaves
      // an older file as it was (opening upgrades its schema).
      checkImportRecord(record);
    } catch (error) {
      lineFailed(error);
      return;
    }
    // Outside the line's try: a database that cannot be opened ends the import.
    const target = await openedUnlessLocked(number);
    if (target === undefined) return;
    let written = false;
    /** Links taken for the session just written, back to waiting if a lock stops their write. */
    let taken: ParentLink[] = [];
    try {
      const result = await target.importSession(record, { replace });
      written = true;
      counts[result.outcome]++;
      counts.messages += result.messages;
      if (result.relinked) counts.linked++;
      for (const column of result.droppedColumns) dropped.add(column);
      if (result.renamedTo !== null) {
        renamed.push({ id: result.id, title: result.renamedTo });
        if (!ctx.json) {
          ctx.io.stderr(`hermes-state: import: line ${number}: ${renamedNote(result)}\n`);
        }
      }
      if (result.deferredParent !== null) {
        pending.add({ id: result.id, parentId: result.deferredParent });
      }
      // Children read before their parent are linked as soon as it is in,
      // so an interrupted run loses no link it could make.
      if (result.outcome !== "skipped") {
        taken = pending.take(result.id);
        counts.linked += await target.restoreParentLinks(taken);
        taken = [];
      }
      // Leave the lock free now and then, so that other writers get in.
      const pause = pacer.due();
      if (pause > 0) await delay(pause);
    } catch (error) {
      if (isDiskFull(error, target.target)) {
        // Every line after this one would fail the same way: one line, and stop.
        throw new CommandError(
          `Cannot import line ${number}: ${diskFullReason(target.target)} (nothing of that line ` +
            `was written; ${
              formatCount(counts.imported + counts.replaced)
            } sessions before it were)`,
          { cause: error },
        );
      }
      if (error instanceof StorageError && (error.kind === "io" || error.kind === "readonly")) {
        // The server lost, a disk failing, a store that takes no writes (a standby, a role that
        // may only read): every line after it would fail so, each taken for a bad line of the
        // input. One line, and stop; the same import again goes on.
        const written = counts.imported + counts.replaced;
        throw new CommandError(
          `Cannot import line ${number}: ${reason(error)} (${
            plural(written, "session")
          } before it in; ${sameImportAgain(replace, written)})`,
          { cause: error },
        );
      }
      if (lockGivenUp(error)) {
        // Every line after this one would wait as long and fail the same way: one line, and stop.
        for (const link of taken) pending.add(link);
        stop = { error, at: written ? "links" : "line", line: number };
        return;
      }
      lineFailed(error);
    }
    progress.update(counts.imported + counts.replaced + counts.skipped);
  };
  // A .gz input damaged part way (cut short, say): what was read before the damage is in, and
  // said, as a run stopped any other way says it.
  let damaged: CommandError | undefined;
  /** A line's read was left unfinished by Ctrl-C. */
  let abandoned = false;
  try {
    if (first !== undefined) await importLine(first.text);
    while (counts.failed < MAX_FAILURES && interrupted === undefined && stop === undefined) {
      let next: IteratorResult<string> | typeof INTERRUPTED;
      const reading = readNext(lines, source);
      try {
        // A line may never come (a terminal, a stalled pipe): Ctrl-C does not wait for it.
        next = await Promise.race([reading, interruption]);
      } catch (error) {
        if (!(error instanceof DamagedInputError)) throw error;
        damaged = error;
        break;
      }
      if (next === INTERRUPTED) {
        // The read is let go, and standard input closed so that the process can end.
        reading.catch(() => {});
        abandoned = true;
        if (source === "-") ctx.io.stdin().destroy();
        break;
      }
      if (next.done) break;
      number++;
      if (next.value.trim() === "") continue;
      await importLine(next.value);
    }
    if (counts.failed >= MAX_FAILURES) stoppedAt = number;
  } finally {
    stopListening?.();
    progress.done();
    // Behind a read that may never end, the reader's end would wait as long.
    if (abandoned) void lines.return?.().catch(() => {});
    else await lines.return?.();
  }
  // An empty input makes the database as before (an export of an empty store, piped in).
  if (first === undefined) await openedUnlessLocked(null);
  const waiting = pending.takeAll();
  let linkedLate = 0;
  // A child waits only for a line that was imported, so the database is open then; after a
  // lock stop the links stay waiting (their write would wait as long).
  if (waiting.length > 0 && stop === undefined) {
    try {
      linkedLate = await (await opened()).restoreParentLinks(waiting);
    } catch (error) {
      if (!lockGivenUp(error)) throw error;
      stop = { error, at: "end", line: null };
    }
  }
  counts.linked += linkedLate;
  counts.waiting = waiting.length - linkedLate;
  const droppedColumns = [...dropped];
  if (droppedColumns.length > 0 && !ctx.json) {
    ctx.io.stderr(
      `hermes-state: import: this file has no column for ${droppedColumns.join(", ")}: ` +
        "those values were not kept\n",
    );
  }
  if (ctx.json) {
    printJson(ctx.io, {
      ...counts,
      dropped_columns: droppedColumns,
      renamed,
      failures,
      stopped_at_line: stoppedAt ?? null,
      // Only when the input was damaged part way: what was wrong with it.
      ...(damaged === undefined ? {} : { input_error: damaged.message }),
      // Only when a lock stopped the run: the first line not in (null: every line was read).
      ...(stop === undefined ? {} : { not_imported_from_line: firstLineLeftOut(stop) }),
    });
  } else if (stop === undefined) {
    report(ctx, counts, { stoppedAt, interrupted: interrupted !== undefined });
  }
  if (stop !== undefined) {
    const path = (store as SessionStore | undefined)?.target ?? ctx.dbPath;
    throw lockStopError(stop, counts, path, replace);
  }
  if (damaged !== undefined) {
    throw new CommandError(
      `${damaged.message} after line ${formatCount(number)}: every session before it is in, ` +
        "each whole",
      { cause: damaged },
    );
  }
  if (interrupted !== undefined) {
    const written = counts.imported + counts.replaced;
    const again = replace && written > 0
      ? sameImportAgain(replace, written)
      : "the same import again goes on from there (what is in is skipped)";
    throw new InterruptedError(
      interrupted,
      `stopped after line ${formatCount(number)}: every session before it is in, each whole; ` +
        again,
    );
  }
  return counts.failed > 0 ? 1 : 0;
}

function report(
  ctx: Context,
  counts: Counts,
  end: { stoppedAt: number | undefined; interrupted: boolean },
): void {
  const { stoppedAt } = end;
  const parts = [`Imported ${plural(counts.imported, "session")}`];
  if (counts.replaced > 0) parts.push(`replaced ${formatCount(counts.replaced)}`);
  parts.push(`skipped ${formatCount(counts.skipped)} already present`);
  let text = `${parts.join(", ")} (${plural(counts.messages, "message")} written`;
  if (counts.linked > 0) text += `, ${plural(counts.linked, "parent link")} restored`;
  text += ")";
  if (counts.failed > 0) text += `; ${plural(counts.failed, "line")} failed`;
  ctx.io.stdout(`${text}.\n`);
  if (stoppedAt !== undefined) {
    ctx.io.stderr(
      `hermes-state: import: stopped at line ${formatCount(stoppedAt)} after ${MAX_FAILURES} ` +
        `bad lines; is this a JSON Lines export?\n`,
    );
  }
  if (counts.waiting > 0) {
    // Stopped part way, the parents may be further on in the file: the next run links them.
    const what = end.interrupted
      ? "not in the database yet (the rest of the file may hold it): the same import again links them"
      : "not in the database: import the parent, then this file again, to link them";
    ctx.io.stderr(
      `hermes-state: import: ${plural(counts.waiting, "session")} ` +
        `${counts.waiting === 1 ? "names" : "name"} a parent that is ${what}\n`,
    );
  }
}

/** The first non-empty line and its number, or `undefined` for empty input. */
async function firstLine(
  lines: AsyncIterator<string>,
  source: string,
): Promise<{ text: string; number: number } | undefined> {
  let number = 0;
  for (;;) {
    let next: IteratorResult<string>;
    try {
      next = await readNext(lines, source);
    } catch (error) {
      // Binary data (a database, a compressed stream) is said as such by the first line's check.
      const invalid = error instanceof DamagedInputError ? error.cause : undefined;
      if (invalid instanceof InvalidTextLineError && invalid.text.trim() !== "") {
        checkJsonLines(invalid.text, source);
      }
      throw error;
    }
    if (next.done) return undefined;
    number++;
    const text = number === 1 ? next.value.replace(/^\uFEFF/, "") : next.value;
    if (text.trim() !== "") return { text, number };
  }
}

/** An input that cannot be read on: a `.gz` not gzip or damaged part way, or text not UTF-8. */
class DamagedInputError extends CommandError {}

/** The next line; a damaged `.gz` input, or a line not UTF-8, is one clear error. */
async function readNext(
  lines: AsyncIterator<string>,
  source: string,
): Promise<IteratorResult<string>> {
  try {
    return await lines.next();
  } catch (error) {
    if (error instanceof InvalidTextLineError) {
      // Decoded, each byte that is not UTF-8 would have become U+FFFD without a word.
      throw new DamagedInputError(
        `Cannot import ${source}: line ${error.line} is not valid UTF-8 text (another ` +
          "encoding, such as Latin-1?): convert the file to UTF-8 first",
        { cause: error },
      );
    }
    if (!isGzipError(error)) throw error;
    throw new DamagedInputError(
      `Cannot import ${source}: not a valid gzip file (${(error as Error).message})`,
      { cause: error },
    );
  }
}

/** The `import` command. */
export const importCommand: Command = {
  name: "import",
  summary: "Read a JSON Lines export back",
  usage: USAGE,
  options: { replace: { type: "boolean" } },
  minPositionals: 1,
  maxPositionals: 1,
  positionalNames: "FILE (or - for standard input)",
  run,
};
