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
  return io.env("TERM") !== "dumb";
}
