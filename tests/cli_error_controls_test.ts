/**
 * Error lines quote what the user typed and what a file holds: a `--db` path
 * holding `ESC [31m` went to stderr raw in `Cannot open database "…"` and in
 * the `recover` command it suggests, and coloured the terminal from there on;
 * so did a mistyped command word. Every error line now shows control
 * characters as marks (`␛`, `␇`), its line breaks kept.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";

/** Whether `text` holds a control character other than a line break. */
function hasControls(text: string): boolean {
  // deno-lint-ignore no-control-regex -- looking for control characters is the point
  return /[\u0000-\u0009\u000b-\u001f\u007f]/.test(text);
}

describe("error lines show control characters as marks", () => {
  test("a --db path that names no database", async () => {
    const path = join(tempDir(), "it's \u001b[31mred\u0007.db");
    writeFileSync(path, "not a database at all, and longer than a header ".repeat(20));
    const run = await runCli(["--db", path, "list"]);
    assert.equal(run.code, 1);
    assert.ok(!hasControls(run.err), JSON.stringify(run.err));
    assert.match(run.err, /Cannot open database ".*it's ␛\[31mred␇\.db"/);
    assert.match(run.err, /hermes-state recover '.*it'\\''s ␛\[31mred␇\.db' /);
  });

  test("a missing --db file and a mistyped command", async () => {
    const missing = await runCli(["--db", join(tempDir(), "gone\u001b]0;x\u0007.db"), "stats"]);
    assert.equal(missing.code, 1);
    assert.ok(!hasControls(missing.err), JSON.stringify(missing.err));
    assert.match(missing.err, /gone␛\]0;x␇\.db/);
    const typo = await runCli(["li\u001b[2Jst"]);
    assert.equal(typo.code, 2);
    assert.ok(!hasControls(typo.err), JSON.stringify(typo.err));
    assert.match(typo.err, /li␛\[2Jst/);
  });

  test("a message of several lines keeps its lines", async () => {
    const run = await runCli(["demo", "--json", "--nope\u001b"]);
    assert.equal(run.code, 2);
    assert.equal(run.err.split("\n").length, 3, run.err);
    assert.match(run.err, /--nope␛/);
  });
});
