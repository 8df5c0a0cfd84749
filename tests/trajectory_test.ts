import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import {
  convertScratchpadToThink,
  hasIncompleteScratchpad,
  saveTrajectory,
} from "../lib/files/trajectory.ts";
import { tempDir } from "./_helpers.ts";

/** Local wall-clock text of `ms`, computed apart from the code under test. */
function localSeconds(ms: number): string {
  const offset = new Date(ms).getTimezoneOffset() * 60_000;
  return new Date(ms - offset).toISOString().slice(0, 19);
}

const TURNS = [
  { from: "system", value: "You are Hermes." },
  { from: "human", value: "列出容器 🚀" },
  { from: "gpt", value: "<think>plan</think>\nDone." },
];

test("saveTrajectory() appends one JSON line in Python's format, non-ASCII kept", () => {
  const file = join(tempDir(), "samples.jsonl");
  const seconds = 1777454434.567891;
  saveTrajectory(TURNS, {
    model: "anthropic/claude-sonnet-4.5",
    completed: true,
    filename: file,
    clock: () => seconds,
  });
  const want = `{"conversations": [{"from": "system", "value": "You are Hermes."}, ` +
    `{"from": "human", "value": "列出容器 🚀"}, {"from": "gpt", "value": "<think>plan</think>\\nDone."}], ` +
    `"timestamp": "${
      localSeconds(1777454434567)
    }.567891", "model": "anthropic/claude-sonnet-4.5", "completed": true}\n`;
  assert.equal(readFileSync(file, "utf8"), want);
});

test("saveTrajectory() appends, and leaves out microseconds when they are zero", () => {
  const file = join(tempDir(), "samples.jsonl");
  saveTrajectory([], { model: "m", completed: false, filename: file, clock: () => 1777454434 });
  saveTrajectory([{ n: 0.00001, big: 1e16, f: 2.5, i: 3 }], {
    model: "m",
    completed: false,
    filename: file,
    clock: () => 1777454434.5,
  });
  const lines = readFileSync(file, "utf8").split("\n");
  assert.equal(lines.length, 3);
  assert.equal(lines[2], "");
  assert.equal(
    lines[0],
    `{"conversations": [], "timestamp": "${
      localSeconds(1777454434000)
    }", "model": "m", "completed": false}`,
  );
  assert.ok(
    lines[1].startsWith(
      '{"conversations": [{"n": 1e-05, "big": 10000000000000000, "f": 2.5, "i": 3}]',
    ),
  );
  assert.ok(lines[1].includes(`"timestamp": "${localSeconds(1777454434500)}.500000"`));
  assert.deepEqual(JSON.parse(lines[1]).conversations, [{ n: 0.00001, big: 1e16, f: 2.5, i: 3 }]);
});

// The tests that change the working folder (where the default files go) are in this one file:
// test files run side by side share the process's folder (Deno's workers), and one of two such
// tests once removed the folder the other had made the process's, failing every test after it.
test("saveTrajectory() writes to trajectory_samples.jsonl or failed_trajectories.jsonl by default", () => {
  const dir = tempDir();
  const cwd = process.cwd();
  try {
    process.chdir(dir);
    saveTrajectory([{ from: "human", value: "ok" }], { model: "m", completed: true });
    saveTrajectory([{ from: "human", value: "no" }], { model: "m", completed: false });
  } finally {
    process.chdir(cwd);
  }
  assert.equal(
    JSON.parse(readFileSync(join(dir, "trajectory_samples.jsonl"), "utf8")).completed,
    true,
  );
  assert.equal(
    JSON.parse(readFileSync(join(dir, "failed_trajectories.jsonl"), "utf8")).conversations[0].value,
    "no",
  );
});

test("saveTrajectory() refuses options that are not an object, naming them (was a crash on null)", () => {
  const dir = tempDir();
  const cwd = process.cwd();
  const cases: [unknown, string][] = [[null, "null"], [undefined, "undefined"], ["m", '"m"'], [
    [],
    "[]",
  ]];
  try {
    process.chdir(dir); // where the default files would go
    for (const [options, shown] of cases) {
      assert.throws(
        () => saveTrajectory([], options as never),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message ===
            `Cannot save trajectory: options must be an object: current value is ${shown}`,
      );
    }
  } finally {
    process.chdir(cwd);
  }
  assert.deepEqual(readdirSync(dir), []);
});

test("saveTrajectory() throws when the file cannot be written", () => {
  const file = join(tempDir(), "missing", "samples.jsonl");
  assert.throws(
    () => saveTrajectory([], { model: "m", completed: true, filename: file }),
    /ENOENT|No such file/i,
  );
});

test("saveTrajectory() refuses a trajectory with a circular reference", () => {
  const file = join(tempDir(), "samples.jsonl");
  const turn: Record<string, unknown> = { from: "human" };
  turn.self = turn;
  assert.throws(
    () => saveTrajectory([turn], { model: "m", completed: true, filename: file }),
    TypeError,
  );
});

test("convertScratchpadToThink() turns scratchpad tags into think tags", () => {
  assert.equal(
    convertScratchpadToThink(
      "<REASONING_SCRATCHPAD>a</REASONING_SCRATCHPAD> b <REASONING_SCRATCHPAD>c",
    ),
    "<think>a</think> b <think>c",
  );
});

test("convertScratchpadToThink() leaves text without an opening tag unchanged", () => {
  assert.equal(convertScratchpadToThink("plain"), "plain");
  assert.equal(convertScratchpadToThink(""), "");
  assert.equal(convertScratchpadToThink("x</REASONING_SCRATCHPAD>"), "x</REASONING_SCRATCHPAD>");
  assert.equal(convertScratchpadToThink("<reasoning_scratchpad>x"), "<reasoning_scratchpad>x");
});

test("hasIncompleteScratchpad() is true only for an opening tag with no closing tag anywhere", () => {
  assert.equal(hasIncompleteScratchpad("<REASONING_SCRATCHPAD>thinking"), true);
  assert.equal(hasIncompleteScratchpad("<REASONING_SCRATCHPAD>a</REASONING_SCRATCHPAD>"), false);
  assert.equal(hasIncompleteScratchpad("</REASONING_SCRATCHPAD><REASONING_SCRATCHPAD>"), false);
  assert.equal(hasIncompleteScratchpad("no tags"), false);
  assert.equal(hasIncompleteScratchpad(""), false);
});
