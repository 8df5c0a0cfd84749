/**
 * Paging, as `git` and `psql` page: the text a reading command prints to a
 * terminal goes through a pager (`less` unless `HERMES_STATE_PAGER` or
 * `PAGER` names another), which `LESS=FRX` has end at once when it fits on
 * one screen. `--no-pager`, an empty pager, `cat`, output that is not a
 * terminal, a terminal that cannot page (`TERM=dumb`: Emacs's shell) and
 * `show --follow` print as before.
 *
 * The commands page text only once they have read it: none holds a read
 * transaction while the pager waits for the user (`show` reads a page of
 * messages, then prints it), so paging never keeps a writer's checkpoint
 * waiting.
 *
 * @module
 */
import type { Io } from "./io.ts";
import type { ParsedArgs } from "./parse.ts";
import { dumbTerminal } from "./style.ts";

/** The commands whose output to a terminal is paged: those that print what they read. */
const PAGED = new Set(["list", "show", "search", "lineage", "stats", "usage"]);

/**
 * The pager this run's output goes through, or `undefined` when it is
 * printed as it is.
 *
 * @param io The streams (a pager only for a terminal, where `io` can start one).
 * @param command The command's name.
 * @param args Its parsed arguments (`show --follow`; `--no-pager` is the caller's, with the
 *   other global options).
 * @returns The pager's command line, for the shell.
 *
 * @example
 * ```ts ignore
 * const pager = pagerOf(io, "show", args); // "less" on a terminal, by default
 * ```
 */
export function pagerOf(io: Io, command: string, args: ParsedArgs): string | undefined {
  if (!io.isTerminal || io.startPager === undefined || !PAGED.has(command)) return undefined;
  if (dumbTerminal(io) || (command === "show" && args.has("follow"))) return undefined;
  const named = io.env("HERMES_STATE_PAGER") ?? io.env("PAGER") ?? "less";
  const pager = named.trim();
  return pager === "" || pager === "cat" ? undefined : pager;
}
