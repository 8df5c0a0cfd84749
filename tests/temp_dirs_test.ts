/**
 * The tests' temporary folders (`tempDir()` of `_helpers.ts`) are removed when
 * a test file ends, also when a test in it was skipped: Deno 2.9 then runs no
 * `after` hook, and every such file left its folders behind in `/tmp`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { ROOT, tempDir } from "./_helpers.ts";

/** The command line of the running runtime's test runner for one file. */
function testRunner(file: string): string[] {
  switch (runtimeName()) {
    case "deno":
      return [process.execPath, "test", "-A", file];
    case "bun":
      return [process.execPath, "test", file];
    case "node":
      return [process.execPath, "--test", file];
  }
}

test("a test file's temporary folders are removed when it ends, with a skipped test in it", () => {
  const tmp = tempDir();
  const [command, ...args] = testRunner(join(ROOT, "tests", "fixtures", "temp_dirs_child.ts"));
  const run = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: tmp, NO_COLOR: "1" },
    encoding: "utf8",
  });
  assert.equal(run.status, 0, `${command} ${args.join(" ")}:\n${run.stdout}\n${run.stderr}`);
  assert.match(`${run.stdout}${run.stderr}`, /skip/i, "the child's second test was skipped");
  assert.deepEqual(readdirSync(tmp), [], "the child's tempDir() folder was removed");
});
