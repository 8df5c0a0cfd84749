import { test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, recordingIo, v11Copy, withDb } from "./_cli_io.ts";
import { JSON_PIECE_CHARS } from "../lib/cli/print_record_json.ts";
import { jsonText } from "../lib/render/json_line.ts";
import { renderTranscript } from "../lib/render/transcript.ts";
import { createStyle } from "../lib/render/style.ts";
import { main } from "../lib/cli/main.ts";
import { TRANSCRIPT_PIECE_CHARS } from "../lib/cli/print_transcript.ts";
import type { NewMessage } from "../lib/core/types.ts";

/** 20,000 messages: questions, tool calls and their outputs of about 400 characters. */
function message(i: number): NewMessage {
  if (i % 3 === 0) return { role: "user", content: `question ${i}` };
  if (i % 3 === 1) {
    return {
      role: "assistant",
      content: null,
      toolCalls: [{
        id: `c${i}`,
        type: "function",
        function: { name: "terminal", arguments: "{}" },
      }],
    };
  }
  return {
    role: "tool",
    toolName: "terminal",
    toolCallId: `c${i - 1}`,
    content: `${i} `.repeat(80),
  };
}

async function hugeDb(): Promise<string> {
  return await buildDb((db) => {
    db.createSession("huge", "gateway");
    for (let i = 0; i < 20_000; i += 2_000) {
      db.appendMessages("huge", Array.from({ length: 2_000 }, (_, j) => message(i + j)));
    }
  });
}

/** Runs `show`, recording each write to standard output. */
async function show(path: string, ...flags: string[]) {
  const io = recordingIo();
  const writes: number[] = [];
  const record = io.stdout;
  io.stdout = (text) => {
    writes.push(text.length);
    record(text);
  };
  const code = await main(["--db", path, "show", "huge", ...flags], io);
  return { code, out: io.out, writes, drains: io.drains };
}

test("show prints a 20,000-message transcript in pieces, each awaited out, not as one string", async () => {
  const path = await hugeDb();
  const { code, out, writes, drains } = await show(path, "--full");
  assert.equal(code, 0);
  assert.ok(out.length > 4 * TRANSCRIPT_PIECE_CHARS, `${out.length} characters`);
  // Before: the whole transcript (about 4.5 MB) went out in one write, and was one string.
  const largest = Math.max(...writes);
  assert.ok(largest < 2 * TRANSCRIPT_PIECE_CHARS, `largest write: ${largest} characters`);
  assert.ok(drains >= 4, `${drains} drains`);
  // Every message, in order, as one rendering of them all gives it.
  const messages = await withDb(path, (db) => db.getMessages("huge"));
  const transcript = renderTranscript(messages, { style: createStyle(false), full: true });
  assert.ok(out.endsWith(`\n${transcript}`));
  assert.ok(!out.slice(0, out.length - transcript.length).includes("question 0"));
});

test("show of a session without messages still says so", async () => {
  const path = await buildDb((db) => db.createSession("huge", "gateway"));
  const { code, out } = await show(path);
  assert.equal(code, 0);
  assert.ok(out.endsWith("\n(no messages)\n"));
});

test("show --json of a 20,000-message session goes out in pieces, as printJson writes it", async () => {
  const path = await hugeDb();
  const { code, out, writes } = await show(path, "--json");
  assert.equal(code, 0);
  assert.ok(out.length > 4 * JSON_PIECE_CHARS, `${out.length} characters`);
  // Before: the whole document in one write.
  const largest = Math.max(...writes);
  assert.ok(largest < 2 * JSON_PIECE_CHARS, `largest write: ${largest} characters`);
  const record = await withDb(path, (db) => db.exportSession("huge"));
  assert.equal(out, `${jsonText(record, 2)}\n`);
});

test("show --json prints every session of the v11 fixture as printJson does", async () => {
  const path = v11Copy();
  const records = await withDb(path, (db) => db.exportAll());
  assert.ok(records.length > 5);
  for (const { id } of records) {
    const io = recordingIo();
    assert.equal(await main(["--db", path, "show", id, "--json"], io), 0, io.err);
    const record = await withDb(path, (db) => db.exportSession(id));
    assert.equal(io.out, `${jsonText(record, 2)}\n`, id);
  }
});
