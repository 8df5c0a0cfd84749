/**
 * The tests' temporary folders (`tempDir()` of `_helpers.ts`) are removed when
 * a test file ends, also when a test in it was skipped (Deno 2.9 then runs no
 * `after` hook) and when one process runs several files (Bun runs the hook of
 * a module they share after the first only): such folders stayed in `/tmp`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { ROOT, tempDir } from "./_helpers.ts";

/** The command line of the running runtime's test runner for some files, run in one go. */
function testRunner(files: string[]): string[] {
  switch (runtimeName()) {
    case "deno":
      return [process.execPath, "test", "-A", ...files];
    case "bun":
      return [process.execPath, "test", ...files];
    case "node":
      return [process.execPath, "--test", ...files];
  }
}

test("test files' temporary folders are removed, with a skipped test in one, two files in a run", () => {
  const tmp = tempDir();
  const [command, ...args] = testRunner(
    ["temp_dirs_child.ts", "temp_dirs_child_2.ts"].map((name) =>
      join(ROOT, "tests", "fixtures", name)
    ),
  );
  const run = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: tmp, NO_COLOR: "1" },
    encoding: "utf8",
  });
  assert.equal(run.status, 0, `${command} ${args.join(" ")}:\n${run.stdout}\n${run.stderr}`);
  assert.match(`${run.stdout}${run.stderr}`, /skip/i, "the child's second test was skipped");
  assert.deepEqual(readdirSync(tmp), [], "the children's tempDir() folders were removed");
});
