/**
 * `import` given another output of `hermes-state`: a Markdown or HTML export,
 * or a `--json` document (`show --json`, `list --json`). Each gave a report
 * per line, `line 1: not valid JSON (Unexpected token '#' …)` 20 times, then
 * `stopped at line 28 after 20 bad lines`. Now it is one line that says what
 * the file is and how to write one `import` reads, and, as for a SQLite file,
 * no database is created.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { tempDir } from "./_helpers.ts";
import { runCli, V11, v11Copy } from "./_cli_io.ts";

/** What `argv` prints on a copy of the v11 fixture. */
async function printed(argv: readonly string[]): Promise<string> {
  const run = await runCli(["--db", v11Copy(), ...argv]);
  assert.equal(run.code, 0, run.err);
  return run.out;
}

describe("import of a hermes-state output that is not JSON Lines", () => {
  test("is refused with one line naming it, and creates no database", async () => {
    const dir = tempDir();
    const inputs: [string, string | Uint8Array, RegExp][] = [
      ["notes.md", await printed(["export", "-", "--format", "md"]), /but Markdown \(/],
      ["notes.md.gz", gzipSync(await printed(["export", "-", "--format", "md"])), /Markdown/],
      ["page.html", await printed(["export", "-", "--format", "html"]), /but an HTML page \(/],
      ["show.json", await printed(["--json", "show", V11.live]), /but a JSON document/],
      ["list.json", await printed(["--json", "list"]), /but a JSON document/],
    ];
    for (const [name, content, what] of inputs) {
      const input = join(dir, name);
      writeFileSync(input, content);
      const target = join(dir, `${name}.db`);
      const run = await runCli(["--db", target, "import", input]);
      assert.equal(run.code, 1, name);
      assert.equal(run.err.trimEnd().split("\n").length, 1, run.err.slice(0, 400));
      assert.match(run.err, /^hermes-state: Cannot import .*: it is not JSON Lines but /);
      assert.match(run.err, what);
      assert.match(run.err, /\.jsonl file/);
      assert.ok(!existsSync(target), `${name}: no database was created`);
    }
  });

  test("a JSON Lines export is still read, and so is a line of text among its lines", async () => {
    const lines = await printed(["export", "-"]);
    const run = await runCli(["--db", join(tempDir(), "t.db"), "import", "-"], {
      stdin: `${lines.split("\n")[0]}\n# not a session\n`,
    });
    assert.equal(run.code, 1);
    assert.match(run.out, /^Imported 1 session/);
    assert.match(run.err, /^hermes-state: import: line 2: not valid JSON/);
  });
});
