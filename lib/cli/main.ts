/**
 * `main(argv, io)`: the whole CLI as a pure function of its arguments.
 *
 * @module
 */
import type { Io } from "./io.ts";

/**
 * Runs the CLI.
 *
 * @param argv Arguments after the program name.
 * @param io Output streams and environment.
 * @returns The exit code: 0 success, 1 failure, 2 usage error.
 */
export function main(argv: readonly string[], io: Io): Promise<number> {
  io.stderr(`hermes-state: not implemented yet: ${argv.join(" ")}\n`);
  return Promise.resolve(1);
}
