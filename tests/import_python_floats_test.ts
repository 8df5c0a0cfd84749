/**
 * `import` of Python's own export (`json.dumps` of each record) writes the
 * floats inside `tool_calls` and multimodal content as Python stored them:
 * a float whose value is whole (`1.0`, `-0.0`, `1e+16`) was read as the
 * integer and stored as one (`1`, `0`, `10000000000000000`), an int to
 * Python on its next read. Every other number of the record stays a number.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";

/** The JSON Python's `json.dumps` writes for these parts and calls (and stores, prefixed). */
const PARTS = '[{"type": "text", "text": "t", "vals": [1.0, -0.0, 1e+16, 1e-07, 1e+300, 0.1, 2]}]';
const CALLS = '[{"id": "c", "vals": [1.0, 3e+22], "big": 18446744073709551616}]';

describe("import of Python's export keeps its floats", () => {
  test("a whole float inside content and tool_calls is stored as Python stored it", async () => {
    const folder = tempDir();
    const input = join(folder, "python.jsonl");
    // As Python's `json.dumps(record)` writes the line: the nested values as `json.dumps` alone.
    writeFileSync(
      input,
      `{"id": "s", "source": "cli", "started_at": 1777400000.0, "input_tokens": 5, ` +
        `"estimated_cost_usd": 0.0, "messages": [{"role": "user", "content": ${PARTS}, ` +
        `"tool_calls": ${CALLS}, "timestamp": 1777400001.0, "token_count": 7}]}\n`,
    );
    const db = join(folder, "state.db");
    const run = await runCli(["--db", db, "import", input]);
    assert.equal(run.code, 0, run.err);
    using raw = await rawOpen(db, true);
    const message = raw.prepare(
      "SELECT content, tool_calls, typeof(timestamp) AS t, token_count FROM messages",
    ).get();
    assert.equal(message?.content, `\u0000json:${PARTS}`);
    assert.equal(message?.tool_calls, CALLS);
    assert.equal(message?.t, "real");
    assert.equal(Number(message?.token_count), 7);
    const session = raw.prepare(
      "SELECT started_at, estimated_cost_usd, input_tokens FROM sessions WHERE id = 's'",
    ).get();
    assert.deepEqual(
      [session?.started_at, session?.estimated_cost_usd, Number(session?.input_tokens)],
      [1777400000, 0, 5],
    );
  });
});
