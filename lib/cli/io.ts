/**
 * The CLI's only contact with the process: arguments, standard streams,
 * environment, clock and exit. Everything else in `lib/cli/` takes an
 * {@linkcode Io}, so tests run the whole CLI with a recording one.
 *
 * @module
 */
import process from "node:process";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout } from "node:timers";
import type { Readable } from "node:stream";
import { wallClockSeconds } from "../core/wall_clock.ts";
import { writeFailureReason } from "../files/output_path.ts";

/** Where a command reads and writes. Tests pass a recording implementation. */
export interface Io {
  /** Writes to standard output. */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /** Resolves once standard output has taken what was written (backpressure for streams). */
  drain(): Promise<void>;
  /** True when standard output is a terminal. */
  readonly isTerminal: boolean;
  /** True when standard error is a terminal (progress lines go there). */
  readonly stderrIsTerminal: boolean;
  /** The width of the terminal standard output is, in columns; `undefined` when not a terminal. */
  readonly columns?: number;
  /** Reads an environment variable. */
  env(name: string): string | undefined;
  /** The current time in seconds since the epoch (a float). */
  now(): number;
  /**
   * The time zone whose days `usage` counts by default (an IANA name or an
   * offset); the process's own (`$TZ`) when left out.
   */
  readonly timeZone?: string;
  /** Reads one line of standard input (without its line end); `null` at the end of input. */
  readLine(): Promise<string | null>;
  /**
   * Standard input as a stream of bytes, for `import -`, which splits it
   * into lines itself (with the line-length limit that a file gets).
   */
  stdin(): Readable;
  /**
   * Calls `listener` on SIGINT or SIGTERM instead of ending the process, so
   * a command can stop and remove what it was writing; a second signal ends
   * the process at once. Returns the function that stops listening. Left
   * out by an Io that has no signals (tests).
   */
  onInterrupt?(listener: (signal: "SIGINT" | "SIGTERM") => void): () => void;
  /**
   * Calls `listener` just before the process ends at once, without going
   * back to the command: standard output's reader is gone (EPIPE, as in
   * `show --follow | head`), or a second signal came. The listener must do
   * its work before it returns (closing SQLite connections, so that a read
   * leaves no -wal or -shm behind). Returns the function that stops
   * listening. Left out by an Io that never ends the process (tests).
   */
  onAbruptExit?(listener: () => void): () => void;
  /**
   * Starts `command` (a pager, with `LESS=FRX` unless `LESS` is set) and
   * sends standard output through it from here on: the paged streams are
   * `io` of the answer. Resolves `undefined` when it cannot be started (not
   * found), and the output goes to the terminal as it is. The pager quit
   * before the output ended ends the process as a closed standard output
   * does; Ctrl-C ends the pager's input, and the process once the user has
   * quit it (130). Left out by an Io that starts no process (tests).
   */
  startPager?(command: string): Promise<Paged | undefined>;
}

/** Standard output going through a pager ({@linkcode Io.startPager}). */
export interface Paged {
  /** The streams, standard output going to the pager. */
  readonly io: Io;
  /** Ends the pager's input and resolves once the user has quit it. */
  end(): Promise<void>;
}

/** Reads one chunk of a paused stream; `null` at its end. */
function nextChunk(stream: Readable): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const done = () => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      stream.pause();
    };
    const onData = (chunk: unknown) => {
      done();
      resolve(String(chunk));
    };
    const onEnd = () => {
      done();
      resolve(null);
    };
    const onError = (error: unknown) => {
      done();
      reject(error);
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
    stream.resume();
  });
}

/**
 * The longest answer a question reads: what follows on a longer line is
 * skipped. Without a bound, an endless line (`cat /dev/zero | hermes-state
 * delete ID`) was gathered whole, searched again for its end at each chunk.
 */
const MAX_ANSWER_LENGTH = 4096;

/**
 * A line reader over a stream that keeps what follows a line for the next
 * call; a line longer than {@linkcode MAX_ANSWER_LENGTH} is cut there, and
 * the rest of it skipped.
 */
function lineReader(stream: Readable): () => Promise<string | null> {
  let buffer = "";
  let ended = false;
  let skipping = false;
  return async () => {
    while (true) {
      const end = buffer.indexOf("\n");
      if (skipping) {
        buffer = end >= 0 ? buffer.slice(end + 1) : "";
        skipping = end < 0;
        if (skipping && ended) return null;
        if (!skipping) continue;
      } else if (end >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, "");
        buffer = buffer.slice(end + 1);
        return line;
      } else if (buffer.length > MAX_ANSWER_LENGTH) {
        const line = buffer.slice(0, MAX_ANSWER_LENGTH);
        buffer = "";
        skipping = true;
        return line;
      } else if (ended) {
        const rest = buffer;
        buffer = "";
        return rest === "" ? null : rest;
      }
      const chunk = await nextChunk(stream);
      if (chunk === null) ended = true;
      else buffer += chunk;
    }
  };
}

/**
 * The real process: standard streams, environment and system clock.
 *
 * @returns An {@linkcode Io} over `process.stdin`, `process.stdout` and `process.stderr`.
 */
export function defaultIo(): Io {
  const exitListeners = new Set<() => void>();
  const exitNow = (code: number | string | undefined): never => {
    for (const listener of [...exitListeners]) {
      try {
        listener();
      } catch {
        // The process ends anyway; the other listeners still run.
      }
    }
    return process.exit(code);
  };
  // `hermes-state export - | head` closes the pipe early: end quietly, as cat does. Any other
  // failure (a full disk under `export - > file`) is said in one line. Node and Bun report it
  // as the stream's event, Deno by throwing from the write.
  const stdoutFailed = (error: unknown): never => {
    if ((error as { code?: string } | null)?.code === "EPIPE") {
      return exitNow(process.exitCode ?? 0);
    }
    process.stderr.write(
      `hermes-state: Cannot write standard output: ${writeFailureReason(error)}\n`,
    );
    return exitNow(1);
  };
  process.stdout.on("error", stdoutFailed);
  let readLine: (() => Promise<string | null>) | undefined;
  const io: Io = {
    stdout: (text) => {
      try {
        process.stdout.write(text);
      } catch (error) {
        stdoutFailed(error);
      }
    },
    stderr: (text) => void process.stderr.write(text),
    drain: async () => {
      if ((process.stdout as { writableNeedDrain?: boolean }).writableNeedDrain) {
        await once(process.stdout, "drain");
      }
    },
    isTerminal: Boolean(process.stdout.isTTY),
    stderrIsTerminal: Boolean(process.stderr.isTTY),
    get columns() {
      return process.stdout.isTTY ? process.stdout.columns : undefined;
    },
    env: (name) => process.env[name],
    now: wallClockSeconds,
    readLine: () => {
      if (readLine === undefined) {
        process.stdin.setEncoding("utf8");
        readLine = lineReader(process.stdin);
      }
      return readLine();
    },
    stdin: () => process.stdin,
    onInterrupt: (listener) => {
      let seen = false;
      const handler = (signal: "SIGINT" | "SIGTERM") => {
        if (seen) exitNow(signal === "SIGINT" ? 130 : 143);
        seen = true;
        listener(signal);
      };
      const signals = (["SIGINT", "SIGTERM"] as const).filter((signal) => {
        try {
          process.on(signal, handler);
          return true;
        } catch {
          return false; // Deno on Windows listens to SIGINT only
        }
      });
      return () => {
        for (const signal of signals) process.off(signal, handler);
      };
    },
    onAbruptExit: (listener) => {
      exitListeners.add(listener);
      return () => void exitListeners.delete(listener);
    },
    startPager: process.platform === "win32"
      ? undefined
      : (command) => startPager(command, io, exitNow),
  };
  return io;
}

/**
 * Starts `command` as a pager: a plain name (`less`, `/usr/bin/most`)
 * directly, so that one not found is known, anything else through `sh -c`
 * as `git` runs it.
 */
async function startPager(
  command: string,
  io: Io,
  exitNow: (code: number | string | undefined) => never,
): Promise<Paged | undefined> {
  const env = { ...process.env };
  env.LESS ??= "FRX";
  env.LV ??= "-c";
  const stdio: ["pipe", "inherit", "inherit"] = ["pipe", "inherit", "inherit"];
  const child = /^[\w./+-]+$/.test(command)
    ? spawn(command, [], { stdio, env })
    : spawn("sh", ["-c", command], { stdio, env });
  const started = await new Promise<boolean>((resolve) => {
    child.once("spawn", () => resolve(true));
    child.once("error", () => resolve(false));
  });
  const input = child.stdin;
  if (!started || input === null) return undefined;
  const quit = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let interrupted = false;
  let ending = false;
  input.on("error", (error: { code?: string }) => {
    // Output the pager no longer takes once the command is done: the run ends as it would.
    if (ending) return;
    // The user quit the pager before the output ended: end quietly, as with `| head`.
    if (error?.code === "EPIPE" || interrupted) exitNow(process.exitCode ?? 0);
    throw error;
  });
  // Ctrl-C reaches the pager too, which then shows what it has; this process ends once it is quit.
  const onInterrupt = () => {
    interrupted = true;
    input.end();
    void quit.then(() => exitNow(130));
  };
  process.on("SIGINT", onInterrupt);
  const paged: Io = {
    ...io,
    stdout: (text) => {
      if (!interrupted) input.write(text);
    },
    drain: async () => {
      if (!interrupted && input.writableNeedDrain) await once(input, "drain");
    },
  };
  return {
    io: paged,
    end: async () => {
      ending = true;
      input.end();
      await quit;
      process.off("SIGINT", onInterrupt);
    },
  };
}

/**
 * The command-line arguments after the program name.
 *
 * @returns The arguments.
 */
export function getArgs(): string[] {
  return process.argv.slice(2);
}

/**
 * Ends the process with `code` once pending output is flushed; after a
 * signal (130, 143), a second later at most, whatever is still pending.
 *
 * @param code The exit code.
 */
export function exit(code: number): void {
  process.exitCode = code;
  // A run a signal stopped ends even if a read of standard input is still pending, which
  // Deno cannot cancel (import - waiting for a line): a second after, if it has not ended.
  if (code === 130 || code === 143) setTimeout(() => process.exit(code), 1000).unref();
}
