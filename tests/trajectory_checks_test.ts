/**
 * `saveTrajectory` checks its arguments before it writes, as every public
 * function of the library does: a bad one is a TypeError that names the
 * argument and its value, and the file is left as it was (not created).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { saveTrajectory, type SaveTrajectoryOptions } from "../mod.ts";
import { tempDir } from "./_helpers.ts";

const TURNS = [{ from: "human", value: "hi" }];

/** Calls `saveTrajectory` with values its types do not allow, as JavaScript callers can. */
function save(trajectory: unknown, options: unknown): void {
  saveTrajectory(trajectory as unknown[], options as SaveTrajectoryOptions);
}

/** Asserts that `call` throws a TypeError whose message is `message`. */
function assertRefused(call: () => void, message: string): void {
  assert.throws(call, (error: unknown) => {
    assert.ok(error instanceof TypeError, String(error));
    assert.equal(error.message, message);
    return true;
  });
}

test("saveTrajectory() refuses a trajectory that is not an array, naming it", () => {
  const file = join(tempDir(), "samples.jsonl");
  const options = { model: "m", completed: true, filename: file };
  const cases: [unknown, string][] = [
    [null, "null"],
    [undefined, "undefined"],
    ["turns", '"turns"'],
    [{ from: "human" }, '{"from":"human"}'],
    [3, "3"],
  ];
  for (const [trajectory, shown] of cases) {
    assertRefused(
      () => save(trajectory, options),
      `Cannot save trajectory: trajectory must be an array: current value is ${shown}`,
    );
  }
  assert.equal(existsSync(file), false);
});

test("saveTrajectory() refuses a bad model, completed, filename or clock, and writes nothing", () => {
  const file = join(tempDir(), "samples.jsonl");
  writeFileSync(file, "before\n");
  const base = { model: "m", completed: false, filename: file, clock: () => 1777454434 };
  const cases: [Record<string, unknown>, string][] = [
    [{ model: undefined }, "model must be a string: current value is undefined"],
    [{ model: 42 }, "model must be a string: current value is 42"],
    [{ model: null }, "model must be a string: current value is null"],
    [{ completed: "yes" }, 'completed must be true or false: current value is "yes"'],
    [{ completed: 1 }, "completed must be true or false: current value is 1"],
    [{ completed: undefined }, "completed must be true or false: current value is undefined"],
    [{ filename: "" }, 'filename must be a non-empty string: current value is ""'],
    [{ filename: 7 }, "filename must be a non-empty string: current value is 7"],
    [
      { filename: { path: "x" } },
      'filename must be a non-empty string: current value is {"path":"x"}',
    ],
    [{ clock: 1777454434 }, "clock must be a function: current value is 1777454434"],
    [
      { clock: () => NaN },
      "the clock must return a finite number of seconds: current value is NaN",
    ],
    [
      { clock: () => "now" },
      'the clock must return a finite number of seconds: current value is "now"',
    ],
  ];
  for (const [change, message] of cases) {
    assertRefused(() => save(TURNS, { ...base, ...change }), `Cannot save trajectory: ${message}`);
  }
  assert.equal(readFileSync(file, "utf8"), "before\n");
});

test("saveTrajectory() takes a null filename or clock as left out, as Python's None", () => {
  const file = join(tempDir(), "samples.jsonl");
  save(TURNS, { model: "m", completed: true, filename: file, clock: null });
  const line = JSON.parse(readFileSync(file, "utf8"));
  assert.deepEqual(line.conversations, TURNS);
  assert.match(line.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
});
