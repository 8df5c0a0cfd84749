/**
 * searchMessages() on the ranked paths (unicode61 and trigram): order,
 * snippets, filters, paging, context, errors and options.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, openSync, writeSync } from "node:fs";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { isMatchError, isPatternError } from "../lib/sqlite/search/query_error.ts";
import { copyFixture, rawOpen } from "./_helpers.ts";
import { type Seeded, seeded } from "./_search_data.ts";

const J = "\u0000json:";

async function fixture(): Promise<Seeded> {
  return await seeded(
    [
      { id: "a", source: "cli", model: "m-a", started_at: 1000 },
      { id: "b", source: "telegram", model: null, started_at: 2000 },
      { id: "c", source: "discord", started_at: 3000 },
      { id: "d", source: "cli", started_at: 4000 },
    ],
    [
      // a: ranking, tool name and tool calls
      { session_id: "a", content: "docker docker docker", timestamp: 1001 },
      {
        session_id: "a",
        role: "assistant",
        content: "docker is one word in a much longer sentence about many other things",
        timestamp: 1002,
      },
      {
        session_id: "a",
        role: "tool",
        content: '{"ok": 1}',
        tool_name: "ferret_tool",
        timestamp: 1003,
      },
      {
        session_id: "a",
        role: "assistant",
        content: "",
        tool_calls: '[{"function": {"name": "lookup", "arguments": "{\\"q\\": \\"wombat\\"}"}}]',
        timestamp: 1004,
      },
      // b: equal timestamps, order falls back to id
      { session_id: "b", content: "first of three", timestamp: 2001 },
      { session_id: "b", role: "assistant", content: "docker tie middle", timestamp: 2001 },
      { session_id: "b", content: "third of three", timestamp: 2001 },
      // c: multimodal neighbours, 200-character cut, NUL
      {
        session_id: "c",
        content: J +
          JSON.stringify([
            { type: "text", text: "look at" },
            { type: "image_url", image_url: { url: "data:x" } },
            { type: "text", text: "" },
            { type: "text", text: " this " },
          ]),
        timestamp: 3001,
      },
      { session_id: "c", role: "assistant", content: "zebra " + "😀".repeat(250), timestamp: 3002 },
      {
        session_id: "c",
        content: J + JSON.stringify([{ type: "image_url", image_url: { url: "data:y" } }]),
        timestamp: 3003,
      },
      { session_id: "c", content: "nul\u0000byte", timestamp: 3004 },
      { session_id: "c", role: "assistant", content: "quokka", timestamp: 3005 },
      // d: content Python cannot render, and renders as ""
      {
        session_id: "d",
        content: J + JSON.stringify({ type: "text", text: "one dict" }),
        timestamp: 4001,
      },
      { session_id: "d", role: "assistant", content: "yak here", timestamp: 4002 },
      { session_id: "d", content: J + "{oops", timestamp: 4003 },
      { session_id: "d", role: "assistant", content: "gnu here", timestamp: 4004 },
      {
        session_id: "d",
        content: J + JSON.stringify([{ type: "text", text: 5 }]),
        timestamp: 4005,
      },
    ],
  );
}

describe("searchMessages() on the unicode61 path", () => {
  let s: Seeded;
  before(async () => {
    s = await fixture();
  });
  after(() => s.db.close());

  test("searchMessages() ranks by bm25 and marks every matched word in the snippet", () => {
    const hits = s.db.searchMessages("docker");
    assert.deepEqual(hits.map((h) => h.id), [s.ids[0], s.ids[5], s.ids[1]]);
    assert.equal(hits[0].snippet, ">>>docker<<< >>>docker<<< >>>docker<<<  ");
  });

  test("searchMessages() returns Python's keys and the session's columns", () => {
    const [hit] = s.db.searchMessages("docker", { limit: 1 });
    assert.deepEqual(hit, {
      id: s.ids[0],
      session_id: "a",
      role: "user",
      snippet: ">>>docker<<< >>>docker<<< >>>docker<<<  ",
      timestamp: 1001,
      tool_name: null,
      source: "cli",
      model: "m-a",
      session_started: 1000,
      context: [
        { role: "user", content: "docker docker docker" },
        {
          role: "assistant",
          content: "docker is one word in a much longer sentence about many other things",
        },
      ],
    });
  });

  test("searchMessages() finds tool names and tool-call arguments", () => {
    const [tool] = s.db.searchMessages("ferret_tool");
    assert.equal(tool.id, s.ids[2]);
    assert.equal(tool.tool_name, "ferret_tool");
    assert.equal(tool.snippet, '{"ok": 1} >>>ferret_tool<<< ');
    const [call] = s.db.searchMessages("wombat");
    assert.equal(call.id, s.ids[3]);
    assert.match(call.snippet!, />>>wombat<<</);
  });

  test("searchMessages() applies sourceFilter, excludeSources and roleFilter", () => {
    const ids = (options: Parameters<SessionDB["searchMessages"]>[1]) =>
      s.db.searchMessages("docker", options).map((h) => h.id).sort((x, y) => x - y);
    assert.deepEqual(ids({ sourceFilter: ["telegram"] }), [s.ids[5]]);
    assert.deepEqual(ids({ sourceFilter: ["telegram", "cli"] }), [s.ids[0], s.ids[1], s.ids[5]]);
    assert.deepEqual(ids({ sourceFilter: [] }), []);
    assert.deepEqual(ids({ excludeSources: ["cli"] }), [s.ids[5]]);
    assert.deepEqual(ids({ excludeSources: [] }), [s.ids[0], s.ids[1], s.ids[5]]);
    assert.deepEqual(ids({ roleFilter: ["assistant"] }), [s.ids[1], s.ids[5]]);
    assert.deepEqual(ids({ roleFilter: [] }), [s.ids[0], s.ids[1], s.ids[5]], "empty means any");
    assert.deepEqual(ids({ sourceFilter: ["cli"], roleFilter: ["user"] }), [s.ids[0]]);
  });

  test("searchMessages() pages with limit and offset in rank order", () => {
    const all = s.db.searchMessages("docker").map((h) => h.id);
    assert.deepEqual(s.db.searchMessages("docker", { limit: 1, offset: 1 }).map((h) => h.id), [
      all[1],
    ]);
    assert.deepEqual(s.db.searchMessages("docker", { offset: 3 }), []);
    assert.deepEqual(s.db.searchMessages("docker", { limit: 0 }), []);
  });

  test("searchMessages() gives previous and next of the same session, ties broken by id", () => {
    const [hit] = s.db.searchMessages("tie");
    assert.deepEqual(hit.context, [
      { role: "user", content: "first of three" },
      { role: "assistant", content: "docker tie middle" },
      { role: "user", content: "third of three" },
    ]);
  });

  test("searchMessages() never takes context from another session", () => {
    const [hit] = s.db.searchMessages("wombat");
    assert.deepEqual(hit.context.map((c) => c.role), ["tool", "assistant"], "a's last message");
  });

  test("searchMessages() renders multimodal context as its text parts and cuts at 200 code points", () => {
    const [hit] = s.db.searchMessages("zebra");
    assert.deepEqual(hit.context, [
      { role: "user", content: "look at  this" },
      { role: "assistant", content: "zebra " + "😀".repeat(194) },
      { role: "user", content: "[multimodal content]" },
    ]);
  });

  test("searchMessages() keeps U+0000 in context content", () => {
    const [hit] = s.db.searchMessages("quokka");
    assert.deepEqual(hit.context[0], { role: "user", content: "nul\u0000byte" });
  });

  test("searchMessages() shows a single part object as empty and bad JSON as stored", () => {
    const [hit] = s.db.searchMessages("yak");
    assert.deepEqual(hit.context, [
      { role: "user", content: "" },
      { role: "assistant", content: "yak here" },
      { role: "user", content: J + "{oops" },
    ]);
  });

  test("searchMessages() gives an empty context where Python's rendering fails", () => {
    const [hit] = s.db.searchMessages("gnu");
    assert.deepEqual(hit.context, [], "a text part that is a number makes Python's join raise");
  });

  test("searchMessages() returns [] for blank and unsearchable queries", () => {
    for (const query of ["", "   ", "\u3000", "***", "()", "AND", '""', "^^^"]) {
      assert.deepEqual(s.db.searchMessages(query), [], JSON.stringify(query));
    }
  });

  test("searchMessages() answers [] when FTS5 rejects the query even after repair", () => {
    assert.deepEqual(s.db.searchMessages("docker AND OR docker"), []);
    assert.deepEqual(s.db.searchMessages("NOT NOT docker"), []);
  });
});

describe("searchMessages() on the trigram path", () => {
  let s: Seeded;
  before(async () => {
    s = await seeded(
      [
        { id: "zh", source: "telegram", started_at: 100 },
        { id: "ja", source: "discord", started_at: 200 },
      ],
      [
        { session_id: "zh", content: "我发现助手的记忆断裂了", timestamp: 101 },
        {
          session_id: "zh",
          role: "assistant",
          content: "记忆断裂通常有两个原因，记忆断裂",
          timestamp: 102,
        },
        {
          session_id: "zh",
          role: "tool",
          content: "{}",
          tool_name: "记忆断裂工具",
          timestamp: 103,
        },
        { session_id: "ja", content: "週次レポートを共有します", timestamp: 201 },
        { session_id: "ja", role: "assistant", content: "週次レポート了解", timestamp: 202 },
      ],
    );
  });
  after(() => s.db.close());

  test("searchMessages() sends three or more CJK characters to the trigram index, ranked", () => {
    const hits = s.db.searchMessages("记忆断裂");
    assert.deepEqual(hits.map((h) => h.id).sort(), [s.ids[0], s.ids[1], s.ids[2]].sort());
    assert.equal(hits[0].id, s.ids[1], "two occurrences rank first");
    assert.equal(hits[0].snippet, ">>>记忆断裂<<<通常有两个原因，>>>记忆断裂<<<  ");
    const tool = hits.find((h) => h.id === s.ids[2])!;
    assert.equal(tool.snippet, "{} >>>记忆断裂<<<工具 ");
  });

  test("searchMessages() filters and gives context on the trigram path", () => {
    const hits = s.db.searchMessages("週次レポート", {
      sourceFilter: ["discord"],
      roleFilter: ["user"],
    });
    assert.deepEqual(hits.map((h) => h.id), [s.ids[3]]);
    assert.deepEqual(hits[0].context, [
      { role: "user", content: "週次レポートを共有します" },
      { role: "assistant", content: "週次レポート了解" },
    ]);
    assert.deepEqual(s.db.searchMessages("週次レポート", { sourceFilter: [] }), []);
    assert.deepEqual(
      s.db.searchMessages("週次レポート", { excludeSources: ["discord"] }).map((h) => h.id),
      [],
    );
  });

  test("searchMessages() pages the trigram path", () => {
    const all = s.db.searchMessages("记忆断裂").map((h) => h.id);
    assert.deepEqual(s.db.searchMessages("记忆断裂", { offset: 1, limit: 1 }).map((h) => h.id), [
      all[1],
    ]);
  });
});

describe("searchMessages() options and errors", () => {
  let s: Seeded;
  before(async () => {
    s = await fixture();
  });
  after(() => s.db.close());

  for (
    const [name, value] of [["limit", -1], ["limit", 1.5], ["offset", -1], ["offset", NaN]] as const
  ) {
    test(`searchMessages() throws a RangeError naming ${name} = ${value}`, () => {
      assert.throws(() => s.db.searchMessages("docker", { [name]: value }), {
        name: "RangeError",
        message:
          `Cannot search messages: ${name} must be a non-negative integer: current value is ${value}`,
      });
    });
  }

  for (const [name, value] of [["since", NaN], ["until", Infinity]] as const) {
    test(`searchMessages() throws a RangeError naming ${name} = ${value}`, () => {
      assert.throws(() => s.db.searchMessages("docker", { [name]: value }), {
        name: "RangeError",
        message:
          `Cannot search messages: ${name} must be a finite number of seconds: current value is ${value}`,
      });
    });
  }

  test("searchMessages() throws a RangeError for a limit given as a string", () => {
    assert.throws(
      () => s.db.searchMessages("docker", { limit: "5" as unknown as number }),
      { name: "RangeError", message: /current value is "5"$/ },
    );
  });

  test("isMatchError() tells FTS5's complaints about the query from storage errors", () => {
    const error = (message: string, code = 1) => new SqliteError(message, code);
    assert.ok(isMatchError(error('fts5: syntax error near "."'), '"e.g".'));
    assert.ok(isMatchError(error("unknown special query: x"), "*x"));
    assert.ok(isMatchError(error("no such column: foo"), "foo:bar"));
    assert.ok(isMatchError(error("no such column: Flag"), "-flag"), "case-insensitive");
    assert.ok(!isMatchError(error("no such column: s.model"), "docker"), "a schema problem");
    assert.ok(!isMatchError(error("database disk image is malformed", 11), "x"));
    assert.ok(!isMatchError(error("no such table: messages_fts"), "x"));
    assert.ok(!isMatchError(error("database is not open"), "x"));
    assert.ok(!isMatchError(new Error("fts5: syntax error"), "x"));
  });

  test("isPatternError() recognizes only SQLite's LIKE length limit", () => {
    assert.ok(isPatternError(new SqliteError("LIKE or GLOB pattern too complex", 1)));
    assert.ok(!isPatternError(new SqliteError('fts5: syntax error near "x"', 1)));
    assert.ok(!isPatternError(new Error("LIKE or GLOB pattern too complex")));
  });
});

describe("searchMessages() lets storage errors through", () => {
  test("searchMessages() throws on a closed database", async () => {
    const s = await fixture();
    s.db.close();
    assert.throws(() => s.db.searchMessages("docker"));
  });

  test("searchMessages() reads by substring when the FTS index is damaged (the messages are intact)", async () => {
    const s = await fixture();
    const before = s.db.searchMessages("docker", { limit: 100 }).map((hit) => hit.id).sort();
    assert.ok(before.length > 0);
    using raw = await rawOpen(s.path, true);
    const root = Number(
      raw.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'messages_fts_data'").get()!
        .rootpage,
    );
    const pageSize = Number(raw.prepare("PRAGMA page_size").get()!.page_size);
    raw.close();
    // Overwrite the index's root page in place: an invalid b-tree page.
    const fd = openSync(s.path, "r+");
    writeSync(fd, new Uint8Array(pageSize).fill(0xff), 0, pageSize, (root - 1) * pageSize);
    closeSync(fd);
    try {
      const after = s.db.searchMessages("docker", { limit: 100 }).map((hit) => hit.id).sort();
      assert.deepEqual(after, before);
    } finally {
      s.db.close();
    }
  });
});

test("searchMessages() searches an older file read as it is, by substring where an index is missing", async () => {
  const path = copyFixture("hermes-v6.db");
  const db = await SessionDB.open({ path, readonly: true });
  try {
    const tables = db.inspect({ integrity: false }).ftsTables;
    assert.ok(!tables.includes("messages_fts_trigram"), "the v6 file has no trigram index");
    const hits = db.searchMessages("记忆断裂");
    assert.ok(hits.length > 0);
    assert.ok(
      hits.every((h) =>
        h.snippet?.includes("记忆断裂") || h.context.some((c) => c.content.includes("记忆断裂"))
      ),
    );
    assert.ok(db.searchMessages("docker").length > 0, "the unicode61 index is still used");
  } finally {
    db.close();
  }
});

test("an older file read as it is finds a word of tool_calls only once upgraded (its word index holds content alone)", async () => {
  const path = copyFixture("hermes-v10-external.db");
  {
    using db = await SessionDB.open({ path, readonly: true });
    assert.deepEqual(db.searchMessages("legacyarg"), [], "the v10 word index holds content alone");
  }
  using db = await SessionDB.open({ path });
  assert.deepEqual(db.searchMessages("legacyarg").map((hit) => hit.id), [2]);
});
