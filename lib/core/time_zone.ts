/**
 * Local days for the usage reports: a time zone's offsets from UTC over a
 * period, read from the runtime's `Intl`, and the SQL that adds them to a
 * Unix time so that an engine's UTC date functions give the local date.
 * SQLite has no time zones, and PostgreSQL's may differ from the runtime's:
 * both engines take the offsets from here, so they group alike.
 *
 * @module
 */

/** A time zone's offset from `from` (Unix seconds; `null`: since always) until the next span. */
export interface OffsetSpan {
  /** Where the span starts, Unix seconds, or `null` for the first span. */
  readonly from: number | null;
  /** Seconds east of UTC (`28800` in `Asia/Shanghai`, `-18000` in New York's winter). */
  readonly offset: number;
}

/** Offsets are looked for between these times only (1970 and 2100); beyond, the nearest holds. */
const EARLIEST = 0;
const LATEST = 4_102_444_800;

/** Samples a week apart: no zone has changed its offset twice within a week. */
const STEP = 7 * 86400;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      era: "short",
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/**
 * Checks a time zone name and returns its canonical spelling.
 *
 * @param action What the caller does, for the message (`report usage`).
 * @param timeZone An IANA name (`Asia/Shanghai`, `America/New_York`) or `UTC`.
 * @returns The name as `Intl` spells it (`asia/shanghai` gives `Asia/Shanghai`).
 * @throws {RangeError} When the runtime knows no such zone, naming the value.
 *
 * @example
 * ```ts
 * import { checkTimeZone } from "./time_zone.ts";
 * console.assert(checkTimeZone("report usage", "asia/shanghai") === "Asia/Shanghai");
 * ```
 */
export function checkTimeZone(action: string, timeZone: unknown): string {
  if (typeof timeZone === "string" && timeZone.trim() !== "") {
    try {
      return formatter(timeZone.trim()).resolvedOptions().timeZone;
    } catch {
      // Not a zone: the error below names it.
    }
  }
  throw new RangeError(
    `Cannot ${action}: timeZone must be a time zone like UTC, Asia/Shanghai or America/New_York: current value is ${
      JSON.stringify(timeZone)
    }`,
  );
}

/**
 * The time zone of the running process (what `Date` shows), or `UTC` when
 * the runtime does not say.
 *
 * @returns An IANA name.
 */
export function localTimeZone(): string {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone === undefined || zone === "" || zone === "Etc/Unknown" ? "UTC" : zone;
}

/**
 * A zone's offset from UTC at a time.
 *
 * @param timeZone A name {@linkcode checkTimeZone} accepted.
 * @param seconds Unix seconds.
 * @returns Seconds east of UTC.
 *
 * @example
 * ```ts
 * import { utcOffset } from "./time_zone.ts";
 * console.assert(utcOffset("Asia/Kolkata", 1_777_000_000) === 19800);
 * ```
 */
export function utcOffset(timeZone: string, seconds: number): number {
  const at = Math.floor(seconds);
  const fields: Record<string, string> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(at * 1000))) {
    fields[part.type] = part.value;
  }
  // Years before 1 AD are counted backwards with an era: 1 BC is year 0.
  const year = fields.era === "BC" ? 1 - Number(fields.year) : Number(fields.year);
  const wall = new Date(0);
  wall.setUTCFullYear(year, Number(fields.month) - 1, Number(fields.day));
  wall.setUTCHours(Number(fields.hour), Number(fields.minute), Number(fields.second));
  return Math.round(wall.getTime() / 1000 - at);
}

/**
 * The time a zone's clock shows a wall time: `2026-04-01 00:00` in
 * `Asia/Shanghai` is `2026-03-31T16:00:00Z`. A wall time that a change of
 * offset skips or repeats gives one of the times near it.
 *
 * @param timeZone A name {@linkcode checkTimeZone} accepted.
 * @param wallMs The wall time as if it were UTC, in milliseconds (`Date.UTC(2026, 3, 1)`).
 * @returns Unix seconds.
 *
 * @example
 * ```ts
 * import { zonedSeconds } from "./time_zone.ts";
 * console.assert(zonedSeconds("Asia/Shanghai", Date.UTC(2026, 3, 1)) === Date.UTC(2026, 2, 31, 16) / 1000);
 * ```
 */
export function zonedSeconds(timeZone: string, wallMs: number): number {
  const wall = wallMs / 1000;
  const guess = wall - utcOffset(timeZone, wall);
  return wall - utcOffset(timeZone, guess);
}

/**
 * A zone's offsets between two times: one span per offset, the first from
 * always, each change found to the second. Changes before 1970 and after
 * 2100 are not looked for: the nearest span holds there.
 *
 * @param timeZone A name {@linkcode checkTimeZone} accepted.
 * @param from The earliest time that matters, Unix seconds.
 * @param to The latest time that matters, Unix seconds.
 * @returns At least one span, in time order.
 *
 * @example
 * ```ts
 * import { offsetSpans } from "./time_zone.ts";
 * const year = offsetSpans("America/New_York", Date.UTC(2026, 0) / 1000, Date.UTC(2027, 0) / 1000);
 * console.assert(year.length === 3 && year[1].from === Date.UTC(2026, 2, 8, 7) / 1000);
 * ```
 */
export function offsetSpans(timeZone: string, from: number, to: number): OffsetSpan[] {
  const start = Math.min(Math.max(Math.floor(from), EARLIEST), LATEST);
  const end = Math.min(Math.max(Math.ceil(to), start), LATEST);
  const spans: OffsetSpan[] = [{ from: null, offset: utcOffset(timeZone, start) }];
  let before = start;
  while (before < end) {
    const after = Math.min(before + STEP, end);
    const offset = utcOffset(timeZone, after);
    if (offset !== spans[spans.length - 1].offset) {
      // The change lies in (before, after]: find its first second.
      let low = before;
      let high = after;
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        if (utcOffset(timeZone, middle) === offset) high = middle;
        else low = middle;
      }
      spans.push({ from: high, offset });
    }
    before = after;
  }
  return spans;
}

/**
 * SQL for a Unix-time column shifted into local time by a zone's spans
 * (numbers only, never input), ready for an engine's UTC date functions.
 *
 * @param column The column or expression (`started_at`).
 * @param spans From {@linkcode offsetSpans}.
 * @returns `started_at` for UTC, `(started_at + 28800)`, or a `CASE` over the changes.
 *
 * @example
 * ```ts
 * import { shiftedSql } from "./time_zone.ts";
 * console.assert(shiftedSql("t", [{ from: null, offset: 3600 }]) === "(t + 3600)");
 * ```
 */
export function shiftedSql(column: string, spans: readonly OffsetSpan[]): string {
  const whole = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new RangeError(`Not a whole second: ${n}`);
    return String(n);
  };
  if (spans.length === 1) {
    return spans[0].offset === 0 ? column : `(${column} + ${whole(spans[0].offset)})`;
  }
  const cases = spans.slice(1).map((span, i) =>
    `WHEN ${column} < ${whole(span.from ?? 0)} THEN ${whole(spans[i].offset)}`
  );
  return `(${column} + CASE ${cases.join(" ")} ELSE ${whole(spans[spans.length - 1].offset)} END)`;
}
