import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { tempDbPath } from "./_helpers.ts";

describe("inspect()", () => {
  test("inspect() describes a new file: version 11, WAL, both FTS tables, sound", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    db.createSession("s", "cli");
    db.appendMessage("s", { role: "user", content: "hi" });
    db.setMeta("k", "v");
    const info = db.inspect();
    assert.equal(info.path, db.path);
    assert.equal(info.schemaVersion, 11);
    assert.equal(info.journalMode, "wal");
    assert.match(info.sqliteVersion, /^3\.\d+\.\d+$/);
    assert.ok(info.pageCount > 0 && info.pageSize >= 512 && info.freePages >= 0);
    assert.equal(info.sessions, 1);
    assert.equal(info.messages, 1);
    assert.deepEqual(info.ftsTables, ["messages_fts", "messages_fts_trigram"]);
    assert.deepEqual(info.metaKeys, ["k"]);
    assert.deepEqual(info.integrity, ["ok"]);
  });

  test("inspect() verifies the search indexes only when searchIndexes is true", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    db.createSession("s", "cli");
    db.appendMessage("s", { role: "user", content: "hi" });
    assert.equal(db.inspect().searchIndexesChecked, false);
    const full = db.inspect({ searchIndexes: true });
    assert.equal(full.searchIndexesChecked, true);
    assert.deepEqual(full.integrity, ["ok"]);
    assert.equal(db.inspect({ integrity: false, searchIndexes: true }).searchIndexesChecked, false);
  });

  test("inspect() skips the check when integrity is false", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    assert.equal(db.inspect({ integrity: false }).integrity, null);
  });
});

describe("usageBySource()", () => {
  test("usageBySource() sums sessions, messages, tokens and cost per source", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    db.createSession("a", "cli");
    db.createSession("b", "cli");
    db.createSession("c", "telegram");
    db.appendMessage("a", { role: "user", content: "1" });
    db.appendMessage("a", { role: "user", content: "2" });
    db.appendMessage("c", { role: "user", content: "3" });
    db.updateTokenCounts("a", { inputTokens: 100, outputTokens: 5, estimatedCostUsd: 0.5 });
    db.updateTokenCounts("b", { inputTokens: 20, estimatedCostUsd: 0.25 });
    const rows = db.usageBySource();
    assert.deepEqual(rows.map((r) => [r.source, r.session_count, r.message_count, r.total_input]), [
      ["cli", 2, 2, 120],
      ["telegram", 1, 1, 0],
    ]);
    assert.equal(rows[0].estimated_cost, 0.75);
    assert.equal(rows[0].actual_cost, null);
    assert.equal(rows[1].estimated_cost, null);
  });
});

describe("pruneCandidates()", () => {
  test("pruneCandidates() lists ended sessions started before the cutoff, like pruneSessions", async () => {
    let now = 1_000_000;
    using db = await SessionDB.open({ path: tempDbPath(), clock: () => now });
    db.createSession("old-ended", "cli");
    db.endSession("old-ended", "cli_close");
    db.createSession("old-open", "cli");
    db.createSession("old-tg", "telegram");
    db.endSession("old-tg", "session_reset");
    now += 40 * 86400;
    db.createSession("new-ended", "cli");
    db.endSession("new-ended", "cli_close");
    const all = db.pruneCandidates({ olderThanDays: 30 });
    assert.deepEqual(all.map((c) => c.id), ["old-ended", "old-tg"]);
    assert.deepEqual(
      db.pruneCandidates({ olderThanDays: 30, source: "telegram" }).map((c) => c.id),
      [
        "old-tg",
      ],
    );
    assert.deepEqual(db.pruneCandidates().map((c) => c.id), []);
    assert.equal(db.pruneSessions({ olderThanDays: 30 }), all.length);
    assert.throws(() => db.pruneCandidates({ olderThanDays: -1 }), RangeError);
  });
});
