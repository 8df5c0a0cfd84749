// A time zone's offsets for the usage reports (lib/core/time_zone.ts) and the
// period start read in a zone (parseSince).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  checkTimeZone,
  offsetSpans,
  shiftedSql,
  utcOffset,
  zonedSeconds,
} from "../lib/core/time_zone.ts";
import { localTimeSql, parseSince } from "../lib/core/usage.ts";

const at = (...parts: [number, number, number, number?, number?, number?]) =>
  Date.UTC(...parts) / 1000;

test("utcOffset() gives seconds east of UTC, summer time, half and quarter hours included", () => {
  assert.equal(utcOffset("UTC", at(2026, 0, 1)), 0);
  assert.equal(utcOffset("Asia/Shanghai", at(2026, 0, 1)), 8 * 3600);
  assert.equal(utcOffset("America/New_York", at(2026, 0, 1)), -5 * 3600);
  assert.equal(utcOffset("America/New_York", at(2026, 6, 1)), -4 * 3600);
  assert.equal(utcOffset("Asia/Kolkata", at(2026, 6, 1)), 5.5 * 3600);
  assert.equal(utcOffset("Asia/Kathmandu", at(2026, 6, 1)), 5.75 * 3600);
  // The second of a change: 07:00 UTC on 2026-03-08 is 03:00 EDT, a second before 01:59:59 EST.
  assert.equal(utcOffset("America/New_York", at(2026, 2, 8, 7)), -4 * 3600);
  assert.equal(utcOffset("America/New_York", at(2026, 2, 8, 7) - 1), -5 * 3600);
  // A fraction of a second counts with its second.
  assert.equal(utcOffset("America/New_York", at(2026, 2, 8, 7) - 0.25), -5 * 3600);
});

test("offsetSpans() finds each change of a period to the second, and one span where none", () => {
  assert.deepEqual(offsetSpans("America/New_York", at(2026, 0, 1), at(2027, 0, 1)), [
    { from: null, offset: -18000 },
    { from: at(2026, 2, 8, 7), offset: -14400 },
    { from: at(2026, 10, 1, 6), offset: -18000 },
  ]);
  // Lord Howe Island moves by half an hour; the southern summer starts in October.
  assert.deepEqual(offsetSpans("Australia/Lord_Howe", at(2026, 0, 1), at(2027, 0, 1)), [
    { from: null, offset: 39600 },
    { from: at(2026, 3, 4, 15), offset: 37800 },
    { from: at(2026, 9, 3, 15, 30), offset: 39600 },
  ]);
  assert.deepEqual(offsetSpans("Asia/Shanghai", at(2020, 0, 1), at(2027, 0, 1)), [
    { from: null, offset: 28800 },
  ]);
  // A period within one offset, and one that ends before it starts, are one span.
  assert.equal(offsetSpans("Europe/Berlin", at(2026, 5, 1), at(2026, 5, 2)).length, 1);
  assert.equal(offsetSpans("Europe/Berlin", at(2026, 5, 2), at(2026, 5, 1)).length, 1);
});

test("offsetSpans() looks only between 1970 and 2100, however far a start time strays", () => {
  const spans = offsetSpans("Europe/Berlin", -1e12, 1e13);
  assert.ok(spans.length > 200 && spans.length < 300, `${spans.length} spans`);
  assert.ok(spans.every((span) => span.from === null || (span.from >= 0 && span.from <= 4.2e9)));
});

test("shiftedSql() adds the offsets of the spans, with a CASE over the changes", () => {
  assert.equal(shiftedSql("started_at", [{ from: null, offset: 0 }]), "started_at");
  assert.equal(shiftedSql("started_at", [{ from: null, offset: -18000 }]), "(started_at + -18000)");
  assert.equal(
    shiftedSql("t", [{ from: null, offset: 3600 }, { from: 100, offset: 7200 }, {
      from: 200,
      offset: 3600,
    }]),
    "(t + CASE WHEN t < 100 THEN 3600 WHEN t < 200 THEN 7200 ELSE 3600 END)",
  );
  assert.throws(() => shiftedSql("t", [{ from: null, offset: 0.5 }]), /Not a whole second/);
  // localTimeSql binds each number through its callback, in the order of the SQL text.
  const bound: number[] = [];
  const bind = (seconds: number) => (bound.push(seconds), "?");
  assert.equal(localTimeSql("UTC", null, undefined, bind), "started_at");
  assert.equal(localTimeSql("Asia/Tokyo", 1e9, 1.5e9, bind), "(started_at + ?)");
  assert.equal(
    localTimeSql("America/New_York", at(2026, 0, 1), at(2026, 5, 1), bind),
    "(started_at + CASE WHEN started_at < ? THEN ? ELSE ? END)",
  );
  assert.deepEqual(bound, [32400, at(2026, 2, 8, 7), -18000, -14400]);
});

test("checkTimeZone() spells a zone as Intl does and names a value it does not know", () => {
  assert.equal(checkTimeZone("report usage", "asia/shanghai"), "Asia/Shanghai");
  assert.equal(checkTimeZone("report usage", " UTC "), "UTC");
  // A name some runtimes know by an older one stays as given.
  assert.equal(checkTimeZone("report usage", "Asia/Kolkata"), "Asia/Kolkata");
  assert.equal(checkTimeZone("report usage", "+05:30"), "+05:30");
  for (const bad of ["Mars/Olympus_Mons", "", "   ", 8, null, "+25:00"]) {
    assert.throws(
      () => checkTimeZone("report usage", bad),
      (error: Error) =>
        error instanceof RangeError &&
        error.message.startsWith("Cannot report usage: timeZone must be a time zone") &&
        error.message.endsWith(`current value is ${JSON.stringify(bad)}`),
    );
  }
});

test("zonedSeconds() gives the first of a midnight shown twice, and the change for a skipped one", () => {
  // Santiago's clocks go from 00:00 to 01:00 on 2026-09-06 (−04 to −03): the day starts at 01:00.
  assert.equal(zonedSeconds("America/Santiago", Date.UTC(2026, 8, 6)), at(2026, 8, 6, 4));
  assert.equal(parseSince("2026-09-06", 0, "America/Santiago"), at(2026, 8, 6, 4));
  // Samoa skipped 2011-12-30 whole (−10 to +14): "since the 30th" is since the 31st began.
  assert.equal(zonedSeconds("Pacific/Apia", Date.UTC(2011, 11, 30)), at(2011, 11, 30, 10));
  // Havana's clocks go from 01:00 back to 00:00 on 2026-11-01: midnight comes twice, the day
  // starts at the first; they go from 00:00 to 01:00 on 2026-03-08.
  assert.equal(zonedSeconds("America/Havana", Date.UTC(2026, 10, 1)), at(2026, 10, 1, 4));
  assert.equal(zonedSeconds("America/Havana", Date.UTC(2026, 2, 8)), at(2026, 2, 8, 5));
  // An ordinary midnight either side of a change.
  assert.equal(zonedSeconds("America/Santiago", Date.UTC(2026, 8, 5)), at(2026, 8, 5, 4));
  assert.equal(zonedSeconds("America/Santiago", Date.UTC(2026, 8, 7)), at(2026, 8, 7, 3));
});

test("offsetSpans() finds an offset that lasted under a week, wherever the period starts", () => {
  // Recife kept summer time from 2000-10-08 to 2000-10-15 (−03 to −02 and back).
  for (const from of [at(2000, 9, 1), 970_900_000, 970_972_000, 970_973_999]) {
    const spans = offsetSpans("America/Recife", from, at(2000, 10, 1));
    assert.deepEqual(spans.map((span) => span.offset), [-10800, -7200, -10800], String(from));
  }
});

test("zonedSeconds() and parseSince() read a wall time in a zone", () => {
  assert.equal(zonedSeconds("Asia/Shanghai", Date.UTC(2026, 3, 1)), at(2026, 2, 31, 16));
  assert.equal(zonedSeconds("America/New_York", Date.UTC(2026, 6, 1, 12)), at(2026, 6, 1, 16));
  assert.equal(zonedSeconds("America/New_York", Date.UTC(2026, 0, 1, 12)), at(2026, 0, 1, 17));
  assert.equal(parseSince("2026-04-01", 0), at(2026, 3, 1));
  assert.equal(parseSince("2026-04-01", 0, "Asia/Shanghai"), at(2026, 2, 31, 16));
  assert.equal(parseSince("2026-04-01T10:30", 0, "Asia/Shanghai"), at(2026, 3, 1, 2, 30));
  assert.equal(parseSince("2026-04-01 10:30:15", 0, "UTC"), at(2026, 3, 1, 10, 30, 15));
  // A time that ends in Z is UTC in any zone.
  assert.equal(parseSince("2026-04-01T10:30Z", 0, "Asia/Shanghai"), at(2026, 3, 1, 10, 30));
  assert.equal(parseSince("7d", 10 * 86400, "Asia/Shanghai"), 3 * 86400);
  assert.throws(
    () => parseSince("2026-13-45", 0, "Asia/Shanghai"),
    /current value is "2026-13-45"/,
  );
  // A day the month does not have is no date, not a day of the next month.
  assert.throws(() => parseSince("2026-02-30", 0), /current value is "2026-02-30"/);
  assert.equal(parseSince("2028-02-29", 0), at(2028, 1, 29));
  // An unknown zone is named, whatever the period.
  for (const text of ["2026-04-01", "7d"]) {
    assert.throws(
      () => parseSince(text, 0, "Mars/Olympus_Mons"),
      /^RangeError: Cannot read the period: timeZone must be a time zone .*"Mars\/Olympus_Mons"$/,
    );
  }
});
