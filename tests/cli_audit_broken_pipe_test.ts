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
import { readdirSync } from "node:fs";
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
