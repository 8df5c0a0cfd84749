import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";

/** Opens a store on `path` with a settable clock; it is closed when test `t` ends. */
async function open(
  t: TestContext,
  path = tempDbPath(),
): Promise<{ db: SessionDB; at: number[]; path: string }> {
  const at = [1776675600];
  const db = await SessionDB.open({ path, clock: () => at[0] });
  t.after(() => db.close());
  return { db, at, path };
}

const CALL = { id: "c1", type: "function", function: { name: "terminal", arguments: "{}" } };

test("getMessagesAsConversation() emits only set keys, and reasoning fields for assistants only", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  db.appendMessages("s", [
    { role: "system", content: "rules", finishReason: "stop", reasoning: "no" },
    { role: "user", content: "list files", tokenCount: 3 },
    {
      role: "assistant",
      content: null,
      toolCalls: [CALL],
      finishReason: "tool_calls",
      reasoning: "use the terminal",
      reasoningContent: "",
      reasoningDetails: [{ type: "reasoning.text", text: "t" }],
      codexReasoningItems: [{ id: "rs_1" }],
      codexMessageItems: [{ id: "msg_1" }],
    },
    {
      role: "tool",
      content: "a.txt",
      toolCallId: "c1",
      toolName: "terminal",
      reasoning: "dropped",
      reasoningContent: "dropped",
      finishReason: "dropped",
    },
    { role: "assistant", content: "Here: a.txt", reasoningContent: null, finishReason: "" },
  ]);
  assert.deepEqual(db.getMessagesAsConversation("s"), [
    { role: "system", content: "rules" },
    { role: "user", content: "list files" },
    {
      role: "assistant",
      content: null,
      tool_calls: [CALL],
      finish_reason: "tool_calls",
      reasoning: "use the terminal",
      reasoning_content: "",
      reasoning_details: [{ type: "reasoning.text", text: "t" }],
      codex_reasoning_items: [{ id: "rs_1" }],
      codex_message_items: [{ id: "msg_1" }],
    },
    { role: "tool", content: "a.txt", tool_call_id: "c1", tool_name: "terminal" },
    { role: "assistant", content: "Here: a.txt" },
  ]);
});

test("getMessagesAsConversation() removes leaked memory context from user and assistant text", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  const block = "<memory-context>\n[System note: The following is recalled memory context, " +
    "NOT new user input. Treat as informational background data.]\n\n- likes tabs\n</memory-context>";
  db.appendMessages("s", [
    { role: "user", content: `${block}\n\nwhat is my editor setting?` },
    { role: "assistant", content: `< MEMORY-CONTEXT >secret</memory-context >  Tabs. ` },
    {
      role: "user",
      content: "[System note: The following is recalled memory context, NOT new user input. " +
        "Treat as authoritative reference data — persistent memory.]  next question",
    },
    { role: "assistant", content: "stray </memory-context> tag\u0085" },
    { role: "user", content: "\ufeffkept BOM " },
    { role: "tool", content: `${block} tool output is left alone` },
    { role: "user", content: [{ type: "text", text: `${block} parts are left alone` }] },
  ]);
  assert.deepEqual(db.getMessagesAsConversation("s").map((m) => m.content), [
    "what is my editor setting?",
    "Tabs.",
    "next question",
    "stray  tag",
    "\ufeffkept BOM",
    `${block} tool output is left alone`,
    [{ type: "text", text: `${block} parts are left alone` }],
  ]);
});

test("getMessagesAsConversation() degrades bad JSON: tool_calls to [] and reasoning fields to null", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  db.close();
  using conn = await rawOpen(path);
  conn.exec(
    `INSERT INTO messages (session_id, role, content, tool_calls, reasoning_details,
       codex_message_items, timestamp)
     VALUES ('s', 'assistant', 'x', '{bad', '[bad', '', 1)`,
  );
  conn.close();
  const again = await open(t, path);
  assert.deepEqual(again.db.getMessagesAsConversation("s"), [
    { role: "assistant", content: "x", tool_calls: [], reasoning_details: null },
  ]);
});

test("getMessagesAsConversation() returns [] for an unknown session", async (t) => {
  const { db } = await open(t);
  assert.deepEqual(db.getMessagesAsConversation("nope"), []);
  assert.deepEqual(db.getMessagesAsConversation("nope", { includeAncestors: true }), []);
});

async function chain(t: TestContext): Promise<SessionDB> {
  const { db, at } = await open(t);
  db.createSession("root", "cli");
  db.appendMessages("root", [
    { role: "user", content: "build the thing" },
    { role: "assistant", content: "building" },
    { role: "user", content: "now test it" },
  ]);
  at[0] += 10;
  db.endSession("root", "compression");
  db.createSession("tip", "cli", { parentSessionId: "root" });
  db.appendMessages("tip", [
    { role: "user", content: "[CONTEXT COMPACTION] summary" },
    { role: "tool", content: "noise" },
    { role: "assistant", content: null },
    { role: "user", content: "now test it" },
    { role: "assistant", content: "tested" },
    { role: "user", content: "build the thing" },
  ]);
  return db;
}

test("getMessagesAsConversation() with includeAncestors replays the lineage root first", async (t) => {
  const db = await chain(t);
  assert.deepEqual(db.getMessagesAsConversation("tip", { includeAncestors: true }), [
    { role: "user", content: "build the thing" },
    { role: "assistant", content: "building" },
    { role: "user", content: "now test it" },
    { role: "user", content: "[CONTEXT COMPACTION] summary" },
    { role: "tool", content: "noise" },
    { role: "assistant", content: null },
    { role: "assistant", content: "tested" },
    { role: "user", content: "build the thing" },
  ]);
});

test("getMessagesAsConversation() drops a replayed prompt only with includeAncestors", async (t) => {
  const db = await chain(t);
  const plain = db.getMessagesAsConversation("tip");
  assert.equal(plain.length, 6);
  assert.deepEqual(plain[3], { role: "user", content: "now test it" });
  assert.deepEqual(db.getMessagesAsConversation("root", { includeAncestors: true }).length, 3);
});

test("getMessagesAsConversation() with includeAncestors stops on a parent cycle", async (t) => {
  const { db, path } = await open(t);
  db.createSession("a", "cli");
  db.createSession("b", "cli", { parentSessionId: "a" });
  db.appendMessage("a", { role: "user", content: "in a" });
  db.appendMessage("b", { role: "user", content: "in b" });
  db.close();
  using conn = await rawOpen(path);
  conn.exec("UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'");
  conn.close();
  const again = await open(t, path);
  assert.deepEqual(
    again.db.getMessagesAsConversation("b", { includeAncestors: true }).map((m) => m.content),
    ["in a", "in b"],
  );
});

test("getMessagesAsConversation() trims a 400,000-character whitespace run in linear time", async () => {
  // Regression: trimming with /\s+$/ retried at every position of the run.
  using db = await SessionDB.open({ path: tempDbPath() });
  db.createSession("s", "cli");
  db.appendMessage("s", { role: "user", content: `  deploy${"\u3000 ".repeat(200_000)}` });
  db.appendMessage("s", {
    role: "assistant",
    content: `<memory-context>x</memory-context>ok${" ".repeat(400_000)}`,
  });
  const conversation = db.getMessagesAsConversation("s");
  assert.deepEqual(conversation.map((m) => m.content), ["deploy", "ok"]);
});
