/**
 * TrigramGaps: the messages an older SQLite indexed only up to a U+0000 are
 * scanned for by id range, only inside the window a substring search walks,
 * and the hits stay exactly those of Python's LIKE scan.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { countSearchHits, searchMessages } from "../lib/sqlite/search/search.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { trigramGapsOf } from "../lib/sqlite/search/trigram_gaps.ts";
import { lastMessageId } from "../lib/sqlite/message_ids.ts";
import { rawOpen } from "./_helpers.ts";
import { insertRows, type MessageSeed, seeded } from "./_search_data.ts";

/** A store on `path` that `using` closes. */
async function openStore(path: string): Promise<Store & Disposable> {
  const { db, writer } = await openConnection({ path });
  const store = new Store(db, writer, { path, readonly: false });
  return Object.assign(store, { [Symbol.dispose]: () => db.close() });
}

/** A message whose tool name SQLite 3.40 left out of the index (after the U+0000 of its content). */
function cut(timestamp: number): MessageSeed {
  return {
    session_id: "s0",
    role: "tool",
    content: "bin\u0000ary",
    tool_name: "数据工具",
    timestamp,
  };
}

/** Re-indexes messages the way SQLite 3.40 did: only up to the U+0000. */
async function indexAsOldSqlite(path: string, ids: readonly number[]): Promise<void> {
  using raw = await rawOpen(path);
  for (const id of ids) {
    raw.prepare("DELETE FROM messages_fts_trigram WHERE rowid = ?").run(id);
    raw.prepare("INSERT INTO messages_fts_trigram(rowid, content) VALUES (?, 'bin')").run(id);
  }
}

/**
 * 3,000 messages in three sessions, timestamps growing with ids, most
 * holding 数据; cut messages at ids 2 and 2,998 (one on each side of the
 * window a short page walks).
 */
async function corpus(): Promise<{ path: string; old: number; recent: number }> {
  const messages: MessageSeed[] = [];
  for (let i = 1; i <= 3000; i++) {
    if (i === 2 || i === 2998) {
      messages.push(cut(1000 + i));
    } else {
      messages.push({
        session_id: `s${i % 3}`,
        content: i % 4 === 0 ? `其他 ${i}` : `数据 ${i}`,
        timestamp: 1000 + i,
      });
    }
  }
  const s = await seeded([{ id: "s0" }, { id: "s1" }, { id: "s2" }], []);
  s.db.close();
  const ids = await insertRows(s.path, [], messages);
  await indexAsOldSqlite(s.path, [ids[1], ids[2997]]);
  return { path: s.path, old: ids[1], recent: ids[2997] };
}

describe("searchMessages() with messages an older SQLite cut at a U+0000", () => {
  let path: string;
  let old: number;
  let recent: number;
  before(async () => {
    ({ path, old, recent } = await corpus());
  });

  test("the first search of a connection scans only the window it walks", async () => {
    using store = await openStore(path);
    const hits = searchMessages(store, "数据", { limit: 5 });
    assert.ok(hits.some((h) => h.id === recent), "the recent cut message is found");
    const scanned = trigramGapsOf(store).scanned;
    assert.equal(scanned.length, 1);
    const [[from, to]] = scanned;
    assert.equal(to, lastMessageId(store), "from the newest message down");
    assert.ok(from > 2000, `a window of a few hundred messages: from ${from}`);
    assert.deepEqual(trigramGapsOf(store).checked, scanned, "counted in the same window only");
    assert.ok(!hits.some((h) => h.id === old));
    assert.deepEqual(hits, searchMessages(store, "数据", { limit: 5 }, { substring: "scan" }));
  });

  test("searchMessages() gives the LIKE scan's hits on both sides of the window", async () => {
    using store = await openStore(path);
    const pages: SearchOptions[] = [
      { limit: 5 },
      { limit: 20, offset: 3 },
      { limit: 3, sort: "oldest" },
      { limit: 10, offset: 4, sort: "oldest" },
      { limit: 600 },
      { limit: 600, offset: 1700 },
      { limit: 5000, sort: "oldest" },
      { limit: 30, roleFilter: ["tool"] },
    ];
    for (const query of ["数据", "工具", "数据 OR 其他", "据工"]) {
      for (const page of pages) {
        const fast = searchMessages(store, query, page);
        const scan = searchMessages(store, query, page, { substring: "scan" });
        assert.deepEqual(fast, scan, `${query} ${JSON.stringify(page)}`);
      }
    }
    const tool = searchMessages(store, "工具", { limit: 10 }).map((h) => h.id);
    assert.deepEqual(tool, [recent, old], "only the index's cut rows hold 工具");
    assert.deepEqual(
      trigramGapsOf(store).scanned,
      [[1, lastMessageId(store)]],
      "a full page scans it all",
    );
  });

  test("a word found nowhere falls back by substring without reading every message", async () => {
    // The word index lacks the cut rows' text as much as the trigram index does; before,
    // the fallback scanned the whole file for them (0.5 s warm, 5.5 s cold at a million).
    using store = await openStore(path);
    assert.deepEqual(searchMessages(store, "zzqqxx"), []);
    assert.equal(countSearchHits(store, "zzqqxx", {}, 10), 0);
    assert.deepEqual(trigramGapsOf(store).scanned, [], "no message read for U+0000");
    assert.deepEqual(trigramGapsOf(store).checked, [[1, lastMessageId(store)]], "counted");
    // A CJK term keeps Python's answer, the cut rows included.
    const tool = searchMessages(store, "工具", { limit: 10 }).map((h) => h.id);
    assert.deepEqual(tool, [recent, old]);
  });

  test("the oldest first page scans from the oldest message up", async () => {
    using store = await openStore(path);
    const hits = searchMessages(store, "数据", { limit: 3, sort: "oldest" });
    assert.equal(hits[1].id, old, "the old cut message is on the page");
    const [[from, to]] = trigramGapsOf(store).scanned;
    assert.equal(from, 1);
    assert.ok(to < 1000, `up to the window's edge: ${to}`);
  });
});

describe("TrigramGaps", () => {
  let path: string;
  before(async () => {
    // Messages 1–40; 6, 16, 26 and 36 are cut.
    const s = await seeded(
      [{ id: "s0" }],
      Array.from(
        { length: 40 },
        (_, i) => i % 10 === 5 ? cut(i) : { session_id: "s0", timestamp: i },
      ),
    );
    s.db.close();
    path = s.path;
    assert.deepEqual([s.ids[0], s.ids[39]], [1, 40]);
  });

  test("nulRows() scans each range once and merges the ranges it has scanned", async () => {
    using store = await openStore(path);
    const gaps = trigramGapsOf(store);
    const sorted = (list: readonly number[]) => [...list].sort((a, b) => a - b);
    assert.deepEqual(sorted(gaps.nulRows(store, 1, 10)), [6]);
    assert.deepEqual(sorted(gaps.nulRows(store, 20, 30)), [26]);
    assert.deepEqual(gaps.scanned, [[1, 10], [20, 30]]);
    assert.deepEqual(sorted(gaps.nulRows(store, 5, 25)), [6, 16]);
    assert.deepEqual(gaps.scanned, [[1, 30]]);
    assert.deepEqual(gaps.nulRows(store, 31, 30), [], "an empty range");
    assert.deepEqual(sorted(gaps.nulRows(store, 12, 40)), [16, 26, 36]);
    assert.deepEqual(gaps.scanned, [[1, 40]]);
  });

  test("complete() counts each range once and forgets them when the schema changes", async () => {
    using store = await openStore(path);
    const gaps = trigramGapsOf(store);
    assert.ok(gaps.complete(store, 1, 20));
    assert.ok(gaps.complete(store, 10, 40));
    assert.deepEqual(gaps.checked, [[1, 40]]);
    store.db.exec("DELETE FROM messages_fts_trigram WHERE rowid = 30");
    assert.ok(gaps.complete(store, 25, 35), "a range found complete is not counted again");
    store.db.exec("CREATE TABLE temp_marker (x)");
    assert.ok(!gaps.complete(store, 25, 35), "a schema change: counted again");
    assert.deepEqual(gaps.checked, []);
  });

  test("nulRows() does not remember a scan made inside a write transaction", async () => {
    using store = await openStore(path);
    const gaps = trigramGapsOf(store);
    const found = store.write(() => gaps.nulRows(store, 1, 40));
    assert.equal(found.length, 4);
    assert.deepEqual(gaps.scanned, []);
  });

  test("nulRows() sees a message appended after a range below it was scanned", async () => {
    using store = await openStore(path);
    const gaps = trigramGapsOf(store);
    gaps.nulRows(store, 1, lastMessageId(store));
    const [id] = await insertRows(path, [], [cut(99)]);
    assert.ok(gaps.nulRows(store, 1, lastMessageId(store)).includes(id));
    assert.deepEqual(gaps.scanned, [[1, id]]);
  });
});
