/**
 * `printJson` writes a long array (`list --json --limit 1000000`) a slice of
 * rows at a time, never as one string (past what a JavaScript string may
 * hold, the listing failed), and the text is what one `JSON.stringify` of
 * the array with a two-space indent gives.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { printJson } from "../lib/cli/json.ts";
import { recordingIo } from "./_cli_io.ts";

/** Row `i` of a listing-like array: nested values, text with newlines and quotes, nulls. */
function row(i: number): unknown {
  return {
    id: `s_${i}`,
    title: i % 3 === 0 ? null : `title "${i}"\nsecond line`,
    started_at: 1_700_000_000 + i / 7,
    tags: i % 5 === 0 ? [] : [i, { deep: [true, null] }],
    empty: {},
  };
}

test("a long array is written in slices, as JSON.stringify(array, null, 2) writes it", () => {
  for (const length of [0, 1, 999, 1000, 1001, 2500]) {
    const rows = Array.from({ length }, (_, i) => row(i));
    const io = recordingIo();
    const writes: string[] = [];
    const stdout = io.stdout;
    io.stdout = (text) => {
      writes.push(text);
      stdout(text);
    };
    printJson(io, rows);
    assert.equal(io.out, `${JSON.stringify(rows, null, 2)}\n`, `${length} rows`);
    assert.ok(Math.max(...writes.map((w) => w.length)) < 300_000, `${length} rows in one write`);
    assert.deepEqual(JSON.parse(io.out), JSON.parse(JSON.stringify(rows)));
  }
});

test("undefined items and integers beyond 2^53 in a long array are written as one document would be", () => {
  const rows: unknown[] = Array.from({ length: 1500 }, (_, i) => (i === 7 ? undefined : { i }));
  rows[1400] = { tokens: 9007199254740993n };
  const io = recordingIo();
  printJson(io, rows);
  const text = io.out;
  assert.match(text, /"tokens": 9007199254740993\n/);
  assert.equal(JSON.parse(text.replace("9007199254740993", "0"))[7], null);
  const plain = rows.map((r, i) => (i === 1400 ? { tokens: 0 } : r));
  assert.equal(text.replace("9007199254740993", "0"), `${JSON.stringify(plain, null, 2)}\n`);
});
