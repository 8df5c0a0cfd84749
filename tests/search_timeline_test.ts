/**
 * MessageTimeline: the latest timestamp below an id and the earliest above
 * one (also only among messages before, or at and after, a time), checked
 * against brute force for every id of files whose timestamps follow ids, do
 * not, and change under the connection.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { MessageTimeline } from "../lib/sqlite/search/timeline.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { Writer } from "../lib/sqlite/write.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { insertRows, type MessageSeed } from "./_search_data.ts";
import { mulberry32, type Random } from "./_random.ts";

const SESSIONS = Array.from({ length: 15 }, (_, i) => ({ id: `s${i}` }));

function rows(random: Random, count: number, start: number): MessageSeed[] {
  let t = start;
  return Array.from({ length: count }, (_, i) => {
    t += random() < 0.2 ? 0 : 1 + Math.floor(random() * 3);
    const roll = random();
    const timestamp = roll < 0.05
      ? start - 1000 * random() // backdated
      : roll < 0.1
      ? start + 1e6 * random() // from the future
      : t;
    return {
      session_id: SESSIONS[(Math.floor(i / 40) + Math.floor(random() * 3)) % SESSIONS.length].id,
      content: "x",
      timestamp,
    };
  });
}

async function check(
  store: Store,
  timeline: MessageTimeline,
  exact: boolean,
): Promise<void> {
  const raw = await rawOpen(store.path);
  let all: { id: number; ts: number }[];
  try {
    all = raw.prepare("SELECT id, timestamp FROM messages ORDER BY id").all()
      .map((r) => ({ id: Number(r.id), ts: Number(r.timestamp) }));
  } finally {
    raw.close();
  }
  assert.ok(timeline.refresh(store));
  const top = all.at(-1)!.id + 2;
  // Times along the file: `before` / `after` leave out the messages on a cut's other side.
  const byTime = [...all].sort((a, b) => a.ts - b.ts);
  const cuts = [0.1, 0.5, 0.9].map((q) => byTime[Math.floor(all.length * q)].ts);
  const max = (rows: { ts: number }[]) => Math.max(-Infinity, ...rows.map((r) => r.ts));
  const min = (rows: { ts: number }[]) => Math.min(Infinity, ...rows.map((r) => r.ts));
  for (let id = 0; id <= top; id++) {
    const cut = cuts[id % cuts.length];
    const below = max(all.filter((r) => r.id < id));
    const above = min(all.filter((r) => r.id > id));
    const belowBefore = max(all.filter((r) => r.id < id && r.ts < cut));
    const aboveAfter = min(all.filter((r) => r.id > id && r.ts >= cut));
    const got = [
      timeline.latestBelow(store, id),
      timeline.earliestAbove(store, id),
      // Both sides are known by now: sessions wholly on the cut's other side are passed over.
      timeline.latestBelow(store, id, { before: cut }),
      timeline.earliestAbove(store, id, { after: cut }),
    ];
    if (exact) {
      assert.deepEqual(got, [below, above, belowBefore, aboveAfter], `bounds at ${id}`);
    } else {
      assert.ok(got[0] >= below, `latestBelow(${id}) ${got[0]} < ${below}`);
      assert.ok(got[1] <= above, `earliestAbove(${id}) ${got[1]} > ${above}`);
      assert.ok(got[2] >= belowBefore, `latestBelow(${id}, before) ${got[2]} < ${belowBefore}`);
      assert.ok(got[3] <= aboveAfter, `earliestAbove(${id}, after) ${got[3]} > ${aboveAfter}`);
    }
  }
}

describe("MessageTimeline", () => {
  test("latestBelow() and earliestAbove() are exact, then bounds, as the file changes", async () => {
    const random = mulberry32(1515);
    const path = tempDbPath();
    (await SessionDB.open({ path })).close();
    await insertRows(path, SESSIONS, rows(random, 500, 1_700_000_000));
    const { db, writer } = await openConnection({ path, readonly: false });
    const store = new Store(db, writer, { path, readonly: false });
    try {
      const timeline = new MessageTimeline();
      await check(store, timeline, true);
      // Another connection appends, in old, new and future time.
      await insertRows(path, [], rows(random, 300, 1_700_000_500));
      await check(store, timeline, true);
      // This connection appends.
      store.db.exec(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s3', 'user', 'y', 5)",
      );
      await check(store, timeline, true);
      // A session's new latest message, later than any.
      await insertRows(path, [], [{ session_id: "s2", content: "z", timestamp: 9e9 }]);
      await check(store, timeline, true);
      // Deleted messages leave bounds that still hold.
      using raw = await rawOpen(path);
      raw.exec("DELETE FROM messages WHERE id % 4 = 1 OR session_id = 's7'");
      raw.close();
      await check(store, timeline, false);
    } finally {
      store.db.close();
    }
  });

  test("a search sorted by time on a long-lived connection finds a session imported below its ids", async () => {
    const path = tempDbPath();
    let now = 1_700_000_000;
    using reader = await SessionDB.open({ path, clock: () => now });
    reader.createSession("gone", "cli");
    for (let i = 0; i < 3; i++) reader.appendMessage("gone", { role: "user", content: "old" });
    const exported = reader.exportSession("gone")!;
    reader.deleteSession("gone");
    // Ids 1-3 are free again; the file goes on past them.
    reader.createSession("live", "cli");
    for (let i = 0; i < 40; i++) {
      now += 1;
      reader.appendMessage("live", { role: "user", content: `docker ${i}` });
    }
    const page = () => reader.searchMessages("docker", { sort: "newest", limit: 5 });
    assert.equal(page()[0].session_id, "live", "the connection's timeline is built");
    // Another process imports a session whose original ids (1-3) are free, newest of all.
    const later = exported.messages.map((m) => ({ ...m, content: "docker again", timestamp: 9e9 }));
    using importer = await SessionDB.open({ path });
    const record = { ...exported, id: "imported", messages: later };
    assert.equal(importer.importSession(record).outcome, "imported");
    assert.deepEqual(
      importer.getMessages("imported").map((m) => m.id),
      [1, 2, 3],
      "the ids were kept",
    );
    assert.deepEqual(
      page().map((hit) => hit.session_id),
      ["imported", "imported", "imported", "live", "live"],
    );
  });

  test("refresh() refuses a messages table without AUTOINCREMENT", async () => {
    const path = tempDbPath();
    using raw = await rawOpen(path);
    raw.exec(`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,
      timestamp REAL NOT NULL); CREATE INDEX idx_messages_session ON messages(session_id, timestamp)`);
    raw.close();
    const db = await rawOpen(path);
    const store = new Store(db, new Writer(db), { path, readonly: true });
    try {
      assert.equal(new MessageTimeline().refresh(store), false);
    } finally {
      store.db.close();
    }
  });
});
