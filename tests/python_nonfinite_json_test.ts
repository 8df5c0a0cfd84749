/**
 * Python's `json.dumps` writes a non-finite float as `NaN`, `Infinity` or
 * `-Infinity`, and its `json.loads` reads them back: a Hermes that stored
 * such tool calls, multimodal parts or reasoning details gets them back
 * whole. So do we, where `JSON.parse` alone refused them and the tool
 * calls read as `[]`, the parts as the raw stored text; a transcript read
 * and written back (`replaceMessages`) keeps them, and `import` reads a
 * line of Python's export holding them (it refused the line).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../mod.ts";
import { parsePythonJson } from "../lib/core/python_json_parse.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDbPath, tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";

const TOOL_CALLS = '[{"id": "c1", "type": "function", "function": {"name": "rate", ' +
  '"arguments": {"v": Infinity, "w": -Infinity, "s": "NaN Infinity"}}}]';
const PARTS = '\u0000json:[{"type": "text", "text": "rate this"}, {"type": "score", "score": NaN}]';
const DETAILS = '[{"type": "reasoning.summary", "confidence": NaN}]';

/** A file with one session whose two messages hold what Python writes for non-finite floats. */
async function pythonWritten(): Promise<string> {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path });
    db.createSession("s", "cli");
  }
  using raw = await rawOpen(path);
  raw.prepare(
    `INSERT INTO messages (session_id, role, content, tool_calls, timestamp)
     VALUES ('s', 'assistant', NULL, ?, 1), ('s', 'user', ?, NULL, 2)`,
  ).run(TOOL_CALLS, PARTS);
  raw.prepare("UPDATE messages SET reasoning_details = ? WHERE timestamp = 1").run(DETAILS);
  return path;
}

function checkToolCalls(toolCalls: unknown): void {
  const [call] = toolCalls as { function: { arguments: Record<string, unknown> } }[];
  assert.deepEqual(call.function.arguments, { v: Infinity, w: -Infinity, s: "NaN Infinity" });
}

function checkParts(content: unknown): void {
  assert.ok(Array.isArray(content), `parts, not ${JSON.stringify(content)}`);
  assert.equal(content.length, 2);
  assert.ok(Number.isNaN((content[1] as { score: number }).score));
}

describe("JSON with NaN and Infinity, as Python writes it", () => {
  test("parsePythonJson reads the tokens outside strings only, and refuses what is not JSON", () => {
    assert.deepEqual(parsePythonJson('[Infinity, -Infinity, "NaN", "-Infinity"]'), [
      Infinity,
      -Infinity,
      "NaN",
      "-Infinity",
    ]);
    assert.ok(Number.isNaN(parsePythonJson("NaN")));
    assert.deepEqual(parsePythonJson('{"a\\"NaN": 1}'), { 'a"NaN': 1 });
    assert.throws(() => parsePythonJson("[NaN,]"), SyntaxError);
    assert.throws(() => parsePythonJson("[nan]"), SyntaxError);
    // A token is a value, not a name: refused as Python refuses it (the marker read as a key).
    assert.throws(() => parsePythonJson("{NaN: 1}"), SyntaxError);
    // Text that is not JSON for another reason is said as JSON.parse says it of that text.
    const cut = '{"content": "the score was NaN and';
    const said = (parse: (text: string) => unknown): string => {
      try {
        parse(cut);
        return "parsed";
      } catch (error) {
        return (error as Error).message;
      }
    };
    assert.equal(said(parsePythonJson), said(JSON.parse));
  });

  test("getMessages and getMessagesAsConversation return them parsed", async () => {
    const path = await pythonWritten();
    using db = await SessionDB.open({ path, readonly: true });
    const [assistant, user] = db.getMessages("s");
    checkToolCalls(assistant.tool_calls);
    checkParts(user.content);
    const conversation = db.getMessagesAsConversation("s");
    checkToolCalls(conversation[0].tool_calls);
    const details = conversation[0].reasoning_details as { confidence: number }[];
    assert.ok(Number.isNaN(details[0].confidence));
    checkParts(conversation[1].content);
  });

  test("a transcript read and written back with replaceMessages keeps the stored JSON", async () => {
    const path = await pythonWritten();
    using db = await SessionDB.open({ path });
    db.replaceMessages("s", db.getMessagesAsConversation("s"));
    using raw = await rawOpen(path, true);
    const rows = raw.prepare(
      "SELECT tool_calls, CAST(content AS BLOB) AS content, reasoning_details FROM messages ORDER BY id",
    ).all();
    assert.equal(rows[0].tool_calls, TOOL_CALLS);
    assert.equal(rows[0].reasoning_details, DETAILS);
    assert.equal(new TextDecoder().decode(rows[1].content as Uint8Array), PARTS);
  });

  test("import reads a record line holding them and stores what Python stores", async () => {
    const input = join(tempDir(), "python-export.jsonl");
    const message = `{"id": 1, "session_id": "p", "role": "assistant", "content": null, ` +
      `"tool_calls": ${TOOL_CALLS}, "timestamp": 1700000001.0}`;
    writeFileSync(
      input,
      `{"id": "p", "source": "cli", "started_at": 1700000000.0, "message_count": 1, ` +
        `"tool_call_count": 1, "messages": [${message}]}\n`,
    );
    const path = tempDbPath();
    const run = await runCli(["--db", path, "import", input]);
    assert.equal(run.code, 0, run.err);
    using raw = await rawOpen(path, true);
    assert.equal(raw.prepare("SELECT tool_calls FROM messages").get()!.tool_calls, TOOL_CALLS);
  });
});
