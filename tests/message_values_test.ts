import { test } from "node:test";
import assert from "node:assert/strict";
import {
  conversationValues,
  MESSAGE_VALUE_COLUMNS,
  MESSAGE_VALUE_NAMES,
  messageValues,
} from "../lib/core/message_values.ts";
import type { ConversationMessage } from "../lib/core/types.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";

test("MESSAGE_VALUE_NAMES are messages columns of a new file, and with the session and timestamp all of them but the id", async () => {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  using conn = await rawOpen(path, true);
  const columns = conn.prepare("SELECT name FROM pragma_table_info('messages')").all()
    .map((row) => String(row.name));
  assert.deepEqual(
    [...MESSAGE_VALUE_NAMES, "session_id", "timestamp", "id"].sort(),
    [...columns].sort(),
  );
});

test("messageValues() reads each column from its camelCase field, in MESSAGE_VALUE_NAMES order", () => {
  const values = messageValues({
    role: "tool",
    content: "out",
    toolCallId: "c1",
    toolCalls: [{ id: "c1" }],
    toolName: "shell",
    tokenCount: 7,
    finishReason: "stop",
    reasoning: "r",
    reasoningContent: "rc",
    reasoningDetails: [1],
    codexReasoningItems: [2],
    codexMessageItems: [3],
  }, "append message");
  assert.deepEqual(Object.fromEntries(MESSAGE_VALUE_NAMES.map((name, i) => [name, values[i]])), {
    role: "tool",
    content: "out",
    tool_call_id: "c1",
    tool_calls: '[{"id": "c1"}]',
    tool_name: "shell",
    token_count: 7,
    finish_reason: "stop",
    reasoning: "r",
    reasoning_content: "rc",
    reasoning_details: "[1]",
    codex_reasoning_items: "[2]",
    codex_message_items: "[3]",
  });
});

test("conversationValues() keeps the reasoning columns of an assistant turn only, and names a bad field", () => {
  const turn = { role: "user", content: "hi", reasoning: "r", reasoning_details: [1] };
  const user = conversationValues(turn, "replace messages");
  const assistant = conversationValues({ ...turn, role: "assistant" }, "replace messages");
  for (const column of MESSAGE_VALUE_COLUMNS.filter((c) => c.assistantOnly)) {
    assert.equal(user[MESSAGE_VALUE_NAMES.indexOf(column.name)], null, column.name);
  }
  assert.equal(assistant[MESSAGE_VALUE_NAMES.indexOf("reasoning")], "r");
  assert.equal(assistant[MESSAGE_VALUE_NAMES.indexOf("reasoning_details")], "[1]");
  assert.equal(
    conversationValues({ content: "x" } as ConversationMessage, "replace messages")[0],
    "unknown",
  );
  assert.throws(
    () =>
      conversationValues({ role: "tool", content: "", token_count: "many" }, "replace messages"),
    {
      name: "TypeError",
      message: 'Cannot replace messages: token_count must be a number: current value is "many"',
    },
  );
});
