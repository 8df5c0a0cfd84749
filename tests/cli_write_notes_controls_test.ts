/**
 * The lines `export` and `import` print after writing: `Exported N sessions
 * to FILE` printed a FILE holding `ESC [31m` raw (the terminal turned red),
 * and `line N: session ID took the title 'T' …` broke in two at a newline in
 * the title. Both are one line now, control characters shown as marks.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDbPath, tempDir } from "./_helpers.ts";
import { runCli, V11, v11Copy } from "./_cli_io.ts";

/** Whether `text` holds a control character other than a line break. */
function hasControls(text: string): boolean {
  // deno-lint-ignore no-control-regex -- looking for control characters is the point
  return /[\u0000-\u0009\u000b-\u001f\u007f]/.test(text);
}

describe("the notes of export and import", () => {
  test("export names its file with its control characters as marks", async () => {
    const out = join(tempDir(), "red\u001b[31m.jsonl");
    const run = await runCli(["--db", v11Copy(), "export", "--session-id", V11.live, out]);
    assert.equal(run.code, 0, run.err);
    assert.equal(run.out, `Exported 1 session to ${out.replace("\u001b", "␛")}\n`);
  });

  test("import says a taken title on one line", async () => {
    const target = tempDbPath();
    const title = "two\nlines";
    const line = (id: string) =>
      JSON.stringify({ id, source: "cli", started_at: 1777453504, title, messages: [] });
    const run = await runCli(["--db", target, "import", "-"], {
      stdin: `${line("first")}\n${line("second")}\n`,
    });
    assert.equal(run.code, 0, run.err);
    assert.equal(
      run.err,
      "hermes-state: import: line 2: session second took the title 'two␊lines #2' " +
        "(another session has the one it had)\n",
    );
    assert.ok(!hasControls(run.err));
  });
});
