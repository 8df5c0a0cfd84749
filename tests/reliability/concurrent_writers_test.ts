import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { tempDir } from "../_helpers.ts";
import { describeVerdict, sound } from "./_checks.ts";
import { runConcurrentWriters } from "./_scenarios.ts";
import { runSeed, workerRuntimes } from "./_runtimes.ts";

const seed = runSeed();

test(
  `appendMessage() from 4 processes on Deno and Bun at once, with a reader searching, keeps every append exactly once (seed ${seed})`,
  async () => {
    const mixed = workerRuntimes(["deno", "bun"]);
    const report = await runConcurrentWriters({
      dir: tempDir(),
      writers: [0, 1, 2, 3].map((i) => mixed[i % mixed.length]),
      readers: [workerRuntimes(["node", runtimeName()])[0]],
      appendsEach: 200,
      seed,
    });
    const { verdict } = report;
    assert.ok(sound(verdict), describeVerdict(verdict));
    assert.equal(verdict.appends, 800);
    assert.equal(verdict.rows, 800);
    assert.ok(report.shared > 0 && report.shared < 800, `shared session has ${report.shared}`);
    // The writers really wrote at the same time: each one's span, from its first attempt to its
    // last acknowledged append, overlaps another's. (Who holds the lock when is up to SQLite's
    // busy handler, which is not fair: a writer can wait while another commits many times.)
    const overlaps = report.spans.every(([first, last], i) =>
      report.spans.some(([otherFirst, otherLast], j) =>
        i !== j && first <= otherLast && otherFirst <= last
      )
    );
    assert.ok(overlaps, `writers did not overlap: ${JSON.stringify(report.spans)}`);
    // The reader saw consistent counts in every round and searched without an error.
    const [word, rounds, seen] = report.readers[0].split(" ");
    assert.equal(word, "reads", report.readers[0]);
    assert.ok(Number(rounds) > 0 && Number(seen) <= 800, report.readers[0]);
  },
);
