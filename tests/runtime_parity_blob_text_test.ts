/**
 * A BLOB where the file should hold text (a title, a model, a system prompt,
 * a message's reasoning or tool name: Python's sqlite3 stores `bytes` as a
 * BLOB) is shown by the text commands as its bytes read as UTF-8, the
 * same on Deno, Bun and Node. They used to fail with the runtime's own
 * TypeError ("text.replace is not a function", worded differently by
 * each engine), or to hide the reasoning.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";

/** A copy of the v11 fixture with session `blob_s`, whose text columns hold BLOBs. */
async function blobDb(): Promise<string> {
  const path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, model, system_prompt, started_at, message_count, title)
      VALUES ('blob_s', 'cli', x'6d6f64656c00626c6f62', x'7379730070726f6d7074', 1777400000, 3,
              x'626c6f620074697465');
    INSERT INTO messages (session_id, role, content, timestamp, reasoning)
      VALUES ('blob_s', 'user', x'68656c6c6f00776f726c64207061726974796262', 1777400001,
              x'72656173006f6e');
    INSERT INTO messages (session_id, role, content, timestamp, tool_name)
      VALUES ('blob_s', 'tool', x'746f6f6c206f7574ff207061726974796262', 1777400002, x'746f6f6c00');
    INSERT INTO messages (session_id, role, content, timestamp)
      VALUES ('blob_s', 'assistant', 'plain text paritybb', 1777400003);
    INSERT INTO messages (session_id, role, content, timestamp, tool_name)
      VALUES ('blob_s', 'tool', 'escaped paritybb', 1777400004,
              'rd' || char(27) || '[31m' || char(0) || 'x');
  `);
  return path;
}

describe("text commands over BLOBs in text columns", () => {
  test("show prints each BLOB as its UTF-8 text, NUL visible", async () => {
    const path = await blobDb();
    const run = await runCli(["--db", path, "show", "blob_s", "--reasoning", "--full", "--system"]);
    assert.equal(run.err, "");
    assert.equal(run.code, 0);
    assert.match(run.out, /Title\s+blob␀tite/);
    assert.match(run.out, /Model\s+model␀blob/);
    assert.ok(run.out.includes("sys␀prompt"), run.out);
    assert.ok(run.out.includes("┊ reas␀on"), run.out);
    assert.ok(run.out.includes("── tool · tool␀ ·"), run.out);
    assert.ok(run.out.includes("plain text paritybb"), run.out);
  });

  test("search prints hits of a session titled by a BLOB, its tool name visible", async () => {
    const path = await blobDb();
    const run = await runCli(["--db", path, "search", "paritybb"]);
    assert.equal(run.err, "");
    assert.equal(run.code, 0);
    assert.ok(run.out.includes("blob␀tite"), run.out);
    assert.ok(run.out.includes("plain text >>>paritybb<<<"), run.out);
    assert.ok(run.out.includes("▶ tool (tool␀):"), run.out);
    assert.ok(run.out.includes("▶ tool (rd␛[31m␀x): escaped"), run.out);
    // deno-lint-ignore no-control-regex -- no raw control character may reach the terminal
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(run.out), "no raw control character");
  });

  test("list prints the BLOB title and model of a session", async () => {
    const path = await blobDb();
    const run = await runCli(["--db", path, "list", "--all", "--limit", "100"]);
    assert.equal(run.err, "");
    assert.equal(run.code, 0);
    assert.ok(run.out.includes("blob␀tite"), run.out);
  });
});
