/**
 * `hermes-state export`: sessions with their messages as JSON Lines (the
 * shape of `hermes sessions export`) or Markdown, streamed one session at a
 * time, to a file (written whole or not at all) or to standard output.
 *
 * @module
 */
import {
  closeSync,
  constants,
  createWriteStream,
  fsyncSync,
  lstatSync,
  open,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { once } from "node:events";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { type ExportPiece, readExportPieces } from "../../core/export_pieces.ts";
import type { Command, Context } from "../command.ts";
import { printJson } from "../json.ts";
import { plural } from "../../render/format.ts";
import { choiceOption, type ParsedArgs } from "../parse.ts";
import { Progress } from "../progress.ts";
import { resolveSession } from "../resolve.ts";
import { originOption } from "../origin.ts";
import { timeOption } from "../time_option.ts";
import { isDatabaseFile } from "../../files/same_file.ts";
import { outputPathProblem, writeFailureReason } from "../../files/output_path.ts";
import { keepReplacedFileMode } from "../../files/replaced_file.ts";
import { isSqliteFile } from "../sqlite_header.ts";
import { CommandError, InterruptedError, UsageError } from "../usage_error.ts";
import { exportTexts, replayed } from "../../web/export_stream.ts";
import { delay } from "../../core/delay.ts";
import { quotedValue } from "../../core/shown_value.ts";
import { visibleInline } from "../../render/transcript.ts";

const USAGE = `Usage: hermes-state export [options] [OUTPUT|-]

Write sessions with all their messages to OUTPUT, or to standard output
when OUTPUT is "-" or left out. JSON Lines (the default) is what
"hermes sessions export" writes: one session per line, its columns plus a
"messages" list, newest activity first; "hermes-state import" reads it back.
Markdown is a readable transcript per session; HTML is one standalone page
(styles embedded, no script) with every transcript. Sessions are written
one at a time, so memory stays flat however large the database; a file is
written whole or not at all (Ctrl-C removes the partial file); a link's
file is replaced and the link kept; a device or a pipe is written in place,
as the shell's > writes it. OUTPUT is
never the database or one of its -wal/-shm/-journal files, nor another
SQLite database unless --force is given.

Options:
  --session-id ID   Only this session (an id, a unique id prefix or a title)
  --source SOURCE   Only sessions of this source
  --since TIME      Only sessions started at or after TIME: a date
                    (2026-04-20), a date and time (2026-04-20 09:30), an
                    age (30m, 12h, 7d, 2w, 6mo, 1y) or Unix seconds
  --until TIME      Only sessions started before TIME
  --origin NAME     Only sessions synced from this origin (a PostgreSQL store;
                    see sync)
  --format FORMAT   "jsonl", "md" or "html" (default: by OUTPUT's name,
                    *.md and *.html, else jsonl; a *.gz name is compressed:
                    notes.md.gz is gzipped Markdown)
  --force           Write over OUTPUT even when it is an SQLite database
                    (never the database being exported)
  --json            Report the result as JSON (when writing to a file)
  --db PATH         The database file, or a postgres:// URL
  -h, --help        Show this help

Examples:
  hermes-state export backup.jsonl
  hermes-state export - --source telegram | gzip > telegram.jsonl.gz
  hermes-state export --since 7d --format md last-week.md
  hermes-state export --session-id 20260425 --format md notes.md
  hermes-state export --session-id "my project #3" --format html page.html
`;

/** Sessions (and writes) between two waits for standard output to drain. */
const DRAIN_EVERY = 16;

/** Characters written to standard output after which it is drained (a few chunks of messages). */
const DRAIN_CHARS = 16 * 1024 * 1024;

/** Where the records go: a temporary file renamed at the end, or standard output. */
interface Sink {
  write(text: string): Promise<void>;
  commit(): void | Promise<void>;
  abort(): void;
  /** What is left of the output when the run stops midway (said on Ctrl-C). */
  readonly leftBehind: string;
}

/**
 * Where an export to `output` is written, and how. A regular file, or none
 * yet, is written beside and renamed over it; a link is followed, so that
 * the file it leads to is replaced and the link stays. Anything else there
 * (a device such as `/dev/null`, a named pipe, the shell's `>(gzip > x.gz)`)
 * is written in place, as the shell's `>` writes it: a rename would put a
 * file where the device was.
 */
function exportTarget(output: string): { path: string; inPlace: boolean } {
  let found;
  try {
    found = statSync(output);
  } catch {
    // Nothing there, or a link to nothing: the file is made where the link leads.
    try {
      if (lstatSync(output).isSymbolicLink()) {
        return { path: resolve(dirname(output), readlinkSync(output)), inPlace: false };
      }
    } catch {
      // nothing at all there
    }
    return { path: output, inPlace: false };
  }
  if (!found.isFile()) return { path: output, inPlace: true };
  return { path: realpathSync(output), inPlace: false };
}

/**
 * Opens `path` to write, as `openSync` does, but off the main thread: a named
 * pipe's open waits for a reader, and Ctrl-C (`stopped`) must still end the
 * wait. A descriptor that comes after the stop is closed.
 */
function openWaiting(path: string, stopped: Promise<"SIGINT" | "SIGTERM">): Promise<number> {
  const opening = new Promise<number>((resolve, reject) =>
    open(path, "w", (error, fd) => error === null ? resolve(fd) : reject(error))
  );
  return Promise.race([
    opening,
    stopped.then((signal) => {
      opening.then(closeSync, () => {});
      // A reader that never blocks lets the waiting open finish, so that the process can end.
      try {
        closeSync(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK));
      } catch {
        // not a named pipe: its open does not wait
      }
      throw new InterruptedError(signal, "nothing was written");
    }),
  ]);
}

/** Writes straight into `path` (a device or a pipe): nothing to rename, nothing to remove. */
async function inPlaceSink(path: string, stopped: Promise<"SIGINT" | "SIGTERM">): Promise<Sink> {
  let fd: number;
  try {
    fd = await openWaiting(path, stopped);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    throw new CommandError(`Cannot write ${path}: ${writeFailureReason(error)}`, { cause: error });
  }
  const close = closerOf(fd);
  return {
    write(text) {
      writing(path, () => writeSync(fd, text));
      return Promise.resolve();
    },
    commit() {
      writing(path, close);
    },
    abort: close,
    leftBehind: `what reached ${path} so far is not a whole export`,
  };
}

/** Closes `fd` the first time it is called and does nothing after (an abort after a commit's close). */
function closerOf(fd: number): () => void {
  let open = true;
  return () => {
    if (open) closeSync(fd);
    open = false;
  };
}

/** Runs a file operation; its failure becomes a one-line {@linkcode CommandError}. */
function writing<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new CommandError(`Cannot write ${path}: ${writeFailureReason(error)}`, { cause: error });
  }
}

/**
 * A file named `*.gz`, gzip-compressed as it is written (`node:zlib`), to a
 * temporary name beside it renamed at the end: what `import` reads back.
 */
function gzipFileSink(path: string): Sink {
  const temp = tempBeside(path);
  const gzip = createGzip();
  const fd = openTemp(temp, path);
  // Kept open after the stream ends, to be synced to the disk before the rename.
  const file = createWriteStream(temp, { fd, autoClose: false });
  const close = closerOf(fd);
  let failed: unknown;
  const written = pipeline(gzip, file).catch((error) => {
    failed = error;
  });
  // A failure of the stream is told as a write's own, once the sink is next called.
  const check = () => {
    if (failed !== undefined) {
      writing(path, () => {
        throw failed;
      });
    }
  };
  return {
    async write(text) {
      check();
      if (!gzip.write(text)) await Promise.race([once(gzip, "drain"), written]);
      check();
    },
    async commit() {
      gzip.end();
      await written;
      check();
      writing(path, () => {
        fsyncSync(fd);
        close();
        renameSync(temp, path);
      });
    },
    abort() {
      gzip.destroy();
      file.destroy();
      close();
      rmSync(temp, { force: true });
    },
    leftBehind: "the partial output was removed",
  };
}

function fileSink(path: string): Sink {
  const temp = tempBeside(path);
  const fd = openTemp(temp, path);
  const close = closerOf(fd);
  return {
    write(text) {
      writing(path, () => writeSync(fd, text));
      return Promise.resolve();
    },
    commit() {
      writing(path, () => {
        fsyncSync(fd);
        close();
        renameSync(temp, path);
      });
    },
    abort() {
      close();
      rmSync(temp, { force: true });
    },
    leftBehind: "the partial output was removed",
  };
}

/**
 * Refuses an output that would destroy a database: the one being exported
 * (or its -wal, -shm, -journal, by any name), always; any other SQLite
 * file, unless `--force`. Refuses, too, a path no file can be written at (a
 * folder, a missing folder), before any session is read.
 */
function refuseOutput(output: string, dbPath: string, force: boolean): void {
  const problem = outputPathProblem(output);
  if (problem !== undefined) throw new CommandError(`Cannot write ${output}: ${problem}`);
  if (isDatabaseFile(output, dbPath)) {
    throw new CommandError(
      `Refusing to write the export over the database itself: ${output} (choose another OUTPUT)`,
    );
  }
  if (!force && statSync(output, { throwIfNoEntry: false })?.isFile() && isSqliteFile(output)) {
    throw new CommandError(
      `Refusing to write the export over an SQLite database: ${output} (give --force to replace it)`,
    );
  }
}

/**
 * Opens `temp`, the file an export to `path` is written in (`0600` for a new
 * `path`, else the mode, owner and group of the file it replaces), or fails
 * with a {@linkcode CommandError} leaving nothing behind.
 */
function openTemp(temp: string, path: string): number {
  const fd = writing(path, () => openSync(temp, "w", 0o600));
  try {
    writing(path, () => keepReplacedFileMode(fd, path));
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  return fd;
}

/** A temporary name beside `path`, apart from a concurrent export's to the same file. */
function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${Math.random().toString(36).slice(2, 10)}.tmp`);
}

function stdoutSink(ctx: Context): Sink {
  let written = 0;
  let undrained = 0;
  return {
    async write(text) {
      ctx.io.stdout(text);
      undrained += text.length;
      if (++written % DRAIN_EVERY === 0 || undrained >= DRAIN_CHARS) {
        undrained = 0;
        await ctx.io.drain();
      }
    },
    commit() {},
    abort() {},
    leftBehind: "the output written so far is not a whole export",
  };
}

/**
 * The format an output's name asks for when `--format` is not given: `.md`
 * Markdown, `.html` HTML, anything else (`.jsonl`, `-`) JSON Lines; a `.gz`
 * after the name's own ending only compresses it (`notes.md.gz` is Markdown).
 */
function formatOfName(output: string): (typeof FORMATS)[number] {
  const name = output.replace(/\.gz$/i, "");
  if (/\.(md|markdown)$/i.test(name)) return "md";
  if (/\.html?$/i.test(name)) return "html";
  return "jsonl";
}

/** The formats `--format` takes. */
const FORMATS = ["jsonl", "md", "html"] as const;

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const output = args.positionals[0] ?? "-";
  const format = choiceOption(args, "format", {
    choices: FORMATS,
    fallback: formatOfName(output),
    command: "export",
  });
  if (output.trim() === "") {
    throw new UsageError(
      `the output argument is empty (${
        quotedValue(output)
      }): give a file, or - for standard output`,
      { command: "export" },
    );
  }
  const wanted = args.string("session-id");
  const filter = ["source", "origin", "since", "until"].find((name) => args.has(name));
  if (wanted !== undefined && filter !== undefined) {
    throw new UsageError(`give either --session-id or --${filter}, not both`, {
      command: "export",
    });
  }
  const now = ctx.io.now();
  const since = timeOption(args, "since", { now, command: "export" });
  const until = timeOption(args, "until", { now, command: "export" });
  if (output !== "-") refuseOutput(output, ctx.dbPath.replace(/^sqlite:/, ""), args.flag("force"));
  const store = await ctx.openStore();
  // Each session read in one snapshot, held while its chunks are written: the command is
  // the connection's only user.
  const reading = { holdSnapshot: true };
  let pieces: AsyncIterableIterator<ExportPiece>;
  let first: IteratorResult<ExportPiece> | undefined;
  if (wanted !== undefined) {
    const id = await resolveSession(store, wanted, "export");
    pieces = readExportPieces(store, { id }, reading);
    first = await pieces.next();
    if (first.done === true) throw new CommandError(`Session '${wanted}' not found`);
  } else {
    const origin = await originOption(args, store);
    pieces = readExportPieces(store, {
      filter: {
        source: args.string("source") || null,
        startedAfter: since,
        startedBefore: until,
        ...(origin === undefined ? {} : { origin }),
      },
    }, reading);
  }
  // Listening first: a signal between creating the temporary file and
  // listening would end the process and leave the file behind.
  let interrupted: "SIGINT" | "SIGTERM" | undefined;
  let stop: (signal: "SIGINT" | "SIGTERM") => void = () => {};
  const stopped = new Promise<"SIGINT" | "SIGTERM">((resolve) => stop = resolve);
  const stopListening = ctx.io.onInterrupt?.((signal) => {
    interrupted = signal;
    stop(signal);
  });
  let sink: Sink;
  try {
    const target = output === "-" ? undefined : exportTarget(output);
    sink = target === undefined
      ? stdoutSink(ctx)
      : target.inPlace
      ? await inPlaceSink(target.path, stopped)
      : /\.gz$/i.test(target.path)
      ? gzipFileSink(target.path)
      : fileSink(target.path);
  } catch (error) {
    stopListening?.();
    await pieces.return?.();
    throw error;
  }
  const progress = new Progress(ctx.io, "Exported");
  let count = 0;
  try {
    const texts = exportTexts(
      first === undefined ? pieces : replayed(first, pieces),
      format,
      wanted ?? "hermes-state export",
    );
    // A session is written a chunk of messages at a time, however large it is.
    for await (const { text, sessionEnd } of texts) {
      await sink.write(text);
      if (sessionEnd) {
        progress.update(++count);
        // Lets timers and signal handlers run (a long export of a file has no other pause).
        if (count % DRAIN_EVERY === 0) await delay(0);
      }
      if (interrupted !== undefined) throw new InterruptedError(interrupted, sink.leftBehind);
    }
    await sink.commit();
  } catch (error) {
    sink.abort();
    throw error;
  } finally {
    stopListening?.();
    progress.done();
  }
  if (output !== "-") {
    if (ctx.json) printJson(ctx.io, { exported: count, output, format });
    else ctx.io.stdout(`Exported ${plural(count, "session")} to ${visibleInline(output)}\n`);
  }
  return 0;
}

/** The `export` command. */
export const exportCommand: Command = {
  name: "export",
  summary: "Write sessions as JSON Lines, Markdown or HTML",
  usage: USAGE,
  options: {
    "session-id": { type: "string", names: "sessions" },
    source: { type: "string", names: "sources" },
    since: { type: "string" },
    until: { type: "string" },
    origin: { type: "string", names: "origins" },
    format: { type: "string", choices: FORMATS },
    force: { type: "boolean" },
  },
  minPositionals: 0,
  maxPositionals: 1,
  positionalNames: "OUTPUT",
  run,
};
