/**
 * A one-shot `sync` whose pass waits for its file while another process
 * holds it whole (`locking_mode = EXCLUSIVE`, as a connection recovering a
 * crashed writer's WAL does): one Ctrl-C stops it at once, with the exit
 * code and summary of a stop while shipping. The pass used to wait inside
 * SQLite, which blocks the event loop, so the signal was not heard until
 * the wait ran out (15 s); a second Ctrl-C was the way out.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { interruptibleIo, runCli, v11Copy } from "./_cli_io.ts";
import { holdWholeFile } from "./health/_held_lock.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

/**
 * Runs `sync FILE --to URL --origin web-1 …extra` while another process
 * holds FILE whole, with a Ctrl-C a second into its wait (a pass blocked
 * inside SQLite hears nothing till the wait ends).
 */
async function syncInterruptedWhileHeld(
  url: string,
  file: string,
  extra: readonly string[] = [],
): Promise<{ code: number; out: string; err: string; stoppedAfterMs: number }> {
  const release = await holdWholeFile(file);
  let interruptedAt: number | undefined;
  let code: number;
  const io = interruptibleIo();
  try {
    const timer = setTimeout(() => {
      if (!io.listening) return;
      interruptedAt = performance.now();
      io.interrupt();
    }, 1000);
    code = await main(["sync", file, "--to", url, "--origin", "web-1", ...extra], io);
    clearTimeout(timer);
  } finally {
    release();
  }
  const stoppedAfterMs = performance.now() - (interruptedAt ?? Infinity);
  return { code, out: io.out, err: io.err, stoppedAfterMs };
}

test("one Ctrl-C stops a one-shot sync waiting for a file held whole, as a stop while shipping", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const file = v11Copy();
  const { code, out, err, stoppedAfterMs } = await syncInterruptedWhileHeld(url, file);
  assert.equal(code, 130, err);
  assert.ok(stoppedAfterMs < 2000, `stopped ${Math.round(stoppedAfterMs)} ms after Ctrl-C`);
  assert.equal(out, "");
  assert.match(
    err,
    /interrupted by SIGINT: not every session was shipped from .*state\.db .*the same sync again ships the rest\n$/,
  );
  // Nothing reached the server, not even the origin; the same sync then ships the file.
  const origins = await runCli(["--db", url, "--json", "origins"]);
  assert.deepEqual(JSON.parse(origins.out), []);
  const again = await runCli(["sync", file, "--to", url, "--origin", "web-1"]);
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, / → web-1: 42 new, 0 updated, 0 deleted sessions; 197 messages/);
});

test("a one-shot sync waits HERMES_STATE_LOCK_TIMEOUT for a file held whole, not 15 s", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const file = v11Copy();
  const release = await holdWholeFile(file);
  const started = performance.now();
  let run;
  try {
    run = await runCli(["sync", file, "--to", url, "--origin", "web-1"], {
      env: { HERMES_STATE_LOCK_TIMEOUT: "1" },
    });
  } finally {
    release();
  }
  const tookMs = performance.now() - started;
  assert.equal(run.code, 1, run.err);
  assert.ok(tookMs < 8000, `gave up after ${Math.round(tookMs)} ms`);
  assert.match(run.err, /locked by another process \(waited 1 s\)/);
  const origins = await runCli(["--db", url, "--json", "origins"]);
  assert.deepEqual(JSON.parse(origins.out), []);
});

test("one Ctrl-C stops sync --follow while its pass waits for a file held whole", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const file = v11Copy();
  // A follower stops after the pass under way, but a pass still waiting has not begun.
  const { code, out, err, stoppedAfterMs } = await syncInterruptedWhileHeld(url, file, [
    "--follow=1",
  ]);
  assert.equal(code, 0, err);
  assert.ok(stoppedAfterMs < 2000, `stopped ${Math.round(stoppedAfterMs)} ms after Ctrl-C`);
  assert.equal(out, "");
  const origins = await runCli(["--db", url, "--json", "origins"]);
  assert.deepEqual(JSON.parse(origins.out), []);
});
