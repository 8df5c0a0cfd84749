/**
 * A search whose best hit is a tool output of millions of words (a log
 * with the word on every line): its snippet is cut in TypeScript
 * (`long_snippet.ts`), which split the whole text into token objects, and
 * their instances into more: 2.6 GB and 10 s for a 50 MB output, where
 * SQLite reads the row in 0.35 s. The child runs under a 128 MB V8 heap,
 * which a search over a 16 MB output ran out of before (it needed 512).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { tempDbPath } from "./_helpers.ts";
import { runtimeBinary, workerEnv } from "./reliability/_runtimes.ts";

const CHILD = join(import.meta.dirname!, "_huge_session_search_child.ts");

test("searching a word on each of 1,000,000 lines of one message fits in a 128 MB heap", () => {
  const deno = runtimeBinary("deno");
  assert.ok(deno !== undefined, "the test runs its child under Deno");
  const path = tempDbPath();
  const run = (heapMb: number) =>
    spawnSync(deno, [
      "run",
      "-A",
      "--no-lock",
      `--v8-flags=--max-old-space-size=${heapMb}`,
      CHILD,
      path,
      "1000000",
    ], { encoding: "utf8", env: workerEnv(), maxBuffer: 1 << 24 });
  const built = run(1024);
  assert.equal(built.status, 0, built.stderr);
  const small = run(128);
  assert.equal(small.status, 0, `exit ${small.status} ${small.signal}: ${small.stderr}`);
  const hits = JSON.parse(small.stdout) as Array<{ id: number; snippet: string }>;
  assert.equal(hits.length, 1);
  assert.equal(
    hits[0].snippet,
    // The first 40 tokens; the text after them cut to "...", as FTS5 cuts it.
    `${">>>zebra<<< crossing. ".repeat(19)}>>>zebra<<< crossing...`,
  );
});
