/**
 * Reading a point in time from the command line (`--since`, `--until`): a
 * local date, a local date and time, an age (`30m` or `30min` minutes, `12h`,
 * `7d`, `2w`, `6mo` months of 30 days, `1y` years of 365 days), or Unix
 * seconds.
 *
 * @module
 */
import type { ParsedArgs } from "./parse.ts";
import { UsageError } from "./usage_error.ts";
import { quotedArgument } from "./shown_argument.ts";
import { localTimeZone, zonedSeconds } from "../core/time_zone.ts";

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const AGE = /^(\d+)(min|mo|[mhdwy])$/;
const SECONDS = /^\d{9,}(?:\.\d+)?$/;
const UNIT_SECONDS: Record<string, number> = {
  m: 60,
  min: 60,
  h: 3600,
  d: 86400,
  w: 7 * 86400,
  mo: 30 * 86400,
  y: 365 * 86400,
};

/**
 * Parses a point in time.
 *
 * @param text What the user typed.
 * @param now The current time, in Unix seconds (for ages).
 * @returns Unix seconds, or `undefined` when the text is none of the forms.
 *
 * @example
 * ```ts
 * import { parseTime } from "./time_option.ts";
 * console.assert(parseTime("2d", 200_000) === 200_000 - 2 * 86400);
 * console.assert(parseTime("1776675600", 0) === 1776675600);
 * console.assert(parseTime("yesterday-ish", 0) === undefined);
 * ```
 */
export function parseTime(text: string, now: number): number | undefined {
  const value = text.trim();
  const age = AGE.exec(value);
  // Digits past what a number holds (Infinity) are no time: the stores refused them with an
  // unexpected error where a usage error was due.
  if (age) return finiteOrNone(now - Number(age[1]) * UNIT_SECONDS[age[2]]);
  if (SECONDS.test(value)) return finiteOrNone(Number(value));
  const date = DATE.exec(value);
  if (!date) return undefined;
  const [year, month, day, hour, minute, second] = date.slice(1).map((p) => Number(p ?? 0));
  const wall = new Date(0);
  wall.setUTCFullYear(year, month - 1, day);
  wall.setUTCHours(hour, minute, second);
  if (
    wall.getUTCFullYear() !== year || wall.getUTCMonth() !== month - 1 ||
    wall.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59
  ) return undefined;
  // As usage reads its days: a wall time the clocks skipped is the moment they skipped it (the
  // runtime's Date read it with the offset before, an hour early, so 01:30 fell before 01:00).
  return zonedSeconds(localTimeZone(), wall.getTime());
}

/** `seconds`, or `undefined` when it is not a finite number. */
function finiteOrNone(seconds: number): number | undefined {
  return Number.isFinite(seconds) ? seconds : undefined;
}

/**
 * Reads a time option.
 *
 * @param args The parsed arguments.
 * @param name The long name (`since`, `until`).
 * @param options The current time and the command for the hint.
 * @returns Unix seconds, or `null` when the option is not given.
 * @throws {UsageError} When the value is not a time.
 *
 * @example
 * ```ts
 * import { parseCommand } from "./parse.ts";
 * import { timeOption } from "./time_option.ts";
 * const args = parseCommand({ options: { since: { type: "string" } } }, ["--since", "1h"]);
 * console.assert(timeOption(args, "since", { now: 7200 }) === 3600);
 * ```
 */
export function timeOption(
  args: ParsedArgs,
  name: string,
  options: { now: number; command?: string },
): number | null {
  const text = args.string(name);
  if (text === undefined) return null;
  const value = parseTime(text, options.now);
  if (value === undefined) {
    throw new UsageError(
      `--${name} must be a date (2026-04-20), a date and time (2026-04-20 09:30), ` +
        `an age (30m, 12h, 7d, 2w, 6mo, 1y) or Unix seconds (9 digits or more), got ${
          quotedArgument(text)
        }`,
      { command: options.command },
    );
  }
  return value;
}
