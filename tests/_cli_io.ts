/**
 * CLI test helpers: a recording {@linkcode Io} and `runCli(argv, options)`,
 * which runs `main` and returns the exit code with everything printed.
 */
import { chmodSync } from "node:fs";
import { PassThrough } from "node:stream";
import type { Io } from "../lib/cli/io.ts";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture, tempDbPath } from "./_helpers.ts";

/** One hour after the last message of the v11 fixture. */
export const FIXTURE_NOW = 1777453504.408011 + 3600;

/** Fixture ids by alias (see the fixtures README). */
export const V11 = {
  compressionRoot: "20260420_090000_994beb",
  compressionMid: "20260421_090025_2299b6",
  compressionTip: "20260425_090019_d38f1d",
  delegateChild: "20260420_090634_d257d2",
  branchParent: "20260423_090000_538b31",
  branchChild: "20260423_090351_421b30",
  kitchenSink: "20260422_090717_50093a",
  toolPaperclip: "20260422_090509_eb927d",
  telegramZh: "20260420_091917_04ecdfdc",
  oldCli: "20251221_090000_9738df",
  live: "20260429_090322_3762ca",
} as const;

/** How the recording Io behaves. */
export interface IoOptions {
  /** The clock, in Unix seconds. */
  now?: number | (() => number);
  /** Standard input, as one string. */
  stdin?: string;
  /** Environment variables. */
  env?: Record<string, string>;
  /** Standard output is a terminal. */
  isTerminal?: boolean;
  /** Standard error is a terminal. */
  stderrIsTerminal?: boolean;
  /** The terminal's width in columns. */
  columns?: number;
  /** The local time zone (default UTC, whatever the machine's). */
  timeZone?: string;
}

/** An Io that records what is written. */
export interface RecordingIo extends Io {
  /** Everything written to standard output. */
  out: string;
  /** Everything written to standard error. */
  err: string;
  /** How many times `drain` was awaited. */
  drains: number;
}

/** Creates a recording Io. */
export function recordingIo(options: IoOptions = {}): RecordingIo {
  const now = options.now ?? FIXTURE_NOW;
  const input = options.stdin ?? "";
  let position = 0;
  const io: RecordingIo = {
    out: "",
    err: "",
    drains: 0,
    stdout(text) {
      io.out += text;
    },
    stderr(text) {
      io.err += text;
    },
    drain() {
      io.drains++;
      return Promise.resolve();
    },
    isTerminal: options.isTerminal ?? false,
    stderrIsTerminal: options.stderrIsTerminal ?? false,
    columns: options.columns,
    env: (name) => options.env?.[name],
    now: typeof now === "function" ? now : () => now,
    timeZone: options.timeZone ?? "UTC",
    readLine() {
      if (position >= input.length) return Promise.resolve(null);
      const end = input.indexOf("\n", position);
      const line = input.slice(position, end < 0 ? input.length : end);
      position = end < 0 ? input.length : end + 1;
      return Promise.resolve(line);
    },
    stdin() {
      const stream = new PassThrough();
      stream.end(input);
      return stream;
    },
  };
  return io;
}

/** A recording Io whose Ctrl-C the test sends, for the commands that follow (`--follow`). */
export interface InterruptibleIo extends RecordingIo {
  /** Whether a command listens for Ctrl-C now. */
  readonly listening: boolean;
  /** Sends SIGINT to the command that listens; throws when none does. */
  interrupt(): void;
}

/** Creates a recording Io that takes a command's Ctrl-C listener. */
export function interruptibleIo(options: IoOptions = {}): InterruptibleIo {
  let listener: ((signal: "SIGINT" | "SIGTERM") => void) | undefined;
  const io = recordingIo(options) as InterruptibleIo;
  io.onInterrupt = (fn) => {
    listener = fn;
    return () => void (listener = undefined);
  };
  Object.defineProperty(io, "listening", { get: () => listener !== undefined });
  io.interrupt = () => {
    if (listener === undefined) throw new Error("No command listens for Ctrl-C");
    listener("SIGINT");
  };
  return io;
}

/** What one run printed and returned. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
  io: RecordingIo;
}

/** Runs the CLI in-process with a recording Io. */
export async function runCli(argv: readonly string[], options: IoOptions = {}): Promise<CliRun> {
  const io = recordingIo(options);
  const code = await main(argv, io);
  return { code, out: io.out, err: io.err, io };
}

/** A writable copy of the v11 fixture (the fixtures are read-only files). */
export function v11Copy(): string {
  const path = copyFixture("hermes-v11.db");
  chmodSync(path, 0o600);
  return path;
}

/** A new database at a fixed clock, filled by `fill`; returns its path. */
export async function buildDb(
  fill: (db: SessionDB, clock: { now: number }) => void,
  options: { start?: number } = {},
): Promise<string> {
  const path = tempDbPath();
  const clock = { now: options.start ?? FIXTURE_NOW - 7200 };
  const db = await SessionDB.open({ path, clock: () => clock.now });
  try {
    fill(db, clock);
  } finally {
    db.close();
  }
  return path;
}

/** Opens `path` with the fixture clock, runs `fn`, closes. */
export async function withDb<T>(path: string, fn: (db: SessionDB) => T): Promise<T> {
  const db = await SessionDB.open({ path, clock: () => FIXTURE_NOW });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
