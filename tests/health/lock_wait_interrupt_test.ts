/**
 * Ctrl-C during a long wait for a lock another process holds: `doctor
 * --fix` and `backup` end at once (exit 130), not when the wait runs out.
 * The CLI runs in its own process and gets a real SIGINT.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import process from "node:process";
import { dirname, join } from "node:path";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { cliArgv } from "../_helpers.ts";
import { v11Copy } from "../_cli_io.ts";
import { holdWholeFile, holdWriteLock } from "./_held_lock.ts";

/** The lock wait the CLI is given: far longer than a prompt stop may take. */
const LOCK_TIMEOUT_S = 40;
/**
 * Time the CLI gets to start and reach its wait before the signal, when the test does not see
 * the wait begin: a wait for the write lock (it opens the file for its checks, and waits only
 * after them), or a system without `/proc`.
 */
const SETTLE_MS = 3_000;

/** Whether process `pid` holds a descriptor on `path` (`undefined`: no `/proc` to tell). */
function holdsFile(pid: number, path: string): boolean | undefined {
  const fds = `/proc/${pid}/fd`;
  if (!existsSync(fds)) return undefined;
  try {
    return readdirSync(fds).some((fd) => {
      try {
        return readlinkSync(`${fds}/${fd}`) === path;
      } catch {
        return false; // closed meanwhile
      }
    });
  } catch {
    return false; // the process is gone
  }
}

/**
 * Runs the CLI in its own process, sends it SIGINT once it is in its wait, and measures how long
 * it took to end after the signal. `heldWhole` is a file another process holds whole: the CLI
 * listens for the signal before it opens the file, and waits from the moment it has (its
 * first try holds its thread for a busy timeout, the signal taken after it, as in any later
 * one). Without it, or without `/proc`, the signal comes `SETTLE_MS` after the start.
 */
async function interruptedInItsWait(
  argv: string[],
  heldWhole?: string,
): Promise<{ code: number | string | null; err: string; out: string; stopMs: number }> {
  const [command, ...args] = cliArgv(argv);
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, HERMES_STATE_LOCK_TIMEOUT: String(LOCK_TIMEOUT_S), NO_COLOR: "1" },
  });
  let err = "";
  let out = "";
  child.stderr.on("data", (chunk) => err += chunk);
  child.stdout.on("data", (chunk) => out += chunk);
  let ended = false;
  const exited = new Promise<number | string | null>((resolve) =>
    child.on("close", (code, killed) => {
      ended = true;
      resolve(code ?? killed);
    })
  );
  const file = heldWhole === undefined ? undefined : realpathSync(heldWhole);
  if (file === undefined || holdsFile(child.pid!, file) === undefined) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  } else {
    const started = Date.now();
    while (!ended && !holdsFile(child.pid!, file)) {
      assert.ok(Date.now() - started < 30_000, `the run did not open ${file}: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  assert.equal(ended, false, `the run ended before the signal: ${err}`);
  const sent = performance.now();
  child.kill("SIGINT");
  const code = await exited;
  return { code, err, out, stopMs: performance.now() - sent };
}

describe("a lock wait interrupted by SIGINT", () => {
  test(
    "doctor --fix waiting for the write lock to rebuild a search table ends at once, nothing repaired",
    {
      timeout: 90_000,
    },
    async () => {
      // hermes-v11.db's trigram table is to be rebuilt: the repair waits for the write lock.
      const path = v11Copy();
      const release = await holdWriteLock(path);
      try {
        const run = await interruptedInItsWait(["--db", path, "doctor", "--fix"]);
        assert.ok(run.stopMs < 5_000, `ended ${Math.round(run.stopMs)} ms after the signal`);
        assert.match(run.err, /interrupted by SIGINT.*: 0 repairs finished, the rest left/);
        assert.match(run.out, /Repairs\n {2}none\n/);
        // Deno's node:child_process reports a child it sent a signal to as killed by it.
        if (runtimeName() !== "deno") assert.equal(run.code, 130, run.err);
      } finally {
        release();
      }
    },
  );

  test(
    "doctor --fix waiting for a file another process holds whole ends at once, nothing repaired",
    {
      timeout: 90_000,
    },
    async () => {
      const path = v11Copy();
      const release = await holdWholeFile(path);
      try {
        const run = await interruptedInItsWait(["--db", path, "doctor", "--fix"], path);
        assert.ok(run.stopMs < 5_000, `ended ${Math.round(run.stopMs)} ms after the signal`);
        assert.match(run.err, /interrupted by SIGINT: nothing was repaired/);
        if (runtimeName() !== "deno") assert.equal(run.code, 130, run.err);
      } finally {
        release();
      }
    },
  );

  test(
    "backup waiting for a file another process holds whole ends at once and leaves no temporary file",
    {
      timeout: 90_000,
    },
    async () => {
      const path = v11Copy();
      const dest = join(dirname(path), "copy.db");
      const release = await holdWholeFile(path);
      try {
        const run = await interruptedInItsWait(["--db", path, "backup", dest], path);
        assert.ok(run.stopMs < 5_000, `ended ${Math.round(run.stopMs)} ms after the signal`);
        assert.match(run.err, /interrupted by SIGINT/);
        if (runtimeName() !== "deno") assert.equal(run.code, 130, run.err);
        assert.deepEqual(readdirSync(dirname(path)).filter((name) => name.includes("copy")), []);
      } finally {
        release();
      }
    },
  );
});
