import { test } from "node:test";
import assert from "node:assert/strict";
import { tempDir } from "../_helpers.ts";
import { describeVerdict, sound } from "./_checks.ts";
import { runCrashes } from "./_scenarios.ts";
import { runSeed, workerRuntimes } from "./_runtimes.ts";

const seed = runSeed();

test(
  `appendMessage() in a process killed with SIGKILL at a random moment loses no acknowledged message, 10 times (seed ${seed})`,
  async () => {
    const report = await runCrashes({
      dir: tempDir(),
      runtimes: workerRuntimes(["deno", "bun"]),
      rounds: 10,
      maxDelayMs: 150,
      seed,
    });
    assert.equal(report.kills, 10, "every writer was still running when killed");
    report.verdicts.forEach((verdict, round) => {
      assert.ok(sound(verdict), `after kill ${round + 1}: ${describeVerdict(verdict)}`);
    });
    const last = report.verdicts.at(-1)!;
    assert.ok(last.appends >= 10, `only ${last.appends} acknowledged appends`);
    // At most the one call in flight at each kill may have landed without its acknowledgement.
    assert.ok(last.rows >= last.appends && last.rows <= last.appends + 10 * 8, String(last.rows));
  },
);
