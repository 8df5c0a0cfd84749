/**
 * `recover` while another process holds the whole file (a connection
 * recovering a crashed writer's WAL, a writer of a rollback-journal file
 * writing its pages): it waits as `backup` and `doctor` wait, up to
 * `HERMES_STATE_LOCK_TIMEOUT`, then names the file and the wait. It said
 * only "database is locked", after 5 s on Deno and at once on Node and Bun.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { runCli, v11Copy } from "../_cli_io.ts";
import { holdWholeFile } from "./_held_lock.ts";

describe("recover while another process holds the whole file", () => {
  test("recover gives up after HERMES_STATE_LOCK_TIMEOUT and names the file and the wait", async () => {
    const path = v11Copy();
    const dest = join(dirname(path), "new.db");
    const release = await holdWholeFile(path);
    try {
      const started = performance.now();
      const run = await runCli(["recover", path, dest], {
        env: { HERMES_STATE_LOCK_TIMEOUT: "0.5" },
      });
      const waitedMs = performance.now() - started;
      assert.equal(run.code, 1, run.out);
      assert.equal(
        run.err.replace(/\(waited \d+ s\)/, "(waited N s)"),
        `hermes-state: database is locked by another process (waited N s): ${path}\n`,
      );
      assert.ok(waitedMs >= 500 && waitedMs < 4000, `waited ${Math.round(waitedMs)} ms`);
      assert.ok(!existsSync(dest));
    } finally {
      release();
    }
  });

  test("recover waits for a whole-file lock released within HERMES_STATE_LOCK_TIMEOUT, then recovers every row", async () => {
    const path = v11Copy();
    const dest = join(dirname(path), "new.db");
    const release = await holdWholeFile(path);
    const released = setTimeout(release, 300);
    try {
      const run = await runCli(["--json", "recover", path, dest], {
        env: { HERMES_STATE_LOCK_TIMEOUT: "10" },
      });
      assert.equal(run.code, 0, run.err);
      const result = JSON.parse(run.out) as { sessions: number; messages: number };
      assert.deepEqual([result.sessions, result.messages], [42, 197]);
    } finally {
      clearTimeout(released);
      release();
    }
  });
});
