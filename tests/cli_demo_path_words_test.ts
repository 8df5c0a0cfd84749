/**
 * The commands `demo` suggests name its file as a shell reads it back. A
 * path with a space was put in single quotes as it was, so one holding a
 * `'` (`my demo's.db`) printed `--db '/tmp/…/my demo's.db'`, which a shell
 * reads as an unfinished quote; a path holding `ESC [31m` went to the
 * terminal raw and coloured the rest of the output. Each suggested line is
 * read back here by a real `sh`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";

/** The `--db` word of each "Try next" line of a demo's output. */
function suggestedDbWords(out: string): string[] {
  const lines = out.split("\nTry next:\n")[1].trimEnd().split("\n");
  return lines.map((line) =>
    line.match(/^ {2}hermes-state --db (.+) (?:(?:show|search|lineage) \S+|list --all|stats)$/)![1]
  );
}

/** What `sh` makes of the `words` of a command line: one argument a line. */
function shellReads(words: string): string[] {
  const out = execFileSync("sh", ["-c", `printf '%s\\n' ${words}`], { encoding: "utf8" });
  return out.trimEnd().split("\n");
}

describe("demo's suggested commands", () => {
  test("quote a path holding a quote, a space and a $ as sh reads it back", async () => {
    const path = join(tempDir(), "my demo's $HOME.db");
    const run = await runCli(["demo", path]);
    assert.equal(run.code, 0, run.err);
    assert.ok(run.out.startsWith(`Demo database: ${path}\n`));
    const words = suggestedDbWords(run.out);
    assert.equal(words.length, 5);
    for (const word of words) assert.deepEqual(shellReads(word), [path]);
  });

  test("show a path's control characters as marks", async () => {
    const path = join(tempDir(), "red\u001b[31m.db");
    const run = await runCli(["demo", path]);
    assert.equal(run.code, 0, run.err);
    // deno-lint-ignore no-control-regex -- looking for the escape is the point
    assert.doesNotMatch(run.out, /\u001b/);
    assert.ok(run.out.startsWith(`Demo database: ${path.replace("\u001b", "␛")}\n`));
    for (const word of suggestedDbWords(run.out)) assert.match(word, /red␛\[31m\.db'$/);
  });
});
