/**
 * `import FILE` where FILE is a pipe, as an operator's shell hands it over:
 * `hermes-state import <(zcat backup.jsonl.gz)` or a named FIFO.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { runCli, v11Copy } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";

test("import reads a named pipe (process substitution) as it reads a file", async (t) => {
  const dir = tempDir();
  const fifo = join(dir, "export.fifo");
  if (spawnSync("mkfifo", [fifo]).status !== 0) return t.skip("no mkfifo here");
  const exported = await runCli(["--db", v11Copy(), "export", "-"]);
  assert.equal(exported.code, 0, exported.err);
  const lines = join(dir, "export.jsonl");
  writeFileSync(lines, exported.out);
  // The writer blocks until import opens the pipe for reading.
  const writer = spawn("sh", ["-c", 'cat "$1" > "$2"', "sh", lines, fifo], { stdio: "ignore" });
  const written = new Promise((resolve) => writer.on("close", resolve));
  const into = join(dir, "copy.db");
  const run = await runCli(["--db", into, "import", fifo]);
  if (run.code !== 0) writer.kill(); // a refused pipe is never opened: its writer would wait
  await written;
  assert.equal(run.code, 0, run.err);
  assert.match(run.out, /Imported 42 sessions, skipped 0 already present/);
  const listed = await runCli(["--db", into, "list", "--all", "--json", "--limit", "100"]);
  assert.ok(JSON.parse(listed.out).length >= 35);
});

test("import still refuses a folder, naming it", async () => {
  const dir = tempDir();
  const run = await runCli(["--db", join(dir, "copy.db"), "import", dir]);
  assert.equal(run.code, 1);
  assert.equal(run.err, `hermes-state: Cannot read ${dir}: not a file\n`);
});
