/**
 * The time a write stamps, to the microsecond as Python's `time.time()`.
 *
 * `Date.now()` counts whole milliseconds: a message written in the same
 * millisecond as a Python process's earlier one got the earlier timestamp,
 * and transcripts (ordered by `timestamp, id`) showed the answer before the
 * question; a child session could start "before" its parent ended. The
 * monotonic clock (`performance.now()`) counts microseconds: the wall time
 * is read as `anchor + performance.now()`, the anchor bounded by reads of
 * both clocks until they pin it (a busy wait of about a millisecond, to
 * where `Date.now()` turns between two close reads; longer, up to 50 ms, for
 * a process paused meanwhile on a busy machine, whose pauses do not count as
 * waiting), and taken again every second and whenever `Date.now()` says it
 * no longer holds; between two anchors, the wall clock's drift from the
 * monotonic one is followed (NTP slews it). Whatever the anchor, a time given
 * lies within the millisecond `Date.now()` reads (a pause of the process
 * cannot push it ahead), and never before one given earlier unless the
 * wall clock itself was set back. Where `Date.now()` does not move (fake
 * timers in tests), the times are `Date.now()`'s.
 *
 * @module
 */

/** `Date.now() - performance.now()` where the wall clock turned, in ms; set on first use. */
let anchor: number | undefined;
/** When (`performance.now()`) the anchor was read, or found unreadable. */
let anchoredAt = -Infinity;
/**
 * How fast the anchor moves, in ms per ms of monotonic time: the wall
 * clock's drift, measured between two anchors (0 until then).
 */
let drift = 0;
/**
 * The largest drift believed. NTP slews by 500 ppm at most, but a virtual
 * machine's clock can be pulled harder: this one's wall clock ran 0.5%
 * faster than its monotonic clock for seconds on end.
 */
const MAX_DRIFT = 0.01;
/** The last time given and the `Date.now()` it was read with, in ms. */
let last = -Infinity;
let lastWall = -Infinity;

/**
 * The wall clock runs apart from the monotonic one (NTP slews it; 0.3 to
 * 5 ms a second was measured here): the anchor is read again after this
 * long, and its drift followed meanwhile.
 */
const ANCHOR_FOR_MS = 1000;
/**
 * After a wait that found no anchor (`Date.now()` did not move), the next
 * comes after this long, in ms.
 */
const RETRY_MS = 50;
/** An anchor known within this many ms is taken at once. */
const BRACKET_MS = 0.02;
/** The wait for a tight anchor, in ms of monotonic time the process ran through. */
const WAIT_MS = 3;
/** The longest wait, pauses of the process included, in ms of monotonic time. */
const LONGEST_WAIT_MS = 50;
/** A gap between two reads longer than this, in ms, is the process paused, not waiting. */
const PAUSE_MS = 0.5;
/**
 * Bounds that miss each other by more than this, in ms, are no clock's
 * (less is the monotonic clock's grain).
 */
const UNREAD_MS = 0.1;

/** One read of the wall clock between two of the monotonic one. */
interface Reading {
  /** `performance.now()` before. */
  readonly before: number;
  /** `Date.now()`. */
  readonly wall: number;
  /** `performance.now()` after. */
  readonly after: number;
}

function read(): Reading {
  const before = performance.now();
  const wall = Date.now();
  return { before, wall, after: performance.now() };
}

/**
 * The anchor, read by reading both clocks again and again. Each read bounds
 * it: `Date.now()` gave `wall` at a moment between `before` and `after`, so
 * the anchor lies between `wall - after` and `wall + 1 - before`; the reads
 * together bound it to where their bounds meet, which a turn of `Date.now()`
 * seen between two close reads narrows to their gap. It is taken at the top
 * of what the reads leave, so that the times given are never early (late by
 * at most that width): once `Date.now()` has turned, at once when within
 * {@linkcode BRACKET_MS}, else once the process has run {@linkcode WAIT_MS}
 * through reads (a pause of the process, on a busy machine, counts for
 * nothing but its bounds), at most {@linkcode LONGEST_WAIT_MS}. `undefined`
 * when `Date.now()` did not move (fake timers: its bounds stop meeting
 * within a millisecond), or the wall clock was set meanwhile.
 */
function readAnchor(): number | undefined {
  const first = read();
  let lo = first.wall - first.after;
  let hi = first.wall + 1 - first.before;
  let ran = 0;
  let previous = first;
  for (;;) {
    const now = read();
    lo = Math.max(lo, now.wall - now.after);
    hi = Math.min(hi, now.wall + 1 - now.before);
    const gap = now.after - previous.after;
    if (gap < PAUSE_MS) ran += gap;
    previous = now;
    if (hi < lo - UNREAD_MS) return undefined;
    const turned = now.wall !== first.wall;
    if (turned && (hi - lo < BRACKET_MS || (ran >= WAIT_MS && hi - lo < 1))) break;
    if (now.after - first.before >= LONGEST_WAIT_MS) break;
  }
  return previous.wall !== first.wall ? Math.max(lo, hi) : undefined;
}

/**
 * The current time in Unix seconds, to the microsecond, within the
 * millisecond `Date.now()` reads: the default clock of the stores' writes.
 *
 * @returns Seconds since 1970, as a float.
 *
 * @example
 * ```ts
 * import { wallClockSeconds } from "./wall_clock.ts";
 * const before = Date.now();
 * const now = wallClockSeconds() * 1000;
 * console.assert(now >= before && now < Date.now() + 1);
 * ```
 */
export function wallClockSeconds(): number {
  const { before, wall, after } = read();
  // The anchor at a moment, its drift since it was read followed.
  const anchorAt = (moment: number) =>
    anchor === undefined ? undefined : anchor + drift * (moment - anchoredAt);
  const current = anchorAt(before);
  // The true anchor lies in (wall - after, wall + 1 - before): outside it, read it again.
  if (
    before - anchoredAt > (anchor === undefined ? RETRY_MS : ANCHOR_FOR_MS) ||
    (current !== undefined && (current <= wall - after || current >= wall + 1 - before))
  ) {
    const fresh = readAnchor();
    // The drift, from two anchors a while apart (those of a clock set are no drift).
    const since = before - anchoredAt;
    const rate = anchor === undefined || fresh === undefined ? 0 : (fresh - anchor) / since;
    drift = since >= 200 && Math.abs(rate) <= MAX_DRIFT ? rate : 0;
    anchor = fresh;
    anchoredAt = before;
  }
  // Within the millisecond Date.now() read, whatever the anchor (or without one): a pause that
  // widens the bracket of this read cannot let an anchor read late show through.
  const at = anchorAt(after);
  let now = at === undefined ? wall : at + after;
  if (now < wall) now = wall;
  if (now > wall + 1) now = wall + 1;
  // Never before a time given earlier, unless the wall clock was set back.
  if (now < last && wall >= lastWall) now = last;
  last = now;
  lastWall = wall;
  return now / 1000;
}
