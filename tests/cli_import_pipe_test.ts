/**
 * `import FILE` where FILE is a pipe, as an operator's shell hands it over:
 * `hermes-state import <(zcat backup.jsonl.gz)` or a named FIFO.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { runCli, v11Copy } from "./_cli_io.ts";
import { cliArgv, tempDir, waitUntil } from "./_helpers.ts";
import { runtimeName } from "../lib/sqlite/driver/load.ts";

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

test("import - stops at Ctrl-C while it waits for a line that does not come, and says how far", async () => {
  const into = join(tempDir(), "waiting.db");
  const [binary, ...args] = cliArgv(["--db", into, "import", "-"]);
  const child = spawn(binary, args, { stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (chunk) => err += chunk);
  child.stdout.resume();
  const closed = new Promise<number | string | null>((resolve) =>
    child.on("close", (code, signal) => resolve(code ?? signal))
  );
  // One session, then the input stays open (a terminal, a stalled pipe).
  child.stdin.write('{"id": "s1", "source": "cli", "started_at": 1700000000.0, "messages": []}\n');
  await waitUntil(
    async () => existsSync(into) && (await sessionsIn(into)) === 1,
    "the first session",
  );
  child.kill("SIGINT");
  // Before the fix the read of the next line went on until the input ended.
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const code = await closed;
  clearTimeout(timer);
  child.stdin.destroy();
  // Before: the run went on waiting for the line (on Deno even once it had said it stopped, as
  // it cannot cancel a pending read of standard input).
  assert.notEqual(code, "SIGKILL", `still running 15 s after Ctrl-C: ${err}`);
  // Deno's node:child_process reports a child it sent a signal to as killed by it, and often
  // loses what the child wrote last (from a shell, the run prints it and exits 130).
  if (runtimeName() === "deno") return;
  assert.equal(code, 130, err);
  assert.match(err, /interrupted by SIGINT: stopped after line 1/);
});

/** The sessions in the file at `path`, read as the CLI reads them. */
async function sessionsIn(path: string): Promise<number> {
  const run = await runCli(["--db", path, "stats", "--json"]);
  return run.code === 0 ? JSON.parse(run.out).sessions : -1;
}
