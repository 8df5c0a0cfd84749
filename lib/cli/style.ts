/**
 * Colour for terminal output: only when standard output is a terminal,
 * never when `NO_COLOR` is set (to anything but the empty string) or
 * `TERM=dumb`. Without colour every function returns its text unchanged.
 *
 * @module
 */
import type { Io } from "./io.ts";

/**
 * Decides whether output to `io` gets colour.
 *
 * @param io The streams and environment.
 * @returns True on a terminal without `NO_COLOR` and with a capable `TERM`.
 *
 * @example
 * ```ts
 * import { colourWanted } from "./style.ts";
 * const io = { isTerminal: true, env: (name: string) => (name === "NO_COLOR" ? "1" : undefined) };
 * console.assert(colourWanted(io) === false);
 * ```
 */
export function colourWanted(io: Pick<Io, "isTerminal" | "env">): boolean {
  if (!io.isTerminal) return false;
  if ((io.env("NO_COLOR") ?? "") !== "") return false;
  return !dumbTerminal(io);
}

/**
 * Whether the terminal says it can do no more than print (`TERM=dumb`, as
 * Emacs's shell does): no colour, no redrawn status line, no pager.
 *
 * @param io The environment.
 * @returns True for `TERM=dumb`.
 *
 * @example
 * ```ts
 * import { dumbTerminal } from "./style.ts";
 * console.assert(dumbTerminal({ env: (name: string) => (name === "TERM" ? "dumb" : undefined) }));
 * ```
 */
export function dumbTerminal(io: Pick<Io, "env">): boolean {
  return io.env("TERM") === "dumb";
}
