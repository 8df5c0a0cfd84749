/**
 * The time a write stamps, to the microsecond as Python's `time.time()`.
 *
 * `Date.now()` counts whole milliseconds: a message written in the same
 * millisecond as a Python process's earlier one got the earlier timestamp,
 * and transcripts (ordered by `timestamp, id`) showed the answer before the
 * question; a child session could start "before" its parent ended. The
 * monotonic clock (`performance.now()`) counts microseconds: the wall time
 * is read as `anchor + performance.now()`, the anchor taken where
 * `Date.now()` turns to the next millisecond (there it is exact to a few
 * microseconds; finding the turn is a busy wait of a millisecond or two),
 * and taken again every second (NTP slews the wall clock) and whenever
 * `Date.now()` says it no longer holds (the clock was set, the machine
 * slept). Within a process the times never run back by less than a
 * millisecond; a clock set back further is followed, as in Python.
 *
 * @module
 */

/** `Date.now() - performance.now()` where the wall clock turned, in ms; set on first use. */
let anchor: number | undefined;
/** When (`performance.now()`) the anchor was read. */
let anchoredAt = -Infinity;
/** The last time given, in ms, so that small corrections never run it backwards. */
let last = -Infinity;

/**
 * The wall clock runs apart from the monotonic one (NTP slews it: 0.3 ms a
 * second was measured here): the anchor is read again after this long.
 */
const ANCHOR_FOR_MS = 1000;
/** How far behind `Date.now()` the anchor may fall before it is read again, in ms. */
const BEHIND_MS = 0.05;
/** A turn of `Date.now()` seen within this many ms of the read before it is trusted. */
const BRACKET_MS = 0.02;

/**
 * The anchor, read where `Date.now()` turns to the next millisecond (a
 * busy wait of a millisecond or two): the turn lies between two reads of
 * the monotonic clock, and is trusted when they are close together (a
 * process paused between them would move the anchor by the pause). The
 * later read is taken, so that the times given are never early.
 */
function readAnchor(): number {
  let before = performance.now();
  let wall = Date.now();
  let best: { anchor: number; bracket: number } | undefined;
  for (let turns = 0; turns < 5;) {
    const mono = performance.now();
    const next = Date.now();
    if (next !== wall) {
      turns++;
      const bracket = mono - before;
      if (best === undefined || bracket < best.bracket) best = { anchor: next - before, bracket };
      if (bracket < BRACKET_MS) break;
    }
    wall = next;
    before = mono;
  }
  return best!.anchor;
}
/**
 * The current time in Unix seconds, to the microsecond, never behind what
 * `Date.now()` says: the default clock of the stores' writes.
 *
 * @returns Seconds since 1970, as a float.
 *
 * @example
 * ```ts
 * import { wallClockSeconds } from "./wall_clock.ts";
 * const now = wallClockSeconds();
 * console.assert(Math.abs(now - Date.now() / 1000) < 0.002);
 * ```
 */
export function wallClockSeconds(): number {
  const mono = performance.now();
  const wall = Date.now();
  // The true anchor lies in [wall - mono, wall - mono + 1): anything else is a clock change.
  if (
    anchor === undefined || mono - anchoredAt > ANCHOR_FOR_MS ||
    anchor < wall - mono - BEHIND_MS || anchor >= wall - mono + 1
  ) {
    anchor = Math.max(readAnchor(), wall - mono);
    anchoredAt = mono;
  }
  let now = anchor + performance.now();
  // Never behind a time already given by less than a millisecond (the anchor's refinements);
  // a clock set back further is followed, as Python's time.time() follows it.
  if (now < last && last - now < 1) now = last;
  last = now;
  return now / 1000;
}
