import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture } from "./_helpers.ts";
import { entriesOf, type ExpectedEntry, label, replay, wanted } from "./_expected_calls.ts";
import { dbWith, type RawMessage, type RawSession } from "./_raw_rows.ts";

const LISTING_CALLS = ["listSessionsRich", "searchSessions", "sessionCount"];
const CASES: [string, string, ExpectedEntry[]][] = [
  ["list.json", "hermes-v11.db", await entriesOf("list.json", LISTING_CALLS)],
  ["counts.json", "hermes-v11.db", await entriesOf("counts.json", LISTING_CALLS)],
  ["migrate_v6.json", "hermes-v6.db", await entriesOf("migrate_v6.json", LISTING_CALLS)],
  [
    "migrate_v10.json",
    "hermes-v10-external.db",
    await entriesOf("migrate_v10.json", LISTING_CALLS),
  ],
];

for (const [file, fixture, entries] of CASES) {
  for (const entry of entries) {
    test(`${label(entry)} returns what Python returns on ${fixture} (${file})`, async () => {
      const db = await SessionDB.open({ path: copyFixture(fixture) });
      try {
        assert.deepEqual(replay(db, entry), wanted(entry));
      } finally {
        db.close();
      }
    });
  }
}

test("listSessionsRich() and searchSessions() reject a bad limit or offset, naming the value", async () => {
  using db = await dbWith([{ id: "s", started_at: 1 }]);
  const bad = [-1, 1.5, NaN, Infinity];
  for (const value of bad) {
    assert.throws(() => db.listSessionsRich({ limit: value }), {
      name: "RangeError",
      message:
        `Cannot list sessions: limit must be a non-negative integer: current value is ${value}`,
    });
    assert.throws(() => db.listSessionsRich({ offset: value }), {
      name: "RangeError",
      message:
        `Cannot list sessions: offset must be a non-negative integer: current value is ${value}`,
    });
    assert.throws(() => db.searchSessions({ limit: value }), RangeError);
    assert.throws(() => db.searchSessions({ offset: value }), RangeError);
  }
  assert.throws(() => db.listSessionsRich({ limit: "5" as unknown as number }), {
    message: 'Cannot list sessions: limit must be a non-negative integer: current value is "5"',
  });
  assert.deepEqual(db.listSessionsRich({ limit: 0 }), []);
});

function preview(messages: Omit<RawMessage, "session_id" | "timestamp">[]): Promise<string> {
  const rows = messages.map((m, i) => ({ ...m, session_id: "s", timestamp: 10 + i }));
  return dbWith([{ id: "s", started_at: 1 }], rows).then((db) => {
    const [row] = db.listSessionsRich();
    db.close();
    return row.preview;
  });
}

test("listSessionsRich() previews the first user message with newlines as spaces", async () => {
  assert.equal(
    await preview([
      { role: "system", content: "You are Hermes." },
      { role: "assistant", content: "Hello" },
      { role: "user", content: null },
      { role: "user", content: "  line one\nline two\r\nend  " },
      { role: "user", content: "second question" },
    ]),
    "line one line two  end",
  );
});

test("listSessionsRich() cuts the preview at 60 code points and adds ... only when longer", async () => {
  const sixty = "é🚀".repeat(30);
  assert.equal(await preview([{ role: "user", content: sixty }]), sixty);
  assert.equal(await preview([{ role: "user", content: sixty + "x" }]), sixty + "...");
  assert.equal(await preview([{ role: "assistant", content: "only the agent spoke" }]), "");
});

test("listSessionsRich() previews multimodal content as '' (SQLite SUBSTR stops at U+0000)", async () => {
  const parts = '\u0000json:[{"type": "text", "text": "look at this"}]';
  assert.equal(await preview([{ role: "user", content: parts }]), "");
});

test("listSessionsRich() sets last_active to the last message time, else the start", async () => {
  using db = await dbWith(
    [{ id: "busy", started_at: 1 }, { id: "idle", started_at: 2 }],
    [
      { session_id: "busy", role: "user", content: "a", timestamp: 5.25 },
      { session_id: "busy", role: "assistant", content: "b", timestamp: 7.5 },
    ],
  );
  const rows = db.listSessionsRich();
  assert.deepEqual(rows.map((r) => [r.id, r.last_active]), [["idle", 2], ["busy", 7.5]]);
});

const FAMILY: RawSession[] = [
  { id: "root", started_at: 10 },
  { id: "branch_parent", started_at: 20, ended_at: 30, end_reason: "branched" },
  { id: "branch_child", started_at: 31, parent_session_id: "branch_parent" },
  { id: "early_child", started_at: 25, parent_session_id: "branch_parent" },
  { id: "delegate", started_at: 12, parent_session_id: "root" },
  { id: "live_parent", started_at: 40, end_reason: "branched" },
  { id: "live_child", started_at: 41, parent_session_id: "live_parent" },
];

test("listSessionsRich() lists roots and /branch children started after the branched end", async () => {
  using db = await dbWith(FAMILY);
  assert.deepEqual(db.listSessionsRich().map((r) => r.id), [
    "live_parent",
    "branch_child",
    "branch_parent",
    "root",
  ]);
  assert.deepEqual(db.listSessionsRich({ includeChildren: true }).map((r) => r.id), [
    "live_child",
    "live_parent",
    "branch_child",
    "early_child",
    "branch_parent",
    "delegate",
    "root",
  ]);
});

test("listSessionsRich() filters by source and excluded sources; empty filters filter nothing", async () => {
  using db = await dbWith([
    { id: "c", source: "cli", started_at: 1 },
    { id: "t", source: "tool", started_at: 2 },
    { id: "k", source: "cron", started_at: 3 },
  ]);
  assert.deepEqual(db.listSessionsRich({ source: "tool" }).map((r) => r.id), ["t"]);
  assert.deepEqual(
    db.listSessionsRich({ excludeSources: ["tool", "cron"] }).map((r) => r.id),
    ["c"],
  );
  assert.deepEqual(db.listSessionsRich({ source: "", excludeSources: [] }).map((r) => r.id), [
    "k",
    "t",
    "c",
  ]);
});

test("listSessionsRich() keeps equal start times in file order on every page", async () => {
  const sessions = ["b", "a", "d", "c"].map((id) => ({ id, started_at: 5 }));
  using db = await dbWith(sessions);
  assert.deepEqual(db.listSessionsRich().map((r) => r.id), ["b", "a", "d", "c"]);
  assert.deepEqual(db.listSessionsRich({ limit: 2, offset: 1 }).map((r) => r.id), ["a", "d"]);
});

const CHAIN: RawSession[] = [
  { id: "root", started_at: 10, ended_at: 20, end_reason: "compression", title: "work" },
  { id: "mid", started_at: 20, ended_at: 30, end_reason: "compression", parent_session_id: "root" },
  { id: "tip", started_at: 30, parent_session_id: "mid", title: "work #3" },
  { id: "other", started_at: 50 },
];
const CHAIN_MESSAGES: RawMessage[] = [
  { session_id: "root", role: "user", content: "start of work", timestamp: 11 },
  { session_id: "tip", role: "user", content: "tip question", timestamp: 31 },
  { session_id: "tip", role: "assistant", content: "tip answer", timestamp: 90 },
  { session_id: "other", role: "user", content: "other", timestamp: 60 },
];

test("listSessionsRich() shows a compression chain as its tip with the root's start", async () => {
  using db = await dbWith(CHAIN, CHAIN_MESSAGES);
  const [other, chain] = db.listSessionsRich();
  assert.equal(other.id, "other");
  assert.equal(chain.id, "tip");
  assert.equal(chain._lineage_root_id, "root");
  assert.equal(chain.title, "work #3");
  assert.equal(chain.preview, "tip question");
  assert.equal(chain.last_active, 90);
  assert.equal(chain.started_at, 10);
  assert.equal(chain.end_reason, null);
  assert.equal("_lineage_root_id" in other, false);
  const raw = db.listSessionsRich({ projectCompressionTips: false });
  assert.deepEqual(raw.map((r) => [r.id, r.preview]), [["other", "other"], [
    "root",
    "start of work",
  ]]);
});

test("listSessionsRich({ orderByLastActive }) orders a chain by its tip's activity", async () => {
  using db = await dbWith(CHAIN, CHAIN_MESSAGES);
  assert.deepEqual(db.listSessionsRich({ orderByLastActive: true }).map((r) => r.id), [
    "tip",
    "other",
  ]);
  assert.deepEqual(
    db.listSessionsRich({ orderByLastActive: true, limit: 1, offset: 1 }).map((r) => r.id),
    ["other"],
  );
});

test("listSessionsRich({ orderByLastActive }) ends on a compression cycle", async () => {
  using db = await dbWith([
    { id: "p", started_at: 5, ended_at: 5, end_reason: "compression", parent_session_id: "r" },
    { id: "q", started_at: 5, ended_at: 5, end_reason: "compression", parent_session_id: "p" },
    { id: "r", started_at: 5, ended_at: 5, end_reason: "compression", parent_session_id: "q" },
  ], [{ session_id: "r", role: "user", content: "late", timestamp: 99 }]);
  const rows = db.listSessionsRich({ orderByLastActive: true, includeChildren: true });
  assert.deepEqual(rows.map((r) => r.id), ["r", "q", "p"]);
});

test("searchSessions() includes children and orders by last activity, start, then id", async () => {
  using db = await dbWith(FAMILY, [
    { session_id: "delegate", role: "user", content: "x", timestamp: 100 },
  ]);
  assert.deepEqual(db.searchSessions().map((r) => r.id), [
    "delegate",
    "live_child",
    "live_parent",
    "branch_child",
    "early_child",
    "branch_parent",
    "root",
  ]);
  assert.equal(db.searchSessions()[0].last_active, 100);
  assert.deepEqual(db.searchSessions({ limit: 2, offset: 1 }).map((r) => r.id), [
    "live_child",
    "live_parent",
  ]);
});

test("sessionCount() counts all sessions, or one source when given", async () => {
  using db = await dbWith([
    { id: "c", source: "cli", started_at: 1 },
    { id: "t", source: "tool", started_at: 2 },
  ]);
  assert.equal(db.sessionCount(), 2);
  assert.equal(db.sessionCount({ source: "tool" }), 1);
  assert.equal(db.sessionCount({ source: "" }), 2);
  assert.equal(db.sessionCount({ source: "nope" }), 0);
});

test("listSessionsRich() filters by start time and by having children, and rejects a bad time", async () => {
  const db = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
  try {
    const from = Date.UTC(2026, 3, 25) / 1000;
    const to = Date.UTC(2026, 3, 27) / 1000;
    const window = db.listSessionsRich({ startedAfter: from, startedBefore: to, limit: 100 });
    assert.ok(window.length > 0);
    for (const row of window) assert.ok(row.started_at >= from && row.started_at < to, row.id);
    const all = db.listSessionsRich({ limit: 100 });
    assert.equal(
      window.length,
      all.filter((r) => r.started_at >= from && r.started_at < to).length,
    );
    const parents = db.listSessionsRich({ hasChildren: true, limit: 100, includeChildren: true });
    assert.ok(parents.length > 0);
    for (const row of parents) {
      assert.ok(all.length > 0);
      assert.ok(
        db.getDescendants(row.id).length > 1,
        `${row.id} has a child`,
      );
    }
    assert.throws(
      () => db.listSessionsRich({ startedAfter: Number.NaN }),
      {
        name: "RangeError",
        message: /startedAfter must be a finite number of seconds: current value is NaN/,
      },
    );
  } finally {
    db.close();
  }
});

test("listedSessionCount() counts what listSessionsRich() lists over all pages", async () => {
  const db = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
  try {
    for (
      const options of [
        {},
        { excludeSources: ["tool"] },
        { includeChildren: true },
        { source: "telegram" },
        { startedAfter: 1776675600, startedBefore: 1777000000 },
      ]
    ) {
      const all = db.listSessionsRich({ ...options, limit: 10_000 });
      assert.equal(db.listedSessionCount(options), all.length, JSON.stringify(options));
    }
    const since = db.listSessionsRich({ startedAfter: 1776675600, limit: 10_000 });
    assert.ok(since.length > 0 && since.every((s) => s.started_at >= 1776675600));
    const before = db.listSessionsRich({ startedBefore: 1776675600, limit: 10_000 });
    assert.ok(before.length > 0 && before.every((s) => s.started_at < 1776675600));
  } finally {
    db.close();
  }
});
