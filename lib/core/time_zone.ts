/**
 * Local days for the usage reports: a time zone's offsets from UTC over a
 * period, read from the runtime's `Intl`, and the SQL that adds them to a
 * Unix time so that an engine's UTC date functions give the local date.
 * SQLite has no time zones, and PostgreSQL's may differ from the runtime's:
 * both engines take the offsets from here, so they group alike.
 *
 * @module
 */
import { quotedValue } from "./shown_value.ts";

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

/**
 * Samples two days apart: the shortest offset of a zone's history lasted
 * just under seven days (Brazil's Recife, October 2000), so two samples
 * fall in any span.
 */
const STEP = 2 * 86400;

/** How many formatters, and how many zone-years of changes, are kept (a server sees many zones). */
const FORMATTERS_KEPT = 64;
const YEARS_KEPT = 4096;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Changes of offset of a zone in a year: `${zone}\n${year}` → the changes in (its start, its end]. */
const changesByYear = new Map<string, OffsetSpan[]>();

/** Remembers `value` under `key` in `map`, forgetting the oldest entry when `map` is full. */
function keep<V>(map: Map<string, V>, key: string, value: V, limit: number): V {
  if (map.size >= limit) map.delete(map.keys().next().value!);
  map.set(key, value);
  return value;
}

function newFormatter(timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-US", {
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
}

function formatter(timeZone: string): Intl.DateTimeFormat {
  return formatters.get(timeZone) ??
    keep(formatters, timeZone, newFormatter(timeZone), FORMATTERS_KEPT);
}

/**
 * Checks a time zone name and returns its spelling: `Intl`'s when it is
 * the same name in another case (`asia/shanghai` gives `Asia/Shanghai`),
 * else the name as given (`Asia/Kolkata`, which some runtimes call
 * `Asia/Calcutta`). A fixed offset (`+05:30`) is a zone too.
 *
 * @param action What the caller does, for the message (`report usage`).
 * @param timeZone An IANA name (`Asia/Shanghai`, `America/New_York`), `UTC` or an offset.
 * @returns The name, trimmed.
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
    const name = timeZone.trim();
    let canonical: string | undefined;
    try {
      // Not through the cache: every spelling of a name would stay in it.
      canonical = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      // Not a zone: the error below names it.
    }
    if (canonical !== undefined) {
      return canonical.toLowerCase() === name.toLowerCase() ? canonical : name;
    }
  }
  throw new RangeError(
    `Cannot ${action}: timeZone must be a time zone like UTC, Asia/Shanghai or America/New_York: current value is ${
      quotedValue(timeZone)
    }`,
  );
}

/**
 * The time zone of the running process (what `Date` shows): its IANA name,
 * or, when the runtime names none (a POSIX `TZ=EST+5`), its offset now
 * (`-05:00`, without the changes such a `TZ` may describe).
 *
 * @returns A name {@linkcode checkTimeZone} accepts.
 */
export function localTimeZone(): string {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone !== undefined && zone !== "" && zone !== "Etc/Unknown") return zone;
  const east = -new Date().getTimezoneOffset();
  if (east === 0) return "UTC";
  const hours = String(Math.floor(Math.abs(east) / 60)).padStart(2, "0");
  const minutes = String(Math.abs(east) % 60).padStart(2, "0");
  return `${east < 0 ? "-" : "+"}${hours}:${minutes}`;
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
 * The first time a zone's clock shows a wall time: `2026-04-01 00:00` in
 * `Asia/Shanghai` is `2026-03-31T16:00:00Z`. A wall time shown twice (clocks
 * set back) gives the first; one the clocks skipped gives the moment they
 * skipped it (`2026-09-06 00:00` in `America/Santiago`: 01:00 that day).
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
  // The offsets a day either side: the wall time is one of theirs, or falls in the gap between.
  const before = utcOffset(timeZone, wall - 86400);
  const after = utcOffset(timeZone, wall + 86400);
  const shown = [wall - before, wall - after].filter((t) => t + utcOffset(timeZone, t) === wall);
  if (shown.length > 0) return Math.min(...shown);
  if (after <= before) return wall - after;
  // Skipped: the change lies in (wall - after, wall - before].
  return changeAt(timeZone, Math.floor(wall - after), Math.ceil(wall - before), after);
}

/** The first second in (low, high] at which a zone's offset is `offset` (it is at `high`, not at `low`). */
function changeAt(timeZone: string, low: number, high: number, offset: number): number {
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (utcOffset(timeZone, middle) === offset) high = middle;
    else low = middle;
  }
  return high;
}

/** The changes of a zone's offset in (start, end], each found to the second. */
function changesBetween(timeZone: string, start: number, end: number): OffsetSpan[] {
  const changes: OffsetSpan[] = [];
  let before = start;
  let offset = utcOffset(timeZone, start);
  while (before < end) {
    const after = Math.min(before + STEP, end);
    const next = utcOffset(timeZone, after);
    if (next !== offset) {
      changes.push({ from: changeAt(timeZone, before, after, next), offset: next });
      offset = next;
    }
    before = after;
  }
  return changes;
}

/** The changes of a zone's offset in a UTC year (after its first second, to the next year's). */
function changesInYear(timeZone: string, year: number): OffsetSpan[] {
  const key = `${timeZone}\n${year}`;
  return changesByYear.get(key) ?? keep(
    changesByYear,
    key,
    changesBetween(timeZone, Date.UTC(year, 0, 1) / 1000, Date.UTC(year + 1, 0, 1) / 1000),
    YEARS_KEPT,
  );
}

/**
 * A zone's offsets between two times: one span per offset, the first from
 * always, each change found to the second (and remembered, by zone and
 * year). Changes before 1970 and after 2100 are not looked for: the nearest
 * span holds there.
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
  const first = new Date(start * 1000).getUTCFullYear();
  const last = new Date(end * 1000).getUTCFullYear();
  for (let year = first; year <= last; year++) {
    for (const change of changesInYear(timeZone, year)) {
      const at = change.from!;
      if (at > start && at <= end && change.offset !== spans[spans.length - 1].offset) {
        spans.push(change);
      }
    }
  }
  return spans;
}

/**
 * SQL for a Unix-time column shifted into local time by a zone's spans,
 * ready for an engine's UTC date functions. Each number goes through
 * `value`, which binds it (a placeholder) so that the SQL text depends only
 * on how many changes there are; by default it is written in.
 *
 * @param column The column or expression (`started_at`).
 * @param spans From {@linkcode offsetSpans}.
 * @param value Renders a number (a whole second): `?` for a bound parameter, or the number.
 * @returns `started_at` for UTC, `(started_at + 28800)`, or a `CASE` over the changes.
 * @throws {RangeError} When a span holds a fraction of a second.
 *
 * @example
 * ```ts
 * import { shiftedSql } from "./time_zone.ts";
 * console.assert(shiftedSql("t", [{ from: null, offset: 3600 }]) === "(t + 3600)");
 * ```
 */
export function shiftedSql(
  column: string,
  spans: readonly OffsetSpan[],
  value: (seconds: number) => string = String,
): string {
  const whole = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new RangeError(`Not a whole second: ${n}`);
    return value(n);
  };
  if (spans.length === 1) {
    return spans[0].offset === 0 ? column : `(${column} + ${whole(spans[0].offset)})`;
  }
  const cases = spans.slice(1).map((span, i) =>
    `WHEN ${column} < ${whole(span.from ?? 0)} THEN ${whole(spans[i].offset)}`
  );
  return `(${column} + CASE ${cases.join(" ")} ELSE ${whole(spans[spans.length - 1].offset)} END)`;
}

/** The forms of `TZ` that name a zone by its file: `:Asia/Tokyo`, `/usr/share/zoneinfo/Asia/Tokyo`. */
const ZONE_FILE =
  /^:?(?:\/usr(?:\/share)?\/(?:lib\/)?zoneinfo\/)?([A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*)$/;

/**
 * The IANA name a `TZ` value gives by its file (`:Asia/Tokyo`,
 * `/usr/share/zoneinfo/Asia/Tokyo`, which the C library reads), when that
 * name is a zone the runtime knows; `undefined` for any other value (a
 * name already, or a POSIX rule such as `EST+5`). The runtimes read such a
 * `TZ` each their own way: Bun as UTC, Deno and Node without a name (so a
 * fixed offset, summer time left out).
 *
 * @param value The `TZ` variable.
 * @returns The zone's name, or `undefined`.
 *
 * @example
 * ```ts
 * import { zoneNameOfTz } from "./time_zone.ts";
 * console.assert(zoneNameOfTz("/usr/share/zoneinfo/Asia/Tokyo") === "Asia/Tokyo");
 * console.assert(zoneNameOfTz("Asia/Tokyo") === undefined && zoneNameOfTz("EST+5") === undefined);
 * ```
 */
export function zoneNameOfTz(value: string | undefined): string | undefined {
  if (value === undefined || !(value.startsWith(":") || value.startsWith("/"))) return undefined;
  const name = ZONE_FILE.exec(value)?.[1];
  if (name === undefined) return undefined;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return name;
  } catch {
    return undefined;
  }
}
