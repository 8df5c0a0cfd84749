import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";

async function open(): Promise<SessionDB> {
  let t = 1_700_000_000;
  return await SessionDB.open({ path: tempDbPath(), clock: () => (t += 1) });
}

const RECORD = {
  id: "imp1",
  source: "cli",
  started_at: 1_600_000_000.25,
  ended_at: 1_600_000_100.5,
  end_reason: "cli_close",
  title: "Imported",
  message_count: 2,
  tool_call_count: 1,
  input_tokens: 10,
  messages: [
    {
      id: 500,
      role: "user",
      content: [{ type: "text", text: "look at 记忆" }],
      timestamp: 1_600_000_001.125,
    },
    {
      id: 501,
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }],
      reasoning_details: '[{"type": "summary"}]',
      timestamp: 1_600_000_002.5,
    },
  ],
};

describe("importSession()", () => {
  test("importSession() keeps columns, timestamps, free message ids and content", async () => {
    using db = await open();
    const result = db.importSession(structuredClone(RECORD));
    assert.deepEqual(result, {
      outcome: "imported",
      id: "imp1",
      messages: 2,
      deferredParent: null,
      droppedColumns: [],
      relinked: false,
      renamedTo: null,
    });
    const row = db.getSession("imp1");
    assert.equal(row?.started_at, 1_600_000_000.25);
    assert.equal(row?.title, "Imported");
    assert.equal(row?.input_tokens, 10);
    const messages = db.getMessages("imp1");
    assert.deepEqual(messages.map((m) => [m.id, m.timestamp]), [[500, 1_600_000_001.125], [
      501,
      1_600_000_002.5,
    ]]);
    assert.deepEqual(messages[0].content, RECORD.messages[0].content);
    assert.deepEqual(messages[1].tool_calls, RECORD.messages[1].tool_calls);
    assert.deepEqual(
      db.exportSession("imp1")?.messages[1].reasoning_details,
      '[{"type": "summary"}]',
    );
  });

  test("importSession() gives new ids in order when the original ids are taken", async () => {
    using db = await open();
    db.importSession(structuredClone(RECORD));
    const other = { ...structuredClone(RECORD), id: "imp2", title: null };
    db.importSession(other);
    const ids = db.getMessages("imp2").map((m) => m.id);
    assert.equal(ids.length, 2);
    assert.ok(ids[0] > 501 && ids[1] > ids[0]);
  });

  test("importSession() gives new ids to a record with an id past 2^62: the file can take messages after it", async () => {
    // An id of 2^63 - 1 was kept: SQLite's AUTOINCREMENT then failed every later append.
    using db = await open();
    db.createSession("live", "cli");
    const first = db.appendMessage("live", { role: "user", content: "before" });
    const record = structuredClone(RECORD);
    record.messages[0].id = 400;
    record.messages[1].id = (2n ** 63n - 1n) as unknown as number; // as an exact export reads it
    db.importSession(record);
    const ids = db.getMessages("imp1").map((m) => m.id);
    assert.deepEqual(ids, [first + 1, first + 2]);
    assert.equal(db.appendMessage("live", { role: "user", content: "after" }), first + 3);
    using raw = await rawOpen(db.path);
    raw.exec(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('live', 'user', 'py', 1)",
    );
    // 2^62 itself is kept: the next id follows it.
    const near = { ...structuredClone(RECORD), id: "imp2", title: null };
    near.messages = [{ ...near.messages[0], id: 2n ** 62n as unknown as number }];
    db.importSession(near);
    assert.deepEqual(db.exportSession("imp2")?.messages.map((m) => m.id), [2n ** 62n]);
  });

  test("importSession() skips a present session, or replaces it in place with replace", async () => {
    using db = await open();
    db.importSession(structuredClone(RECORD));
    db.createSession("kid", "cli", { parentSessionId: "imp1" });
    assert.equal(db.importSession({ ...RECORD, title: "Other" }).outcome, "skipped");
    assert.equal(db.getSessionTitle("imp1"), "Imported");
    const replaced = db.importSession(
      { ...structuredClone(RECORD), title: "Other", messages: [] },
      {
        replace: true,
      },
    );
    assert.equal(replaced.outcome, "replaced");
    assert.equal(db.getSessionTitle("imp1"), "Other");
    assert.equal(db.getMessages("imp1").length, 0);
    assert.equal(db.getSession("kid")?.parent_session_id, "imp1");
  });

  test("importSession() defers a parent that is not there yet; restoreParentLinks() links it", async () => {
    using db = await open();
    const child = {
      ...structuredClone(RECORD),
      id: "child",
      title: null,
      parent_session_id: "later",
    };
    const result = db.importSession(child);
    assert.equal(result.deferredParent, "later");
    assert.equal(db.getSession("child")?.parent_session_id, null);
    assert.equal(db.restoreParentLinks([{ id: "child", parentId: "later" }]), 0);
    db.importSession({ id: "later", source: "cli", started_at: 1, messages: [] });
    assert.equal(db.restoreParentLinks([{ id: "child", parentId: "later" }]), 1);
    assert.equal(db.getSession("child")?.parent_session_id, "later");
    assert.equal(db.restoreParentLinks([]), 0);
  });

  test("importSession() restores a skipped session's missing parent link once the parent is in", async () => {
    using db = await open();
    const child = { ...structuredClone(RECORD), id: "child", title: null, parent_session_id: "p" };
    assert.equal(db.importSession(child).deferredParent, "p", "first run: the parent is missing");
    const again = db.importSession(child);
    assert.deepEqual([again.outcome, again.deferredParent, again.relinked], [
      "skipped",
      "p",
      false,
    ]);
    db.importSession({ id: "p", source: "cli", started_at: 1, messages: [] });
    const third = db.importSession(child);
    assert.deepEqual([third.outcome, third.deferredParent, third.relinked], [
      "skipped",
      null,
      true,
    ]);
    assert.equal(db.getSession("child")?.parent_session_id, "p");
    assert.equal(db.getMessages("child").length, 2, "nothing else of the session changed");
    assert.equal(db.importSession(child).relinked, false, "an existing link is left alone");
  });

  test("importSession() never re-links a skipped session that has another parent", async () => {
    using db = await open();
    db.importSession({ id: "p1", source: "cli", started_at: 1, messages: [] });
    db.importSession({ id: "p2", source: "cli", started_at: 1, messages: [] });
    db.importSession({
      id: "c",
      source: "cli",
      started_at: 2,
      parent_session_id: "p1",
      messages: [],
    });
    const other = db.importSession({
      id: "c",
      source: "cli",
      started_at: 2,
      parent_session_id: "p2",
      messages: [],
    });
    assert.equal(other.relinked, false);
    assert.equal(db.getSession("c")?.parent_session_id, "p1");
  });

  test("importSession() derives the counters a hand-written record leaves out", async () => {
    using db = await open();
    const { message_count: _m, tool_call_count: _t, ...bare } = structuredClone(RECORD);
    db.importSession(bare);
    const row = db.getSession("imp1");
    assert.equal(row?.message_count, 2);
    assert.equal(row?.tool_call_count, 1);
  });

  test("importSession() gives a title another session has the next free number of its lineage", async () => {
    using db = await open();
    db.createSession("other", "cli");
    db.setSessionTitle("other", "Imported");
    db.createSession("third", "cli");
    db.setSessionTitle("third", "Imported #4");
    const result = db.importSession(structuredClone(RECORD));
    assert.deepEqual([result.outcome, result.renamedTo], ["imported", "Imported #5"]);
    assert.equal(db.getSessionTitle("imp1"), "Imported #5");
    assert.equal(db.getMessages("imp1").length, 2, "nothing of the session is lost");
    // Its own numbered title is left out of the count on a replace.
    const again = db.importSession(structuredClone(RECORD), { replace: true });
    assert.deepEqual([again.outcome, again.renamedTo], ["replaced", "Imported #5"]);
    // Its own title, on a replace, is no conflict.
    db.setSessionTitle("other", null);
    const own = db.importSession(structuredClone(RECORD), { replace: true });
    assert.deepEqual([own.outcome, own.renamedTo], ["replaced", null]);
    assert.equal(db.getSessionTitle("imp1"), "Imported");
  });

  test("importSession() rejects a malformed record with a TypeError naming the field", async () => {
    using db = await open();
    const cases: [unknown, string][] = [
      [[], "the record must be a JSON object: current value is []"],
      [{ ...RECORD, id: "" }, 'id must be a non-empty string: current value is ""'],
      [{ ...RECORD, source: null }, "source must be a string: current value is null"],
      [
        { ...RECORD, started_at: "x" },
        'started_at must be a time in Unix seconds: current value is "x"',
      ],
      [
        { ...RECORD, started_at: 1e308 },
        "started_at must be a time in Unix seconds: current value is 1e+308",
      ],
      [
        { ...RECORD, ended_at: "later" },
        'ended_at must be a time in Unix seconds or null: current value is "later"',
      ],
      [
        { ...RECORD, input_tokens: "many" },
        'input_tokens must be a number or null: current value is "many"',
      ],
      [
        { ...RECORD, estimated_cost_usd: Number.NaN },
        "estimated_cost_usd must be a number or null: current value is NaN",
      ],
      [
        { ...RECORD, parent_session_id: 5 },
        "parent_session_id must be a string or null: current value is 5",
      ],
      // An object failed its line with the raw UNIQUE error of a title taken.
      [
        { ...RECORD, title: { a: 1 } },
        'title must be a string, a number or null: current value is {"a":1}',
      ],
      [
        { ...RECORD, messages: [{ role: "user" }] },
        "messages[0].timestamp must be a time in Unix seconds: current value is missing",
      ],
      [{ ...RECORD, messages: ["x"] }, 'messages[0] must be a JSON object: current value is "x"'],
    ];
    for (const [record, message] of cases) {
      assert.throws(
        () => db.importSession(record),
        new TypeError(`Cannot import session: ${message}`),
      );
    }
    assert.equal(db.sessionCount(), 0);
  });

  test("importSession() writes nothing of a record that fails half way", async () => {
    using db = await open();
    const record = structuredClone(RECORD) as typeof RECORD & {
      messages: Record<string, unknown>[];
    };
    record.messages[1].token_count = Number.NaN;
    assert.throws(
      () => db.importSession(record),
      /messages\[1\]\.token_count must be a finite number/,
    );
    assert.equal(db.getSession("imp1"), undefined);
    assert.equal(db.messageCount(), 0);
  });

  test("importSession() stores again what Python stored for content that is no text and a tool_calls string", async () => {
    const sourcePath = tempDbPath();
    {
      using source = await SessionDB.open({ path: sourcePath });
      source.createSession("py", "cli");
    }
    {
      using raw = await rawOpen(sourcePath);
      const insert = raw.prepare(
        "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('py', ?, ?, ?, ?)",
      );
      // As Python's append_message stores them: content "\u0000json:5" (written by a caller)
      // and tool_calls="raw string tc" (json.dumps of the string, quotes included).
      insert.run("user", "\u0000json:5", null, 1);
      insert.run("user", "\u0000json:true", null, 2);
      insert.run("user", '\u0000json:{"a": 1.5}', null, 3);
      insert.run("assistant", "x", '"raw string tc"', 4);
    }
    using source = await SessionDB.open({ path: sourcePath });
    const record = source.exportSession("py")!;
    const path = tempDbPath();
    {
      using target = await SessionDB.open({ path });
      target.importSession(record);
    }
    using raw = await rawOpen(path, true);
    const rows = raw.prepare("SELECT content, tool_calls FROM messages ORDER BY id").all();
    assert.deepEqual(rows.map((row) => [row.content, row.tool_calls]), [
      ["\u0000json:5", null],
      ["\u0000json:true", null],
      ['\u0000json:{"a": 1.5}', null],
      ["x", '"raw string tc"'],
    ]);
  });

  test("importSession() of a message read from another store writes the text that store held", async () => {
    const sourcePath = tempDbPath();
    {
      using source = await SessionDB.open({ path: sourcePath });
      source.createSession("py", "cli");
    }
    const stored = [
      ["user", '\u0000json:[{"type":"text","text":"compact", "score": 1.0}]', null],
      ["user", '\u0000json:"just a string"', null],
      ["user", "\u0000json:null", null],
      ["user", "\u0000json:5.0", null],
      ["assistant", "x", '[{"id": "c", "score": 1.0, "big": 1152921504606846977}]'],
      ["assistant", "y", '[{"id":"d"}]'],
      ["assistant", "z", "not json"],
    ];
    {
      using raw = await rawOpen(sourcePath);
      const insert = raw.prepare(
        "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('py', ?, ?, ?, ?)",
      );
      stored.forEach(([role, content, toolCalls], i) => insert.run(role, content, toolCalls, i));
    }
    using source = await SessionDB.open({ path: sourcePath, readonly: true });
    const [record] = [...source.iterateExport()];
    assert.ok(!JSON.stringify(record).includes("1152921504606846977"), "no stored text in JSON");
    const path = tempDbPath();
    {
      using target = await SessionDB.open({ path });
      target.importSession(record);
      // A changed value is written as it is now.
      const [again] = [...source.iterateExport()];
      again.messages[4].tool_calls = [{ id: "c", score: 2 }];
      target.importSession({ ...again, id: "changed" });
      assert.deepEqual(target.getMessages("changed")[4].tool_calls, [{ id: "c", score: 2 }]);
    }
    using raw = await rawOpen(path, true);
    const rows = raw.prepare(
      "SELECT role, content, tool_calls FROM messages WHERE session_id = 'py' ORDER BY id",
    ).all();
    assert.deepEqual(
      rows.map((row) => [row.role, row.content, row.tool_calls]),
      // Bad JSON too: an export carries its text (it reads as `[]`), which is written back.
      stored.map(([role, content, toolCalls]) => [role, content, toolCalls]),
    );
  });
});

test("importSession() stores a boolean in a text column as Python binds it, 1 or 0, on every runtime", async () => {
  // Deno's and Node's drivers bound it as the REAL 1: the text column kept '1.0'.
  using db = await SessionDB.open({ path: tempDbPath() });
  db.importSession({
    ...RECORD,
    id: "bools",
    model: true,
    billing_mode: false,
    messages: [{ role: "tool", content: "x", tool_name: true, timestamp: 1 }],
  } as never);
  using raw = await rawOpen(db.path, true);
  const session = raw.prepare("SELECT model, billing_mode FROM sessions WHERE id = 'bools'").get();
  assert.deepEqual([session?.model, session?.billing_mode], ["1", "0"]);
  const message = raw.prepare("SELECT tool_name FROM messages WHERE session_id = 'bools'").get();
  assert.equal(message?.tool_name, "1");
});

test("importSession() renames a title given as a number that another session holds, as a text one", async () => {
  // Before: the line failed with the raw error "UNIQUE constraint failed: sessions.title".
  using db = await SessionDB.open({ path: tempDbPath() });
  db.importSession({ ...RECORD, id: "text", title: "123" });
  db.importSession({ ...RECORD, id: "number", title: 123 } as never);
  assert.equal(db.getSession("number")?.title, "123 #2");
});
