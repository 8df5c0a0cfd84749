// A read past an id (`afterId`: each look of a follower, and `newestOf` once per transcript
// answer) takes the shorter walk, along the rowid or along idx_messages_session, and either way
// answers what the whole session filtered by id answers: a row written later with an earlier
// timestamp (a clock stepped back) included, hidden and inactive rows left out as asked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB, storeOf } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { newestOf } from "../lib/core/newest_message.ts";
import type { MessagesOptions } from "../lib/core/session_options.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { readsAfterAlongRowid } from "../lib/sqlite/rows_after.ts";

const OPTIONS: readonly MessagesOptions[] = [
  {},
  { includeInactive: true },
  { excludeHidden: true },
  { includeInactive: true, excludeHidden: true },
  { limit: 1 },
  { last: 2 },
];

/**
 * A file where session `old` ends early (its last row by time, then a row written after
 * every row of `busy` with an earlier timestamp) and session `live` is long and written last
 * (a row with a stepped-back timestamp at its end too), with `active` and `display_kind`
 * columns, some rows inactive or hidden.
 */
async function steppedBackFile(): Promise<string> {
  const path = tempDbPath();
  let now = 1_000;
  {
    using db = await SessionDB.open({ path, clock: () => now });
    for (const id of ["old", "busy", "live"]) db.createSession(id, "cli");
    for (let i = 0; i < 5; i++, now++) db.appendMessage("old", { role: "user", content: `o${i}` });
    for (let i = 0; i < 60; i++, now++) {
      db.appendMessage("busy", { role: "user", content: `b${i}` });
    }
    now = 1_002.5; // the clock stepped back: written after `busy`, shown amid `old`
    db.appendMessage("old", { role: "assistant", content: "late" });
    now = 2_000;
    for (let i = 0; i < 40; i++, now++) {
      db.appendMessage("live", { role: "user", content: `l${i}` });
    }
    now = 1_999;
    db.appendMessage("live", { role: "assistant", content: "stepped back" });
    now = 2_100;
    db.appendMessage("live", { role: "assistant", content: "hidden end" });
  }
  using raw = await rawOpen(path);
  raw.exec("ALTER TABLE messages ADD COLUMN active INTEGER");
  raw.exec("ALTER TABLE messages ADD COLUMN display_kind TEXT");
  raw.exec("UPDATE messages SET active = 0 WHERE content IN ('o3', 'l39')");
  raw.exec("UPDATE messages SET display_kind = 'hidden' WHERE content IN ('late', 'hidden end')");
  return path;
}

test("getMessages() with afterId answers the session's rows with a greater id, along either walk", async () => {
  const path = await steppedBackFile();
  for (const readonly of [false, true]) {
    using db = await SessionDB.open({ path, readonly });
    for (const session of ["old", "busy", "live", "none"]) {
      const ids = db.getMessages(session, { includeInactive: true }).map((m) => m.id);
      const afters = [0, ...ids, Math.max(0, ...ids) + 1, 1e12, -5, 2.5];
      for (const options of OPTIONS) {
        const { limit, last, ...selecting } = options;
        const whole = db.getMessages(session, selecting);
        for (const afterId of afters) {
          const later = whole.filter((m) => m.id > afterId);
          const expected = limit !== undefined
            ? later.slice(0, limit)
            : last !== undefined
            ? later.slice(-last)
            : later;
          const label = `${session} after ${afterId} ${JSON.stringify(options)}`;
          assert.deepEqual(db.getMessages(session, { ...options, afterId }), expected, label);
          const counted = limit ?? last;
          assert.equal(
            db.countMessages(session, { ...options, afterId }),
            counted === undefined ? later.length : Math.min(counted, later.length),
            label,
          );
        }
      }
    }
  }
});

test("newestOf() finds a later id with an earlier timestamp, for a session written last or long ago", async () => {
  const path = await steppedBackFile();
  await using store = await openStore(path, { readonly: true });
  const content = new Map<number, unknown>();
  const timestamp = new Map<number, unknown>();
  for (const session of ["old", "busy", "live"]) {
    for (const m of await store.getMessages(session, { includeInactive: true })) {
      content.set(m.id, m.content);
      timestamp.set(m.id, m.timestamp);
    }
  }
  const newest = async (session: string, options?: MessagesOptions) =>
    content.get((await newestOf(store, session, options)).newest);
  // `old`: its last row by time is o4; "late" (hidden) was written after all of `busy`.
  assert.equal(await newest("old"), "late");
  assert.equal(await newest("old", { excludeHidden: true }), "o4");
  // `live`: "hidden end" is last and newest; without hidden rows the newest is "stepped back".
  assert.equal(await newest("live"), "hidden end");
  assert.equal(await newest("live", { excludeHidden: true }), "stepped back");
  const shown = await newestOf(store, "live", { excludeHidden: true });
  assert.equal(shown.last?.content, "l38"); // l39 is inactive
  // The timestamp is the newest id's row's, not the last row's (a live page sends it back).
  const old = await newestOf(store, "old");
  assert.equal(old.newestAt, timestamp.get(old.newest));
  assert.notEqual(old.newestAt, old.last?.timestamp);
  assert.deepEqual(await newestOf(store, "none"), { last: undefined, newest: 0, newestAt: null });
});

test("a read past an id walks the rowid where fewer rows lie past it, the session's index otherwise", async () => {
  // The choice, not its time, is what a test can hold to: the plans are SQLite's (below).
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  const append = (session: string, n: number) =>
    db.appendMessages(
      session,
      Array.from({ length: n }, (_, i) => ({ role: "user", content: `${session} ${i}` })),
    );
  for (const session of ["old", "busy", "live"]) db.createSession(session, "cli");
  const old = append("old", 3);
  const busy = append("busy", 50);
  const live = append("live", 40);
  const store = storeOf(db);
  // Written last: nothing lies past its end in the whole file.
  assert.equal(readsAfterAlongRowid(store, "live", live.at(-1)!), true);
  // 90 rows of the file past `old`'s end, against its 3: along its index.
  assert.equal(readsAfterAlongRowid(store, "old", old.at(-1)!), false);
  // 30 rows past the 10th of `live`'s 40: along its index; 5 past its 35th: along the rowid.
  assert.equal(readsAfterAlongRowid(store, "live", live[9]), false);
  assert.equal(readsAfterAlongRowid(store, "live", live[34]), true);
  assert.equal(readsAfterAlongRowid(store, "busy", busy.at(-1)!), false);
  // The `+` keeps SQLite off idx_messages_session: it walks the rowid range.
  const plan = (sql: string) =>
    store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all("live", 1).map((row) => String(row.detail))
      .join("; ");
  assert.match(
    plan("SELECT m.id FROM messages m WHERE +m.session_id = ? AND m.id > ?"),
    /INTEGER PRIMARY KEY \(rowid>\?\)/,
  );
  assert.match(
    plan("SELECT m.id FROM messages m WHERE m.session_id = ? AND m.id > ?"),
    /idx_messages_session/,
  );
});
