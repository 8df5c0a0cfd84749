/**
 * The CLI's only contact with the process: arguments, output streams,
 * environment and exit. Everything else in `lib/cli/` takes an {@linkcode Io}.
 *
 * @module
 */
import process from "node:process";

/** Where a command reads and writes. Tests pass a recording implementation. */
export interface Io {
  /** Writes to standard output. */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /** True when standard output is a terminal. */
  readonly isTerminal: boolean;
  /** Reads an environment variable. */
  env(name: string): string | undefined;
}

/**
 * The real process streams.
 *
 * @returns An {@linkcode Io} over `process.stdout` and `process.stderr`.
 */
export function defaultIo(): Io {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    isTerminal: Boolean(process.stdout.isTTY),
    env: (name) => process.env[name],
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
 * Ends the process with `code` once pending output is flushed.
 *
 * @param code The exit code.
 */
export function exit(code: number): void {
  process.exitCode = code;
}
