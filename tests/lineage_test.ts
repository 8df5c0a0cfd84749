import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, openSync, writeSync } from "node:fs";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture, expected, tempDbPath } from "./_helpers.ts";
import { entriesOf, label, replay, wanted } from "./_expected_calls.ts";
import { dbWith, rawAll, type RawSession } from "./_raw_rows.ts";
import { buildLineageTree } from "../lib/render/lineage_tree.ts";
import type { SessionRow } from "../lib/core/types.ts";

const aliases = (await expected<Record<string, Record<string, string>>>("aliases.json"))[
  "hermes-v11.db"
];

for (
  const entry of await entriesOf("lineage.json", ["getCompressionTip", "resolveResumeSessionId"])
) {
  test(`${label(entry)} returns what Python returns on hermes-v11.db`, async () => {
    const db = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
    try {
      assert.deepEqual(replay(db, entry), wanted(entry));
    } finally {
      db.close();
    }
  });
}

async function fixture(): Promise<SessionDB> {
  return await SessionDB.open({ path: copyFixture("hermes-v11.db") });
}

test("getAncestors() returns full rows, self first, up to the root", async () => {
  using db = await fixture();
  const rows = db.getAncestors(aliases.compression_tip);
  assert.deepEqual(rows.map((r) => r.id), [
    aliases.compression_tip,
    aliases.compression_mid,
    aliases.compression_root,
  ]);
  assert.deepEqual(rows[0], db.getSession(aliases.compression_tip));
  assert.equal(rows[2].title, "my project");
});

test("getAncestors() is [] for an unknown id and [self] for a root", async () => {
  using db = await fixture();
  assert.deepEqual(db.getAncestors("does-not-exist"), []);
  assert.deepEqual(db.getAncestors(aliases.live).map((r) => r.id), [aliases.live]);
});

test("getDescendants() returns self, then children by start, then grandchildren", async () => {
  using db = await fixture();
  const rows = db.getDescendants(aliases.compression_root);
  assert.deepEqual(rows.map((r) => r.id), [
    aliases.compression_root,
    aliases.delegate_child,
    aliases.compression_mid,
    aliases.compression_tip,
  ]);
  assert.deepEqual(rows[3], db.getSession(aliases.compression_tip));
  assert.deepEqual(db.getDescendants("does-not-exist"), []);
});

test("getDescendants() puts every child before any grandchild", async () => {
  using db = await dbWith([
    { id: "root", started_at: 1 },
    { id: "a", started_at: 2, parent_session_id: "root" },
    { id: "a1", started_at: 3, parent_session_id: "a" },
    { id: "b", started_at: 4, parent_session_id: "root" },
  ]);
  assert.deepEqual(db.getDescendants("root").map((r) => r.id), ["root", "a", "b", "a1"]);
});

test("getAncestors() and getDescendants() stop on a parent cycle", async () => {
  using db = await dbWith([
    { id: "a", started_at: 1, parent_session_id: "c" },
    { id: "b", started_at: 2, parent_session_id: "a" },
    { id: "c", started_at: 3, parent_session_id: "b" },
    { id: "x", started_at: 4, parent_session_id: "b" },
  ]);
  assert.deepEqual(db.getAncestors("x").map((r) => r.id), ["x", "b", "a", "c"]);
  assert.deepEqual(db.getAncestors("a").map((r) => r.id), ["a", "c", "b"]);
  assert.deepEqual(db.getDescendants("a").map((r) => r.id), ["a", "b", "c", "x"]);
});

test("getAncestors() and getDescendants() follow at most 1000 generations", async () => {
  const chain: RawSession[] = [];
  for (let i = 0; i <= 1100; i++) {
    chain.push({ id: `g${i}`, started_at: i, parent_session_id: i === 0 ? null : `g${i - 1}` });
  }
  using db = await dbWith(chain);
  const up = db.getAncestors("g1100");
  assert.equal(up.length, 1001);
  assert.equal(up[1000].id, "g100");
  const down = db.getDescendants("g0");
  assert.equal(down.length, 1001);
  assert.equal(down[1000].id, "g1000");
});

test("getCompressionTip() follows only children started at or after the compression end", async () => {
  using db = await dbWith([
    { id: "root", started_at: 10, ended_at: 20, end_reason: "compression" },
    { id: "delegate", started_at: 15, parent_session_id: "root" },
    { id: "next", started_at: 20, parent_session_id: "root" },
    { id: "branch", started_at: 30, ended_at: 40, end_reason: "branched" },
    { id: "branch_child", started_at: 41, parent_session_id: "branch" },
  ]);
  assert.equal(db.getCompressionTip("root"), "next");
  assert.equal(db.getCompressionTip("branch"), "branch");
});

test("getCompressionTip() picks the newest continuation and ends on a cycle after 100 steps", async () => {
  using db = await dbWith([
    { id: "root", started_at: 10, ended_at: 20, end_reason: "compression" },
    { id: "older", started_at: 21, parent_session_id: "root" },
    { id: "newer", started_at: 22, parent_session_id: "root" },
    { id: "p", started_at: 5, ended_at: 5, end_reason: "compression", parent_session_id: "q" },
    { id: "q", started_at: 5, ended_at: 5, end_reason: "compression", parent_session_id: "p" },
  ]);
  assert.equal(db.getCompressionTip("root"), "newer");
  assert.equal(db.getCompressionTip("p"), "p");
});

test("resolveResumeSessionId() walks empty sessions down to the first one with messages", async () => {
  using db = await dbWith(
    [
      { id: "e1", started_at: 1, ended_at: 2, end_reason: "compression" },
      { id: "e2", started_at: 3, parent_session_id: "e1" },
      { id: "old_child", started_at: 4, parent_session_id: "e2" },
      { id: "full", started_at: 5, parent_session_id: "e2" },
      { id: "lonely", started_at: 6 },
    ],
    [
      { session_id: "full", role: "user", content: "hi", timestamp: 6 },
      { session_id: "old_child", role: "user", content: "hi", timestamp: 5 },
    ],
  );
  assert.equal(db.resolveResumeSessionId("e1"), "full");
  assert.equal(db.resolveResumeSessionId("full"), "full");
  assert.equal(db.resolveResumeSessionId("lonely"), "lonely");
  assert.equal(db.resolveResumeSessionId("unknown"), "unknown");
});

test("resolveResumeSessionId() returns the original id when the empty chain loops", async () => {
  using db = await dbWith([
    { id: "a", started_at: 1, parent_session_id: "b" },
    { id: "b", started_at: 2, parent_session_id: "a" },
  ]);
  assert.equal(db.resolveResumeSessionId("a"), "a");
});

test("resolveResumeSessionId() lets a storage error through instead of answering the id", async () => {
  using db = await dbWith([{ id: "a", started_at: 1 }]);
  assert.equal(db.resolveResumeSessionId("a"), "a");
  db.close();
  assert.throws(() => db.resolveResumeSessionId("a"), { name: "SqliteError" });
});

test("resolveResumeSessionId() throws SQLITE_CORRUPT when the messages index is damaged", async () => {
  const path = tempDbPath();
  (await dbWith([{ id: "a", started_at: 1 }], [], { path })).close();
  const sql = "SELECT rootpage FROM sqlite_master WHERE name = 'idx_messages_session'";
  const root = Number((await rawAll(path, sql))[0].rootpage);
  const pageSize = Number((await rawAll(path, "PRAGMA page_size"))[0].page_size);
  // Overwrite the index's root page in place: an invalid b-tree page.
  const fd = openSync(path, "r+");
  writeSync(fd, new Uint8Array(pageSize).fill(0xff), 0, pageSize, (root - 1) * pageSize);
  closeSync(fd);
  const db = await SessionDB.open({ path, readonly: true });
  try {
    assert.throws(() => db.resolveResumeSessionId("a"), { name: "SqliteError", code: 11 });
  } finally {
    db.close();
  }
});

test("getAncestors() and getDescendants() keep U+0000 inside text columns", async () => {
  using db = await dbWith([
    { id: "root", started_at: 1, title: "nul\u0000root" },
    { id: "kid", started_at: 2, parent_session_id: "root", title: "nul\u0000kid" },
  ]);
  assert.deepEqual(db.getDescendants("root").map((r) => r.title), [
    "nul\u0000root",
    "nul\u0000kid",
  ]);
  assert.deepEqual(db.getAncestors("kid").map((r) => r.title), ["nul\u0000kid", "nul\u0000root"]);
});

test("lineage orders children started at the same time by the code points of their ids, in any locale", () => {
  // localeCompare put child_ä before child_z (and last under sv_SE on Deno and Node, first on
  // Bun), and the three i's by the user's language.
  const row = (id: string, parent: string | null) =>
    ({
      id,
      parent_session_id: parent,
      started_at: 5,
      ended_at: null,
      end_reason: null,
      title: null,
      source: "cli",
      message_count: 0,
    }) as unknown as SessionRow;
  const ids = ["child_z", "child_ä", "child_I", "child_i", "child_ı", "child_😀", "child_\uffee"];
  const tree = buildLineageTree([row("root", null), ...ids.map((id) => row(id, "root"))]);
  assert.deepEqual(tree?.children.map((child) => child.id), [
    "child_I",
    "child_i",
    "child_z",
    "child_ä",
    "child_ı",
    "child_\uffee",
    "child_😀",
  ]);
});
