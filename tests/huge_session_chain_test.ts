/**
 * A long-lived gateway session compresses its context again and again: a
 * chain of hundreds of continuations. `getCompressionTip` walks at most 100
 * of them (Python's bound), and `show` called where it stopped "the live
 * end of the chain".
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, runCli } from "./_cli_io.ts";

/** A chain of `length` sessions, each the compression continuation of the one before. */
async function chainDb(length: number): Promise<string> {
  return await buildDb((db, clock) => {
    for (let i = 0; i < length; i++) {
      const id = `chain${String(i).padStart(4, "0")}`;
      db.createSession(
        id,
        "telegram",
        i > 0 ? { parentSessionId: `chain${String(i - 1).padStart(4, "0")}` } : {},
      );
      db.appendMessage(id, { role: "user", content: `part ${i}` });
      clock.now += 1;
      if (i < length - 1) db.endSession(id, "compression");
      clock.now += 1;
    }
  });
}

test("show names the live end of a chain of 250 compressions, past getCompressionTip's 100 steps", async () => {
  const path = await chainDb(250);
  const first = await runCli(["--db", path, "show", "chain0000"]);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /\nContinued in +chain0249 \(the live end of the chain\)\n/);
  const middle = await runCli(["--db", path, "show", "chain0120"]);
  assert.match(middle.out, /\nContinued in +chain0249 \(the live end of the chain\)\n/);
  const tip = await runCli(["--db", path, "show", "chain0249"]);
  assert.doesNotMatch(tip.out, /Continued in/);
});
