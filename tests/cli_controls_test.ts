/**
 * Stored text cannot drive the terminal: control characters (ESC, BEL, CR)
 * and bidirectional overrides in ids, titles, sources, models and end
 * reasons are shown as visible marks by every command that prints them,
 * and the delete question reads as it is.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, runCli } from "./_cli_io.ts";
import { rawOpen } from "./_helpers.ts";

const HOSTILE = "\u001b]0;owned\u0007\u001b[2K\rYes\u202e\u009b31m\nNo";

/** Every raw control character or bidi override in `text`. */
function rawControls(text: string): string[] {
  // Our own colours are off (not a terminal): any ESC is the data's.
  // deno-lint-ignore no-control-regex -- finding control characters is the point
  return [...text.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g)]
    .map((m) => m[0]);
}

test("ids, titles, sources, models and end reasons with control characters are shown as marks", async () => {
  const parent = `p${HOSTILE}`;
  const path = await buildDb((db) => {
    db.createSession(parent, `s${HOSTILE}`, { model: `m${HOSTILE}` });
    db.appendMessage(parent, { role: "user", content: "hello kraken" });
    db.endSession(parent, `e${HOSTILE}`);
    db.createSession("child", "cli", { parentSessionId: parent });
    db.appendMessage("child", { role: "user", content: "more kraken" });
  });
  {
    // A title as another writer may have stored it (setSessionTitle cleans its own).
    using raw = await rawOpen(path);
    raw.prepare("UPDATE sessions SET title = ? WHERE id = ?").run(`t${HOSTILE}`, parent);
  }
  const runs = [
    ["list", "--all"],
    ["search", "kraken"],
    ["lineage", "child"],
    ["stats"],
    ["prune", "--dry-run", "--older-than", "0"],
    ["show", "p"],
    ["delete", "p"],
  ];
  for (const argv of runs) {
    const run = await runCli(["--db", path, ...argv], { stdin: "n\n", now: 4102444800 });
    assert.deepEqual(
      rawControls(run.out + run.err),
      [],
      `${argv.join(" ")}: ${JSON.stringify(run.out + run.err)}`,
    );
    assert.ok(
      (run.out + run.err).includes("␛"),
      `${argv.join(" ")} shows the marks: ${run.out + run.err}`,
    );
    // A one-line value (an id, a source) cannot break its row or the question with a newline.
    if (argv[0] !== "show") {
      assert.ok((run.out + run.err).includes("␊No"), `${argv.join(" ")}: ${run.out + run.err}`);
      assert.ok(!/\nNo/.test(run.out + run.err), `${argv.join(" ")} broke a line: ${run.out}`);
    }
  }
});
