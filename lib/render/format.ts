/**
 * Text helpers for terminal output: one-line text, relative and local
 * times, numbers, money, byte sizes and aligned columns (widths from
 * `width.ts`). Pure functions; no colour (see `style.ts`).
 *
 * @module
 */
import { groupedInteger } from "../core/grouped_digits.ts";
import { storedText } from "./stored_text.ts";
import { displayWidth } from "./width.ts";

/**
 * Text on one line: every whitespace run (newlines included) becomes one
 * space, and the ends are trimmed.
 *
 * @param text The text (a BLOB: its bytes read as UTF-8, `stored_text.ts`).
 * @returns One line.
 *
 * @example
 * ```ts
 * import { oneLine } from "./format.ts";
 * console.assert(oneLine(" a\n\n b ") === "a b");
 * ```
 */
export function oneLine(text: string | Uint8Array): string {
  return storedText(text).replace(/\s+/gu, " ").trim();
}

function two(n: number): string {
  return String(n).padStart(2, "0");
}

/**
 * A local date, `YYYY-MM-DD`.
 *
 * @param seconds Unix seconds.
 * @returns The date in the local time zone.
 *
 * @example
 * ```ts
 * import { formatDate } from "./format.ts";
 * console.assert(/^\d{4}-\d\d-\d\d$/.test(formatDate(1776675600)));
 * ```
 */
export function formatDate(seconds: number): string {
  const d = dateOf(seconds);
  if (d === undefined) return "?";
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

/**
 * The `Date` of `seconds`, or `undefined` when it names no time: a file may
 * hold any text in a time column (SQLite keeps `'yesterday'` in a REAL column
 * as text), which printed `NaN-NaN-NaN`.
 */
function dateOf(seconds: unknown): Date | undefined {
  if (typeof seconds !== "number" && typeof seconds !== "bigint") return undefined;
  const d = new Date(Number(seconds) * 1000);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/**
 * A local date and time, `YYYY-MM-DD HH:MM:SS` (`HH:MM` with
 * `minutes: true`). Built from its parts, never cut to a length: a time in
 * milliseconds that another writer stored reads as the year 58899, whose
 * date is longer.
 *
 * @param seconds Unix seconds.
 * @param options `minutes: true` drops the seconds.
 * @returns The date and time in the local time zone.
 *
 * @example
 * ```ts
 * import { formatDateTime } from "./format.ts";
 * console.assert(formatDateTime(1776675600).length === 19);
 * console.assert(formatDateTime(1776675600, { minutes: true }).length === 16);
 * ```
 */
export function formatDateTime(seconds: number, options: { minutes?: boolean } = {}): string {
  const d = dateOf(seconds);
  if (d === undefined) return "?";
  const minutes = `${formatDate(seconds)} ${two(d.getHours())}:${two(d.getMinutes())}`;
  return options.minutes ? minutes : `${minutes}:${two(d.getSeconds())}`;
}

/**
 * A UTC date and time, `YYYY-MM-DD HH:MM:SS UTC`, for exports read
 * anywhere. The fraction of a second is cut, never rounded up: a start at
 * 23:59:59.9996 stays on its day. A year past 9999 (a time in milliseconds
 * another writer stored) is written whole (`+058217-07-06 11:35:23 UTC`).
 *
 * @param seconds Unix seconds.
 * @returns The text, or `undefined` when `seconds` names no time.
 *
 * @example
 * ```ts
 * import { formatUtc } from "./format.ts";
 * console.assert(formatUtc(1775001599.9996) === "2026-03-31 23:59:59 UTC");
 * ```
 */
export function formatUtc(seconds: unknown): string | undefined {
  const date = new Date(typeof seconds === "number" ? Math.floor(seconds * 1000) : NaN);
  if (Number.isNaN(date.getTime())) return undefined;
  return `${date.toISOString().replace(/\.\d{3}Z$/, "").replace("T", " ")} UTC`;
}

/**
 * How long ago, the way `hermes sessions list` says it: `just now`,
 * `5m ago`, `3h ago`, `yesterday`, `4d ago`, then the local date.
 *
 * @param seconds Unix seconds; 0 or missing gives `?`.
 * @param now The current time in Unix seconds.
 * @returns The relative time.
 *
 * @example
 * ```ts
 * import { relativeTime } from "./format.ts";
 * console.assert(relativeTime(1000, 1000 + 7200) === "2h ago");
 * ```
 */
export function relativeTime(seconds: number | null | undefined, now: number): string {
  if (!seconds || dateOf(seconds) === undefined) return "?";
  const delta = now - seconds;
  if (delta < 60) return "just now";
  if (delta < 3600) return `${Math.floor(delta / 60)}m ago`;
  if (delta < 86400) return `${Math.floor(delta / 3600)}h ago`;
  if (delta < 172800) return "yesterday";
  if (delta < 604800) return `${Math.floor(delta / 86400)}d ago`;
  return formatDate(seconds);
}

/**
 * A local date and time followed by how long ago it was, when that is
 * within a week: `2026-04-25 09:00:19 (3h ago)`; older times show the date
 * only once.
 *
 * @param seconds Unix seconds.
 * @param now The current time in Unix seconds.
 * @param options `minutes: true` drops the seconds.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { formatWhen } from "./format.ts";
 * console.assert(formatWhen(1000, 1000 + 7200).endsWith(" (2h ago)"));
 * ```
 */
export function formatWhen(
  seconds: number,
  now: number,
  options: { minutes?: boolean } = {},
): string {
  if (dateOf(seconds) === undefined) return "?";
  const absolute = formatDateTime(seconds, options);
  const relative = relativeTime(seconds, now);
  return /^\d{4}-/.test(relative) ? absolute : `${absolute} (${relative})`;
}

/**
 * A whole number with thousands separators: `12,345`; a `bigint` with
 * every digit.
 *
 * @param n The number.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { formatCount } from "./format.ts";
 * console.assert(formatCount(1234567) === "1,234,567");
 * ```
 */
export function formatCount(n: number | bigint | null | undefined): string {
  // A bigint (an exact read's integer beyond 2^53) keeps every digit.
  if (typeof n === "bigint") return groupedInteger(n);
  const value = Number(n ?? 0);
  // Text a file holds in a count column ('many'): no number to show.
  return Number.isFinite(value) ? groupedInteger(value) : "?";
}

/**
 * Dollars, one format everywhere: two decimals (`$0.29`, `$1.77`,
 * `$1,234.50`), four only below a cent (`$0.0042`), `<$0.0001` for less
 * than four show (not `$0.0000`, which hid it as `$0.00` would), `$0.00`
 * for nothing, `—` when unknown. No float noise.
 *
 * @param usd The amount, or `null`.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { formatCost } from "./format.ts";
 * console.assert(formatCost(0.2899999) === "$0.29" && formatCost(0.0042) === "$0.0042");
 * console.assert(formatCost(3.9264851999999997) === "$3.93" && formatCost(null) === "—");
 * console.assert(formatCost(0.0000042) === "<$0.0001");
 * ```
 */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "—";
  const sign = usd < 0 ? "-" : "";
  const abs = Math.abs(usd);
  if (abs > 0 && abs < 0.00005) return `${sign}<$0.0001`;
  if (abs > 0 && abs < 0.005) return `${sign}$${abs.toFixed(4)}`;
  // From 1e21 on, toFixed writes an exponent ("1e+21"), which has no cents to split off.
  if (abs >= 1e21) return `${sign}$${abs}`;
  const [whole, cents] = abs.toFixed(2).split(".");
  return `${sign}$${formatCount(Number(whole))}.${cents}`;
}

/**
 * A cost without binary float noise (sums of prices give
 * `3.9264851999999997`): rounded to ten decimals, far below a cent.
 *
 * @param usd The amount, or `null`.
 * @returns The amount, rounded; `null` stays `null`.
 *
 * @example
 * ```ts
 * import { tidyCost } from "./format.ts";
 * console.assert(tidyCost(3.9264851999999997) === 3.9264852 && tidyCost(null) === null);
 * ```
 */
export function tidyCost(usd: number | null): number | null {
  if (usd === null || !Number.isFinite(usd)) return usd;
  return Number(usd.toFixed(10));
}

/**
 * A count with its noun, singular for exactly one: `1 hit`, `4 hits`,
 * `1,204 sessions`.
 *
 * @param count The count.
 * @param noun The singular noun.
 * @param plural The plural, when not `noun + "s"`.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { plural } from "./format.ts";
 * console.assert(plural(1, "day") === "1 day" && plural(2, "day") === "2 days");
 * ```
 */
export function plural(count: number, noun: string, plural = `${noun}s`): string {
  return `${formatCount(count)} ${count === 1 ? noun : plural}`;
}

/**
 * A byte size: `512 B`, `4.0 KiB`, `1.2 MiB`, `3.4 GiB`.
 *
 * @param bytes The size.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { formatBytes } from "./format.ts";
 * console.assert(formatBytes(4096) === "4.0 KiB" && formatBytes(1048575) === "1.0 MiB");
 * ```
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  // What one decimal would show as 1024.0 is the next unit's 1.0.
  while (value >= 1023.95 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Lines of text aligned in columns by display width; the last column is
 * not padded.
 *
 * @param rows The cells, row by row.
 * @param options The gap between columns, and which columns (by index) are
 *   right-aligned (numbers).
 * @returns One string per row.
 *
 * @example
 * ```ts
 * import { alignColumns } from "./format.ts";
 * const lines = alignColumns([["a", "1"], ["bbb", "2"]]);
 * console.assert(lines[0] === "a    1" && lines[1] === "bbb  2");
 * ```
 */
export function alignColumns(
  rows: readonly (readonly string[])[],
  options: { gap?: number; right?: readonly number[] } = {},
): string[] {
  const gap = " ".repeat(options.gap ?? 2);
  const right = new Set(options.right ?? []);
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell)));
  }
  return rows.map((row) =>
    row.map((cell, i) => {
      const pad = " ".repeat(Math.max(0, widths[i] - displayWidth(cell)));
      if (right.has(i)) return pad + cell;
      return i === row.length - 1 ? cell : cell + pad;
    }).join(gap).trimEnd()
  );
}
