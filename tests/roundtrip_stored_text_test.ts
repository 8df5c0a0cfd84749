/**
 * A message's stored `tool_calls` and multimodal `content` between files:
 *
 * - `copy` file → file wrote an integer beyond 2^53 inside the content
 *   rounded when the same message's `tool_calls` was carried as text (compact
 *   JSON, duplicate keys, `1.0`): the import's strip of that carried text made
 *   the message anew and lost the text it kept of the content;
 * - `export` wrote a `NaN` or `Infinity` inside them (which Python's
 *   `json.dumps` writes and `json.loads` reads) as `null`, carrying nothing,
 *   so an import stored `null`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { fileWithStoredTexts, storedMessageTexts } from "./_raw_rows.ts";
import { runCli } from "./_cli_io.ts";

describe("stored text between files", () => {
  test("copy keeps a long integer in the content beside tool calls carried as text", async () => {
    const content = '\u0000json:[{"type": "text", "n": 1152921504606846977}]';
    const path = await fileWithStoredTexts([
      [content, '[{"a":1,"a":2}]'],
      [content, '[{"a":1}]'],
      [content, '[{"a": 1.0}]'],
      [content, null],
    ]);
    const dest = join(tempDir(), "copy.db");
    const run = await runCli(["copy", path, dest]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(await storedMessageTexts(dest), await storedMessageTexts(path));
  });

  test("export then import keeps NaN and Infinity in tool calls and content", async () => {
    const path = await fileWithStoredTexts([
      ['\u0000json:[{"type": "text", "text": "t", "n": NaN}]', '[{"x": NaN, "y": -Infinity}]'],
    ]);
    const exported = await runCli(["--db", path, "export", "-"]);
    assert.equal(exported.code, 0, exported.err);
    // Still JSON every reader takes: the value says null, the bytes are carried beside it.
    const record = JSON.parse(exported.out);
    assert.deepEqual(record.messages[0].tool_calls, [{ x: null, y: null }]);
    assert.ok(record.messages[0].hermes_state_bytes?.tool_calls);
    const lines = join(tempDir(), "export.jsonl");
    writeFileSync(lines, exported.out);
    const imported = join(tempDir(), "imported.db");
    const run = await runCli(["--db", imported, "import", lines]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(await storedMessageTexts(imported), await storedMessageTexts(path));
  });
});
