import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { ReadonlyError } from "../lib/core/errors.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import type { SqlRow, SqlValue } from "../lib/sqlite/driver/types.ts";
import type { ConversationMessage, JsonValue, NewMessage } from "../lib/core/types.ts";
import { copyFixture, openClocked, rawOpen, tempDbPath } from "./_helpers.ts";

const T0 = 1776675600.25;

/** Opens a store on `path` with a settable clock at T0; it is closed when test `t` ends. */
function open(t: TestContext, path?: string): ReturnType<typeof openClocked> {
  return openClocked(t, T0, path);
}

async function raw(path: string, sql: string, ...params: SqlValue[]): Promise<SqlRow[]> {
  const conn = await rawOpen(path, true);
  try {
    return conn.prepare(sql).all(...params);
  } finally {
    conn.close();
  }
}

function counters(db: SessionDB, id: string): [number, number] {
  const row = db.getSession(id)!;
  return [row.message_count, row.tool_call_count];
}

function isForeignKeyError(error: unknown): boolean {
  assert.ok(error instanceof SqliteError, `not a SqliteError: ${error}`);
  assert.equal(error.codeName, "SQLITE_CONSTRAINT");
  assert.ok(error.isConstraint);
  assert.match(error.message, /FOREIGN KEY/);
  return true;
}

async function ftsIntact(path: string): Promise<void> {
  const conn = await rawOpen(path);
  try {
    conn.exec("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
    conn.exec("INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES ('integrity-check')");
  } finally {
    conn.close();
  }
}

const CALL = (id: string) => ({
  id,
  type: "function",
  function: { name: "terminal", arguments: '{"command": "ls"}' },
});

// ── appendMessage ─────────────────────────────────────────────────────────

test("appendMessage() returns increasing ids and stamps each message with the clock", async (t) => {
  const { db, at } = await open(t);
  db.createSession("s", "cli");
  const a = db.appendMessage("s", { role: "user", content: "hello" });
  at[0] = T0 + 1.5;
  const b = db.appendMessage("s", { role: "assistant", content: "hi" });
  assert.ok(b > a);
  assert.deepEqual(db.getMessages("s").map((m) => [m.id, m.timestamp]), [[a, T0], [
    b,
    T0 + 1.5,
  ]]);
});

test("appendMessage() counts tool calls by array length, 1 for another value, 0 for tool results", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  db.appendMessage("s", { role: "user", content: "go" });
  assert.deepEqual(counters(db, "s"), [1, 0]);
  db.appendMessage("s", { role: "assistant", toolCalls: [CALL("c1"), CALL("c2")] });
  assert.deepEqual(counters(db, "s"), [2, 2]);
  db.appendMessage("s", { role: "tool", content: "out", toolCallId: "c1", toolName: "terminal" });
  assert.deepEqual(counters(db, "s"), [3, 2]);
  db.appendMessage("s", { role: "assistant", toolCalls: CALL("c3") });
  assert.deepEqual(counters(db, "s"), [4, 3]);
  db.appendMessage("s", { role: "assistant", toolCalls: [] });
  assert.deepEqual(counters(db, "s"), [5, 3]);
  db.appendMessage("s", { role: "user", toolCalls: [CALL("c4")] });
  assert.deepEqual(counters(db, "s"), [6, 4]);
});

test("appendMessage() stores JSON fields as Python's json.dumps text and empty ones as NULL", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  const id = db.appendMessage("s", {
    role: "assistant",
    content: "done",
    toolCalls: [{
      id: "c1",
      type: "function",
      function: { name: "write_file", arguments: '{"content": "회의록"}' },
    }],
    reasoningDetails: [{ type: "reasoning.text", text: "思考" }],
    codexReasoningItems: [],
    codexMessageItems: {},
    reasoning: "why",
    reasoningContent: "",
    finishReason: "tool_calls",
    tokenCount: 42,
  });
  db.appendMessage("s", { role: "assistant", toolCalls: [], reasoningDetails: "" });
  db.close();
  const rows = await raw(
    path,
    `SELECT tool_calls, reasoning_details, codex_reasoning_items, codex_message_items,
      reasoning, reasoning_content, finish_reason, token_count FROM messages ORDER BY id`,
  );
  assert.deepEqual(rows[0], {
    tool_calls: '[{"id": "c1", "type": "function", "function": {"name": "write_file", ' +
      '"arguments": "{\\"content\\": \\"\\ud68c\\uc758\\ub85d\\"}"}}]',
    reasoning_details: '[{"type": "reasoning.text", "text": "\\u601d\\u8003"}]',
    codex_reasoning_items: null,
    codex_message_items: null,
    reasoning: "why",
    reasoning_content: "",
    finish_reason: "tool_calls",
    token_count: 42,
  });
  assert.equal(rows[1].tool_calls, null);
  assert.equal(rows[1].reasoning_details, null);
  assert.ok(id > 0);
});

test("appendMessage() writes multimodal content that a raw query reads as \\u0000json: + Python JSON", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "telegram");
  const parts: JsonValue[] = [
    { type: "text", text: "What breed is this dog? 🐕" },
    { type: "image_url", image_url: { url: "https://example.org/dog.jpg" } },
  ];
  const single = { type: "text", text: "one part" };
  db.appendMessage("s", { role: "user", content: parts });
  db.appendMessage("s", { role: "user", content: single });
  assert.deepEqual(db.getMessages("s").map((m) => m.content), [parts, single]);
  db.close();
  const expectedText = "\u0000json:" +
    '[{"type": "text", "text": "What breed is this dog? \\ud83d\\udc15"}, ' +
    '{"type": "image_url", "image_url": {"url": "https://example.org/dog.jpg"}}]';
  const rows = await raw(path, "SELECT content, hex(CAST(content AS BLOB)) AS bytes FROM messages");
  assert.equal(rows[0].content, expectedText);
  const hex = Array.from(new TextEncoder().encode(expectedText))
    .map((byte) => byte.toString(16).padStart(2, "0").toUpperCase()).join("");
  assert.equal(rows[0].bytes, hex);
  assert.equal(rows[1].content, '\u0000json:{"type": "text", "text": "one part"}');
});

test("getMessages() reads Python's multimodal messages back as the original parts", async (t) => {
  const { db } = await open(t, copyFixture("hermes-v11.db"));
  const byId = new Map(db.getMessages("20260422_090717_50093a").map((m) => [m.id, m]));
  assert.deepEqual(byId.get(86)!.content, [
    { type: "text", text: "What's wrong in this screenshot of the chat-send dashboard?" },
    {
      type: "image_url",
      image_url: {
        url:
          "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      },
    },
  ]);
  assert.deepEqual(byId.get(93)!.content, {
    type: "text",
    text: "One more: here is the nginx config as a single part.",
  });
  assert.equal(
    byId.get(92)!.content,
    "ELF\u0002\u0001\u0001\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0004\u0000>" +
      "\u0000\u0001\u0000\u0000\u0000 — core header (raw, NUL bytes kept)",
  );
  const photo = db.getMessages("20260423_090716_ebc94a0a").find((m) => Array.isArray(m.content));
  assert.deepEqual(photo!.content, [
    { type: "text", text: "What breed is this dog? \u{1F415}" },
    {
      type: "image_url",
      image_url: { url: "https://api.telegram.org/file/bot<token>/photos/file_42.jpg" },
    },
  ]);
});

test("appendMessage() keeps a string with NUL bytes exactly", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  const text = "a\u0000b\u0000\u0000c json:";
  db.appendMessage("s", { role: "tool", content: text });
  db.appendMessage("s", { role: "tool", content: "\u0000json:not json" });
  assert.deepEqual(db.getMessages("s").map((m) => m.content), [text, "\u0000json:not json"]);
  db.close();
  const rows = await raw(
    path,
    "SELECT length(CAST(content AS BLOB)) AS n FROM messages ORDER BY id",
  );
  assert.deepEqual(rows.map((r) => r.n), [12, 14]);
});

test("appendMessage() to a missing session throws the foreign-key error and writes nothing", async (t) => {
  const { db, path } = await open(t);
  db.createSession("other", "cli");
  assert.throws(
    () => db.appendMessage("missing", { role: "user", content: "lost" }),
    isForeignKeyError,
  );
  assert.deepEqual(counters(db, "other"), [0, 0]);
  db.close();
  assert.deepEqual(await raw(path, "SELECT COUNT(*) AS n FROM messages"), [{ n: 0 }]);
  assert.deepEqual(await raw(path, "SELECT COUNT(*) AS n FROM messages_fts"), [{ n: 0 }]);
});

test("appendMessage() rejects a field of the wrong type with a TypeError naming it", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  assert.throws(
    () => db.appendMessage("s", { role: "tool", toolName: { x: 1 } as unknown as string }),
    {
      name: "TypeError",
      message: 'Cannot append message: toolName must be a string: current value is {"x":1}',
    },
  );
  assert.throws(() => db.appendMessage("s", { role: 7 } as unknown as NewMessage), TypeError);
  assert.deepEqual(counters(db, "s"), [0, 0]);
});

test("appendMessage() keeps both FTS indexes consistent", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  db.appendMessage("s", { role: "assistant", toolCalls: [CALL("c1")] });
  db.appendMessage("s", { role: "tool", content: "数据库迁移计划", toolName: "terminal" });
  db.close();
  await ftsIntact(path);
  const hits = await raw(
    path,
    "SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH ?",
    '"迁移计划"',
  );
  assert.equal(hits.length, 1);
});

// ── appendMessages ────────────────────────────────────────────────────────

test("appendMessages() appends in order in one go and adds up the counters", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  db.appendMessage("s", { role: "user", content: "before" });
  const ids = db.appendMessages("s", [
    { role: "user", content: "q" },
    { role: "assistant", toolCalls: [CALL("a"), CALL("b")] },
    { role: "tool", content: "r", toolCallId: "a" },
    { role: "assistant", toolCalls: CALL("c") },
    { role: "assistant", content: [{ type: "text", text: "parts" }] },
  ]);
  assert.equal(ids.length, 5);
  assert.deepEqual([...ids].sort((x, y) => x - y), ids);
  assert.deepEqual(counters(db, "s"), [6, 3]);
  const messages = db.getMessages("s");
  assert.deepEqual(messages.slice(1).map((m) => m.id), ids);
  assert.deepEqual(messages[5].content, [{ type: "text", text: "parts" }]);
});

test("appendMessages() gives timestamps from the clock, 1 µs apart", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  db.appendMessages("s", [{ role: "user" }, { role: "user" }, { role: "user" }]);
  const stamps = db.getMessages("s").map((m) => m.timestamp);
  let expectedStamp = T0;
  for (const stamp of stamps) {
    assert.equal(stamp, expectedStamp);
    expectedStamp += 1e-6;
  }
});

test("appendMessages() of an empty list returns [] and writes nothing", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  assert.deepEqual(db.appendMessages("s", []), []);
  assert.deepEqual(db.appendMessages("missing", []), []);
  assert.deepEqual(counters(db, "s"), [0, 0]);
});

test("appendMessages() to a missing session throws the foreign-key error and writes nothing", async (t) => {
  const { db, path } = await open(t);
  assert.throws(
    () => db.appendMessages("missing", [{ role: "user", content: "a" }, { role: "user" }]),
    isForeignKeyError,
  );
  db.close();
  assert.deepEqual(await raw(path, "SELECT COUNT(*) AS n FROM messages"), [{ n: 0 }]);
});

test("appendMessages() is all or nothing when one message in the middle is bad", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  db.appendMessage("s", { role: "user", content: "kept" });
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(
    () =>
      db.appendMessages("s", [
        { role: "user", content: "one" },
        { role: "assistant", toolCalls: [cyclic] as never },
        { role: "user", content: "three" },
      ]),
    TypeError,
  );
  assert.deepEqual(db.getMessages("s").map((m) => m.content), ["kept"]);
  assert.deepEqual(counters(db, "s"), [1, 0]);
  db.close();
  await ftsIntact(path);
});

test("appendMessages() runs far faster than one transaction per message and close to raw SQL", async (t) => {
  const { db, path } = await open(t);
  db.createSession("bulk", "cli");
  db.createSession("single", "cli");
  const batch: NewMessage[] = [];
  for (let i = 0; i < 3000; i++) {
    batch.push(
      i % 2
        ? { role: "assistant", toolCalls: [CALL(`c${i}`)] }
        : { role: "user", content: `message ${i} about docker and 数据库` },
    );
  }
  let start = performance.now();
  db.appendMessages("bulk", batch);
  const bulkMs = performance.now() - start;
  start = performance.now();
  for (const message of batch.slice(0, 300)) db.appendMessage("single", message);
  const singleMs = (performance.now() - start) * 10;
  db.close();

  using conn = await rawOpen(path);
  conn.exec("PRAGMA foreign_keys = ON");
  conn.exec("INSERT INTO sessions (id, source, started_at) VALUES ('raw', 'cli', 0)");
  start = performance.now();
  conn.exec("BEGIN IMMEDIATE");
  const insert = conn.prepare(
    `INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?)`,
  );
  for (const message of batch) {
    insert.run(
      "raw",
      message.role,
      (message.content as string) ?? null,
      message.toolCalls ? JSON.stringify(message.toolCalls) : null,
      T0,
    );
  }
  conn.prepare("UPDATE sessions SET message_count = message_count + ? WHERE id = 'raw'").run(
    batch.length,
  );
  conn.exec("COMMIT");
  const rawMs = performance.now() - start;
  conn.close();
  assert.ok(bulkMs * 3 < singleMs, `bulk ${bulkMs} ms vs one by one ${singleMs} ms`);
  assert.ok(bulkMs < rawMs * 3 + 100, `bulk ${bulkMs} ms vs raw ${rawMs} ms`);
});

// ── replaceMessages ───────────────────────────────────────────────────────

test("replaceMessages() round-trips the conversation shape and recomputes the counters", async (t) => {
  const { db } = await open(t, copyFixture("hermes-v11.db"));
  const source = "20260422_090717_50093a";
  const conversation = db.getMessagesAsConversation(source);
  db.createSession("copy", "cli");
  db.appendMessage("copy", { role: "user", content: "to be replaced" });
  db.replaceMessages("copy", conversation);
  assert.deepEqual(db.getMessagesAsConversation("copy"), conversation);
  const original = db.getSession(source)!;
  assert.deepEqual(counters(db, "copy"), [original.message_count, original.tool_call_count]);
});

test("replaceMessages() keeps reasoning fields for assistant messages only", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  const reasoning = {
    reasoning: "r",
    reasoning_content: "rc",
    reasoning_details: [{ type: "reasoning.text", text: "d" }],
    codex_reasoning_items: [{ id: "i" }],
    codex_message_items: [{ id: "m" }],
  };
  db.replaceMessages("s", [
    { role: "tool", content: "out", tool_call_id: "c1", tool_name: "terminal", ...reasoning },
    { role: "assistant", content: "ok", finish_reason: "stop", token_count: 9, ...reasoning },
  ]);
  const [tool, assistant] = db.getMessages("s");
  assert.deepEqual(
    [tool.reasoning, tool.reasoning_content, tool.reasoning_details, tool.codex_reasoning_items],
    [null, null, null, null],
  );
  assert.equal(tool.tool_call_id, "c1");
  assert.equal(tool.tool_name, "terminal");
  assert.equal(assistant.reasoning, "r");
  assert.equal(assistant.reasoning_content, "rc");
  assert.equal(assistant.reasoning_details, '[{"type": "reasoning.text", "text": "d"}]');
  assert.equal(assistant.codex_message_items, '[{"id": "m"}]');
  assert.equal(assistant.token_count, 9);
  assert.equal(assistant.finish_reason, "stop");
});

test("replaceMessages() counts a non-list tool_calls value as one call, even an empty object", async (t) => {
  const { db } = await open(t);
  db.createSession("s", "cli");
  db.replaceMessages("s", [
    { role: "assistant", content: null, tool_calls: [CALL("a"), CALL("b")] },
    { role: "assistant", content: null, tool_calls: {} },
    { role: "assistant", content: null, tool_calls: [] },
    { content: "no role" } as ConversationMessage,
  ]);
  assert.deepEqual(counters(db, "s"), [4, 3]);
  const messages = db.getMessages("s");
  assert.equal(messages[1].tool_calls, null);
  assert.equal(messages[3].role, "unknown");
});

test("replaceMessages() stamps the messages 1 µs apart from the clock", async (t) => {
  const { db, at } = await open(t);
  db.createSession("s", "cli");
  at[0] = T0 + 100;
  db.replaceMessages("s", [{ role: "user", content: "a" }, { role: "assistant", content: "b" }]);
  assert.deepEqual(db.getMessages("s").map((m) => m.timestamp), [T0 + 100, T0 + 100 + 1e-6]);
});

test("replaceMessages() leaves the old transcript intact when a message is bad", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  db.appendMessages("s", [{ role: "user", content: "one" }, { role: "assistant", content: "two" }]);
  assert.throws(
    () =>
      db.replaceMessages("s", [
        { role: "user", content: "new" },
        { role: "tool", content: "x", tool_call_id: ["bad"] as unknown as string },
      ]),
    {
      name: "TypeError",
      message: 'Cannot replace messages: tool_call_id must be a string: current value is ["bad"]',
    },
  );
  assert.deepEqual(db.getMessages("s").map((m) => m.content), ["one", "two"]);
  assert.deepEqual(counters(db, "s"), [2, 0]);
  db.close();
  await ftsIntact(path);
});

test("replaceMessages() on a missing session throws the foreign-key error and writes nothing", async (t) => {
  const { db, path } = await open(t);
  assert.throws(
    () => db.replaceMessages("missing", [{ role: "user", content: "x" }]),
    isForeignKeyError,
  );
  db.replaceMessages("missing", []);
  db.close();
  assert.deepEqual(await raw(path, "SELECT COUNT(*) AS n FROM messages"), [{ n: 0 }]);
});

// ── clearMessages, getMessages, messageCount ──────────────────────────────

test("clearMessages() deletes one session's messages and resets its counters", async (t) => {
  const { db, path } = await open(t);
  db.createSession("a", "cli");
  db.createSession("b", "cli");
  db.appendMessages("a", [{ role: "assistant", toolCalls: [CALL("x")] }, { role: "user" }]);
  db.appendMessage("b", { role: "user", content: "stays" });
  db.clearMessages("a");
  db.clearMessages("missing");
  assert.deepEqual(db.getMessages("a"), []);
  assert.deepEqual(counters(db, "a"), [0, 0]);
  assert.equal(db.getMessages("b").length, 1);
  assert.deepEqual(counters(db, "b"), [1, 0]);
  db.close();
  await ftsIntact(path);
});

test("getMessages() orders by timestamp, then id", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  db.close();
  using conn = await rawOpen(path);
  const insert = conn.prepare(
    "INSERT INTO messages (id, session_id, role, content, timestamp) VALUES (?, 's', 'user', ?, ?)",
  );
  insert.run(1, "late", 30);
  insert.run(2, "early", 10);
  insert.run(4, "tie second", 20);
  insert.run(3, "tie first", 20);
  conn.close();
  const again = await open(t, path);
  assert.deepEqual(again.db.getMessages("s").map((m) => m.content), [
    "early",
    "tie first",
    "tie second",
    "late",
  ]);
  assert.deepEqual(again.db.getMessages("other"), []);
});

test("getMessages() degrades bad JSON instead of throwing and keeps the other JSON columns as text", async (t) => {
  const { db, path } = await open(t);
  db.createSession("s", "cli");
  db.close();
  using conn = await rawOpen(path);
  conn.prepare(
    `INSERT INTO messages (session_id, role, content, tool_calls, reasoning_details, timestamp)
     VALUES ('s', 'assistant', ?, ?, ?, 1), ('s', 'assistant', 'x', '', NULL, 2)`,
  ).run("\u0000json:[broken", "{not json", "[also broken");
  conn.close();
  const again = await open(t, path);
  const [bad, empty] = again.db.getMessages("s");
  assert.equal(bad.content, "\u0000json:[broken");
  assert.deepEqual(bad.tool_calls, []);
  assert.equal(bad.reasoning_details, "[also broken");
  assert.equal(empty.tool_calls, "");
});

test("messageCount() counts all messages, or one session's", async (t) => {
  const { db } = await open(t);
  db.createSession("a", "cli");
  db.createSession("b", "cli");
  db.appendMessages("a", [{ role: "user" }, { role: "user" }]);
  db.appendMessage("b", { role: "user" });
  assert.equal(db.messageCount(), 3);
  assert.equal(db.messageCount("a"), 2);
  assert.equal(db.messageCount(""), 3);
  assert.equal(db.messageCount("nope"), 0);
});

test("appendMessage(), appendMessages(), replaceMessages() and clearMessages() throw ReadonlyError when read-only", async (t) => {
  const path = tempDbPath();
  const first = await open(t, path);
  first.db.createSession("s", "cli");
  first.db.appendMessage("s", { role: "user", content: "kept" });
  first.db.close();
  using db = await SessionDB.open({ path, readonly: true });
  assert.throws(() => db.appendMessage("s", { role: "user" }), ReadonlyError);
  assert.throws(() => db.appendMessages("s", [{ role: "user" }]), ReadonlyError);
  assert.throws(() => db.appendMessages("s", []), ReadonlyError);
  assert.throws(() => db.replaceMessages("s", []), ReadonlyError);
  assert.throws(() => db.clearMessages("s"), ReadonlyError);
  assert.equal(db.messageCount("s"), 1);
});
