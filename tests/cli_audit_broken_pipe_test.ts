/**
 * `show --follow | head`: the reader of standard output goes away while the
 * command still runs, and the process ends at once (EPIPE), as `tail -f`
 * does. A read command never leaves a file beside the database that was not
 * there: the connection that made the -wal and -shm a WAL read needs is
 * closed first, which removes them. Run in a child process of the running
 * runtime, whose standard output is a real pipe closed after the first bytes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { runCli } from "./_cli_io.ts";
import { cliArgv, tempDir } from "./_helpers.ts";

/** A WAL database with one session of 300 long messages (more than a pipe holds). */
async function bigSession(): Promise<string> {
  const db = join(tempDir(), "state.db");
  const messages = Array.from({ length: 300 }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: `word${i} `.repeat(400),
    timestamp: 1_700_000_000 + i,
  }));
  const line = JSON.stringify({ id: "big", source: "cli", started_at: 1_700_000_000, messages });
  const run = await runCli(["--db", db, "import", "-"], { stdin: `${line}\n` });
  assert.equal(run.code, 0, run.err);
  return db;
}

/** Runs the CLI, closes its standard output after the first bytes, and waits for its end. */
function closedEarly(argv: readonly string[]): Promise<number | null> {
  const [command, ...args] = cliArgv(argv);
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  child.stdout.once("data", () => child.stdout.destroy());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("the CLI went on after its reader left"));
    }, 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

test("show --follow whose reader leaves ends at once and leaves no -wal or -shm behind", async () => {
  const db = await bigSession();
  assert.deepEqual(readdirSync(dirname(db)), ["state.db"]);
  for (
    const argv of [["show", "--follow=0.2", "big"], ["show", "--last", "200", "--follow", "big"]]
  ) {
    const code = await closedEarly(["--db", db, ...argv]);
    assert.equal(code, 0, argv.join(" "));
    assert.deepEqual(readdirSync(dirname(db)), ["state.db"], `${argv.join(" ")} left sidecars`);
  }
});

test("a standard output that fails otherwise (a full disk) is one line on standard error, exit 1", async (t) => {
  if (!existsSync("/dev/full")) return t.skip("no /dev/full here");
  const db = await bigSession();
  for (const argv of [["--db", db, "list"], ["--db", db, "export", "-"], ["--help"]]) {
    const [command, ...args] = cliArgv(argv);
    const full = openSync("/dev/full", "w");
    const child = spawn(command, args, { stdio: ["ignore", full, "pipe"] });
    closeSync(full);
    let err = "";
    child.stderr!.on("data", (chunk) => err += chunk);
    const code = await new Promise((resolve) => child.on("close", resolve));
    // Before: Node and Bun threw from the stream's error event (a stack trace), Deno said
    // "unexpected error".
    assert.equal(
      err,
      "hermes-state: Cannot write standard output: the disk is full\n",
      argv.join(" "),
    );
    assert.equal(code, 1, argv.join(" "));
  }
});
