/**
 * searchMessages() on the substring path where no index can name
 * candidates (one character; two that are not both CJK; a file whose
 * trigram index leaves messages out, as a newer Hermes's does): the
 * messages are read a window of ids at a time, newest first, until the
 * page is whole (`substring_walk.ts`). Checked against Python's full scan
 * on files larger than several windows, whose timestamps do not always
 * grow with the ids (a session imported with old times, one whose clock ran
 * ahead, rows with ids of 0 and below), in both orders, past the first page,
 * and with every kind of filter.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync } from "node:fs";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { FIRST_WINDOW } from "../lib/sqlite/search/substring_walk.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { insertRows, type MessageSeed, type SessionSeed } from "./_search_data.ts";
import { layOutAsSchema30 } from "./_newer_layout.ts";
import { mulberry32 } from "./_random.ts";

async function openStore(path: string): Promise<Store> {
  const { db, writer } = await openConnection({ path, readonly: false });
  return new Store(db, writer, { path, readonly: false });
}

/** Messages in the corpus: several windows' worth. */
const MESSAGES = FIRST_WINDOW * 5;
/** Characters found in most messages. */
const COMMON = "数据的a";
/** Characters found in a few messages (about a page's worth each). */
const RARE = "鲸q";

/**
 * Sessions of every source, their messages appended in turns (ids grow with
 * time); one session imported late with old timestamps (high ids, early
 * times), one whose clock ran an hour ahead in the first half, and tool rows
 * among them.
 */
function corpus(): { sessions: SessionSeed[]; messages: MessageSeed[] } {
  const random = mulberry32(20261207);
  const sources = ["cli", "telegram", "cron", "subagent", "discord"];
  const sessions: SessionSeed[] = Array.from({ length: 40 }, (_, i) => ({
    id: `s${i}`,
    source: sources[i % sources.length],
    started_at: 1_700_000_000 + i,
  }));
  sessions.push({ id: "imported", source: "cli", started_at: 1_600_000_000 });
  sessions.push({ id: "ahead", source: "telegram", started_at: 1_700_000_000 });
  const messages: MessageSeed[] = [];
  const text = () => {
    let out = "";
    const length = 3 + Math.floor(random() * 12);
    for (let k = 0; k < length; k++) {
      const r = random();
      if (r < 0.0002) out += RARE[Math.floor(random() * RARE.length)];
      else if (r < 0.25) out += COMMON[Math.floor(random() * COMMON.length)];
      else out += "布局文件 xyz"[Math.floor(random() * 8)];
    }
    return out;
  };
  for (let i = 0; i < MESSAGES; i++) {
    const late = i > MESSAGES - 600;
    const session = late && i % 3 === 0
      ? "imported"
      : i % 97 === 0 && i < MESSAGES / 2
      ? "ahead"
      : `s${Math.floor(random() * 40)}`;
    const timestamp = session === "imported"
      ? 1_600_000_000 + i // imported at the end, stamped years before
      : session === "ahead"
      ? 1_700_000_000 + i + 3600 // its clock an hour ahead
      : 1_700_000_000 + i + (i % 5 === 0 ? 0.5 : 0); // some ties broken by id
    const role = i % 7 === 0 ? "tool" : i % 2 === 0 ? "user" : "assistant";
    messages.push({ session_id: session, role, content: text(), timestamp });
  }
  // Equal timestamps across sessions: the order among them is by id.
  for (let i = 0; i < 30; i++) {
    messages.push({ session_id: `s${i}`, content: `数 tie ${i}`, timestamp: 1_700_010_000 });
  }
  return { sessions, messages };
}

/**
 * CJK characters no index can find (read by substring), Latin letters the word index answers, and
 * two CJK queries the trigram index names candidates for on a v11 file.
 */
const QUERIES = ["数", "鲸", "q", "xy", "鲸 OR q", "数 鲸", "数 NOT 的", "a", "布局文", "数据"];

const OPTIONS: SearchOptions[] = [
  {},
  { limit: 7, offset: 30 },
  { sort: "oldest" },
  { sort: "oldest", limit: 5, offset: 11 },
  { limit: 50, sourceFilter: ["telegram"] },
  { excludeSources: ["cron", "subagent"], roleFilter: ["tool"] },
  { sessionId: "imported", limit: 10 },
  { since: 1_700_004_000, until: 1_700_012_000 },
  { until: 1_700_001_000, limit: 30 },
  { since: 1_700_019_000, sort: "oldest", limit: 30 },
  { limit: 1000 },
];

/** Every query and option: the window walk's page is the full scan's page. */
function assertScanPages(store: Store): void {
  let nonEmpty = 0;
  for (const query of QUERIES) {
    for (const option of OPTIONS) {
      const walked = searchMessages(store, query, option);
      const scan = searchMessages(store, query, option, { substring: "scan" });
      assert.deepEqual(walked, scan, `${query} ${JSON.stringify(option)}`);
      if (walked.length > 0) nonEmpty++;
    }
  }
  assert.ok(nonEmpty > QUERIES.length * OPTIONS.length / 2, `the corpus matches: ${nonEmpty}`);
}

describe("searchMessages() reads messages by id windows where no index names candidates", () => {
  let path = "";
  let store: Store;
  before(async () => {
    path = tempDbPath();
    (await SessionDB.open({ path })).close();
    const { sessions, messages } = corpus();
    await insertRows(path, sessions, messages);
    {
      // Ids below 1, as a hand-made row can have them: no id range may leave them out.
      using raw = await rawOpen(path);
      const insert = raw.prepare(
        "INSERT INTO messages (id, session_id, role, content, timestamp) VALUES (?, 's1', 'user', ?, ?)",
      );
      insert.run(0, "数 鲸 q 布局文件 at id zero", 1_650_000_000);
      insert.run(-7, "数 鲸 q 数据 below zero", 1_650_000_001);
    }
    store = await openStore(path);
  });
  after(() => store.db.close());

  test("every page is the full scan's, in both orders, past the first page and filtered", () => {
    assertScanPages(store);
  });

  test("a common character's page is found in the newest window; a rare one's, and the oldest page, walk them all", () => {
    const windows: number[] = [];
    const onWindows = (count: number) => windows.push(count);
    assert.equal(searchMessages(store, "数", {}, { onWindows }).length, 20);
    // "鲸" is in few messages: every window is read before the page is known.
    searchMessages(store, "鲸", {}, { onWindows });
    // The oldest messages were imported last (the highest ids): the walk from the oldest id
    // cannot stop before it has read them.
    searchMessages(store, "数", { sort: "oldest" }, { onWindows });
    assert.equal(windows[0], 1);
    assert.ok(windows[1] >= 3 && windows[2] === windows[1], `every window: ${windows}`);
  });

  test("on a file whose trigram index leaves messages out (a newer Hermes's), every page is the scan's", async () => {
    const copy = tempDbPath();
    copyFileSync(path, copy);
    {
      using raw = await rawOpen(copy);
      layOutAsSchema30(raw);
    }
    const newer = await openStore(copy);
    try {
      // Two CJK characters: the trigram index would answer them on a v11 file.
      const windows: number[] = [];
      const pair = searchMessages(newer, "数据", {}, { onWindows: (n) => windows.push(n) });
      assert.equal(pair.length, 20);
      assert.deepEqual(windows, [1], "answered from the newest window, not by the scan");
      assert.deepEqual(pair, searchMessages(newer, "数据", {}, { substring: "scan" }));
      assertScanPages(newer);
    } finally {
      newer.db.close();
    }
  });
});
