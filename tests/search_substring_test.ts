/**
 * searchMessages() on the substring (LIKE) path: order, snippet, filters,
 * context, literal `\ % _`, and the trigram-candidate fast path checked
 * against Python's full scan.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { termKind, trigramIndexUsable } from "../lib/sqlite/search/trigram_candidates.ts";
import { trigramGapsOf } from "../lib/sqlite/search/trigram_gaps.ts";
import { lastMessageId } from "../lib/sqlite/message_ids.ts";
import { copyFixture, rawOpen } from "./_helpers.ts";
import { insertRows, type MessageSeed, type Seeded, seeded } from "./_search_data.ts";
import { mulberry32 } from "./_random.ts";

async function openStore(path: string, readonly = false): Promise<Store> {
  const { db, writer } = await openConnection({ path, readonly });
  return new Store(db, writer, { path, readonly });
}

describe("searchMessages() on the substring path", () => {
  let s: Seeded;
  before(async () => {
    s = await seeded(
      [
        { id: "g", source: "cli", model: "m-g", started_at: 10 },
        { id: "h", source: "telegram", started_at: 20 },
      ],
      [
        { session_id: "g", content: "我们讨论数据迁移", timestamp: 11 },
        {
          session_id: "g",
          role: "assistant",
          content: null,
          tool_calls: '[{"function": {"arguments": "{\\"q\\": \\"数据\\"}"}}]',
          timestamp: 12,
        },
        { session_id: "g", role: "tool", content: "无关", tool_name: "数据工具", timestamp: 13 },
        { session_id: "g", content: "前".repeat(50) + "数据" + "后".repeat(100), timestamp: 14 },
        { session_id: "h", content: "数__%\\ literal", timestamp: 21 },
        { session_id: "h", content: "数ab anything \\ at all", timestamp: 22 },
        { session_id: "h", role: "assistant", content: "telegram 数据 reply", timestamp: 23 },
      ],
    );
  });
  after(() => s.db.close());

  test("searchMessages() matches content, tool name and tool calls, newest first", () => {
    const hits = s.db.searchMessages("数据");
    assert.deepEqual(hits.map((h) => h.id), [s.ids[6], s.ids[3], s.ids[2], s.ids[1], s.ids[0]]);
  });

  test("searchMessages() cuts 120 characters from 40 before the match, unmarked", () => {
    const byId = new Map(s.db.searchMessages("数据").map((h) => [h.id, h.snippet]));
    assert.equal(byId.get(s.ids[3]), "前".repeat(40) + "数据" + "后".repeat(78));
    assert.equal(byId.get(s.ids[0]), "我们讨论数据迁移");
    assert.equal(byId.get(s.ids[2]), "无关", "no match in content: from the start");
    assert.equal(
      byId.get(s.ids[1]),
      '[{"function": {"arguments": "{\\"q\\": \\"数据\\"}"}}]',
      "NULL content: the tool calls that hold the match (it was null)",
    );
  });

  test("searchMessages() applies the filters on the substring path", () => {
    const ids = (options: SearchOptions) => s.db.searchMessages("数据", options).map((h) => h.id);
    assert.deepEqual(ids({ sourceFilter: ["telegram"] }), [s.ids[6]]);
    assert.deepEqual(ids({ sourceFilter: [] }), []);
    assert.deepEqual(ids({ excludeSources: ["telegram"] }), [
      s.ids[3],
      s.ids[2],
      s.ids[1],
      s.ids[0],
    ]);
    assert.deepEqual(ids({ roleFilter: ["tool", "assistant"] }), [s.ids[6], s.ids[2], s.ids[1]]);
    assert.deepEqual(ids({ limit: 2, offset: 1 }), [s.ids[3], s.ids[2]]);
  });

  test("searchMessages() gives the substring hits their context", () => {
    const [hit] = s.db.searchMessages("数据", { roleFilter: ["tool"] });
    assert.deepEqual(hit, {
      id: s.ids[2],
      session_id: "g",
      role: "tool",
      snippet: "无关",
      timestamp: 13,
      tool_name: "数据工具",
      source: "cli",
      model: "m-g",
      session_started: 10,
      context: [
        { role: "assistant", content: "" },
        { role: "tool", content: "无关" },
        { role: "user", content: "前".repeat(50) + "数据" + "后".repeat(100) },
      ],
    });
  });

  test("searchMessages() matches backslash, percent and underscore literally", () => {
    const hits = s.db.searchMessages("数__%\\");
    assert.deepEqual(hits.map((h) => h.id), [s.ids[4]]);
    assert.equal(hits[0].snippet, "数__%\\ literal");
  });

  test("searchMessages() treats LIKE as case-insensitive for ASCII only", async () => {
    const t = await seeded([{ id: "x" }], [
      { session_id: "x", content: "Agent通信 upper", timestamp: 1 },
      { session_id: "x", content: "AGENT通信 shout", timestamp: 2 },
      { session_id: "x", content: "ÀGENT通信 accent", timestamp: 3 },
    ]);
    try {
      assert.deepEqual(t.db.searchMessages("agent通信").map((h) => h.id), [t.ids[1], t.ids[0]]);
    } finally {
      t.db.close();
    }
  });
});

/** A corpus over a small alphabet, so two-character words collide often. */
function corpus(seed: number, count: number): MessageSeed[] {
  const rnd = mulberry32(seed);
  // Thai (a tone mark among them) is searched by substring as CJK is.
  const alphabet = Array.from("数据记忆断裂テスト안녕ไปข้ab_%");
  const word = (n: number) =>
    Array.from({ length: n }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join("");
  const messages: MessageSeed[] = [];
  let timestamp = 1000;
  for (let i = 0; i < count; i++) {
    if (rnd() < 0.6) timestamp += 1; // else: equal to the previous one
    const session_id = `s${Math.floor(rnd() * 6)}`;
    const kind = rnd();
    messages.push({
      session_id,
      role: ["user", "assistant", "tool"][Math.floor(rnd() * 3)],
      content: kind < 0.1
        ? null
        : kind < 0.15
        ? "\u0000json:" + JSON.stringify([{ type: "text", text: word(6) }])
        : `${word(1 + Math.floor(rnd() * 12))} ${word(3)}`,
      tool_name: rnd() < 0.2 ? word(2) : null,
      tool_calls: rnd() < 0.2 ? JSON.stringify([{ arguments: word(4) }]) : null,
      timestamp,
    });
  }
  return messages;
}

/** The six sessions `corpus()` writes to. */
const SESSIONS = Array.from(
  { length: 6 },
  (_, i) => ({ id: `s${i}`, source: i % 2 ? "cli" : "tool" }),
);

describe("searchMessages() finds substring candidates through the trigram index", () => {
  let path: string;
  let store: Store;
  const queries: string[] = [];
  before(async () => {
    const s = await seeded(SESSIONS, corpus(42, 400));
    s.db.close();
    path = s.path;
    store = await openStore(path);
    const chars = Array.from("数据记忆断裂テスト안녕ไปข้");
    for (const a of chars) for (const b of chars) queries.push(a + b);
    queries.push(
      "数据记",
      "记忆 OR 断裂",
      "数据 记忆",
      "数 据",
      "ab数据",
      "测试 안녕",
      "数_",
      "%数",
      "ไป OR ข้",
    );
  });
  after(() => store.db.close());

  test("termKind(): two CJK, Thai, Lao, Myanmar or Khmer characters are a pair the index finds", () => {
    for (const pair of ["数据", "ไป", "ຂໍ", "ဒေ", "ភា", "数ไ"]) {
      assert.equal(termKind(pair), "pair", pair);
    }
    for (const term of ["a数", "ไa", "д數", "ไ"]) assert.equal(termKind(term), undefined, term);
    assert.equal(termKind("ไปย"), "phrase");
  });

  test("trigramIndexUsable() accepts a v11 file and the v11 fixture", async () => {
    assert.ok(trigramIndexUsable(store));
    const fixture = await openStore(copyFixture("hermes-v11.db"));
    try {
      assert.ok(trigramIndexUsable(fixture));
    } finally {
      fixture.db.close();
    }
  });

  test("searchMessages() returns exactly the full scan's hits for every query", () => {
    const options: SearchOptions[] = [
      { limit: 1000 },
      { limit: 7, offset: 3 },
      { sourceFilter: ["cli"], roleFilter: ["assistant", "tool"], limit: 50 },
      { excludeSources: ["cli"] },
    ];
    let nonEmpty = 0;
    for (const query of queries) {
      for (const option of options) {
        const fast = searchMessages(store, query, option);
        const scan = searchMessages(store, query, option, { substring: "scan" });
        assert.deepEqual(fast, scan, `${query} ${JSON.stringify(option)}`);
        if (fast.length > 0) nonEmpty++;
      }
    }
    assert.ok(nonEmpty > 200, `the corpus matches: ${nonEmpty}`);
  });

  test("searchMessages() combines many short CJK words as a union or an intersection", () => {
    // Five different CJK pairs of one stored message, so the intersection is not empty.
    const cjkPair = /^[\p{Script=Han}\p{Script=Katakana}\p{Script=Hangul}]{2}$/u;
    let words: string[] = [];
    for (
      const row of store.db.prepare("SELECT content FROM messages WHERE content IS NOT NULL").all()
    ) {
      const chars = Array.from(String(row.content));
      const pairs = new Set(
        chars.slice(1).map((c, i) => chars[i] + c).filter((p) => cjkPair.test(p)),
      );
      if (pairs.size >= 5) words = [...pairs].slice(0, 5);
    }
    assert.equal(words.length, 5, "the corpus has a message with five pairs");
    const ids = (query: string) =>
      new Set(searchMessages(store, query, { limit: 10_000 }).map((h) => h.id));
    const each = words.map((w) => ids(w));
    const sorted = (set: Iterable<number>) => [...set].sort((x, y) => x - y);
    const union = (sets: Set<number>[]) => sorted(new Set(sets.flatMap((set) => [...set])));
    const intersection = (sets: Set<number>[]) =>
      sorted([...sets[0]].filter((id) => sets.every((set) => set.has(id))));
    // Five terms are bound as one JSON array, two are written out.
    assert.deepEqual(sorted(ids(words.join(" OR "))), union(each));
    assert.deepEqual(sorted(ids(words.join(" "))), intersection(each));
    assert.deepEqual(sorted(ids(words.slice(0, 2).join(" OR "))), union(each.slice(0, 2)));
    assert.deepEqual(sorted(ids(words.slice(0, 2).join(" "))), intersection(each.slice(0, 2)));
    assert.ok(intersection(each).length > 0 && union(each).length > intersection(each).length);
  });

  test("searchMessages() orders equal timestamps by id, as Python's scan does", async () => {
    const raw = await rawOpen(path, true);
    try {
      // Python's LIKE query, verbatim in shape: no explicit tie-break.
      const python = raw.prepare(
        "SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id " +
          "WHERE (m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' " +
          "OR m.tool_calls LIKE ? ESCAPE '\\') ORDER BY m.timestamp DESC LIMIT ? OFFSET ?",
      );
      for (const query of queries.slice(0, 60)) {
        const pattern = `%${query}%`;
        const expected = python.all(pattern, pattern, pattern, 1000, 0).map((r) => r.id);
        const ids = searchMessages(store, query, { limit: 1000 }).map((h) => h.id);
        assert.deepEqual(ids, expected, query);
      }
    } finally {
      raw.close();
    }
  });

  test("searchMessages() scans when the index was recreated without a backfill", async () => {
    const copy = await openStore(copyFixture("hermes-v11.db"));
    try {
      copy.db.exec("DROP TABLE messages_fts_trigram");
      copy.db.exec(
        "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(\n    content,\n    tokenize='trigram'\n)",
      );
      assert.ok(!trigramGapsOf(copy).complete(copy, 1, lastMessageId(copy)), "rows are missing");
      const hits = searchMessages(copy, "通信");
      assert.equal(hits.length, 4, "the scan still finds the fixture's hits");
      assert.deepEqual(hits, searchMessages(copy, "通信", {}, { substring: "scan" }));
    } finally {
      copy.db.close();
    }
  });

  test("searchMessages() notices an index another connection recreated after a search", async () => {
    const path = copyFixture("hermes-v11.db");
    const own = await openStore(path);
    try {
      assert.equal(searchMessages(own, "通信").length, 4);
      assert.ok(trigramGapsOf(own).checked.length > 0, "the walked window was found complete");
      using other = await rawOpen(path);
      other.exec("DROP TABLE messages_fts_trigram");
      other.exec(
        "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(\n    content,\n    tokenize='trigram'\n)",
      );
      assert.equal(searchMessages(own, "通信").length, 4, "the scan finds the fixture's hits");
      assert.ok(
        !trigramGapsOf(own).complete(own, 1, lastMessageId(own)),
        "the schema cookie moved",
      );
    } finally {
      own.db.close();
    }
  });

  test("trigramIndexUsable() refuses a v6 file opened read-only, and the scan still runs", async () => {
    const old = await openStore(copyFixture("hermes-v6.db"), true);
    try {
      assert.ok(!trigramIndexUsable(old));
      assert.equal(searchMessages(old, "通信").length, 2);
    } finally {
      old.db.close();
    }
  });

  test("searchMessages() sees messages another connection appended after the first search", async () => {
    const s = await seeded(SESSIONS, corpus(7, 50));
    s.db.close();
    const own = await openStore(s.path);
    try {
      assert.deepEqual(searchMessages(own, "最新"), [], "the first search sets up the vocabulary");
      await insertRows(s.path, [], [{
        session_id: "s1",
        content: "最新的数据",
        timestamp: 99_999,
      }]);
      const [hit] = searchMessages(own, "最新", { limit: 1 });
      assert.equal(hit.snippet, "最新的数据");
      assert.deepEqual(
        searchMessages(own, "数据", { limit: 30 }),
        searchMessages(own, "数据", { limit: 30 }, { substring: "scan" }),
      );
    } finally {
      own.db.close();
    }
  });

  test("searchMessages() gives the full scan's hits for a pair with more trigrams than one MATCH takes", async () => {
    // 数据 followed by 300 different characters: 300 trigrams start with the pair.
    const rows = Array.from({ length: 300 }, (_, i) => ({
      session_id: `s${i % 6}`,
      content: `前数据${String.fromCodePoint(0x4e00 + i)}后 ${i}`,
      timestamp: 10_000 + (i % 7 === 0 ? i - 50 : i),
    }));
    const s = await seeded(SESSIONS, rows);
    s.db.close();
    const own = await openStore(s.path);
    try {
      const terms = own.db.prepare(
        "SELECT count(DISTINCT substr(content, 2, 3)) AS n FROM messages WHERE content LIKE '前数据%'",
      ).get();
      assert.equal(terms?.n, 300);
      for (
        const option of [{ limit: 5 }, { limit: 40, offset: 250 }, {
          limit: 7,
          sort: "oldest" as const,
        }]
      ) {
        const fast = searchMessages(own, "数据", option);
        assert.deepEqual(fast, searchMessages(own, "数据", option, { substring: "scan" }));
        assert.ok(fast.length > 0);
      }
    } finally {
      own.db.close();
    }
  });

  test("searchMessages() finds tool names an older SQLite left out of the index after a U+0000", async () => {
    // In the fixture, SQLite 3.40 indexed message 92 ("ELF…\0…", tool terminal) only up to its U+0000.
    const fixture = await openStore(copyFixture("hermes-v11.db"));
    try {
      const hits = searchMessages(fixture, "数据 OR terminal", { limit: 100 });
      assert.ok(hits.some((h) => h.id === 92), "message 92 matches on its tool name");
      assert.deepEqual(
        hits,
        searchMessages(fixture, "数据 OR terminal", { limit: 100 }, { substring: "scan" }),
      );
    } finally {
      fixture.db.close();
    }
  });

  test("searchMessages() notices such messages appended after its first search", async () => {
    const s = await seeded(SESSIONS, corpus(9, 50));
    s.db.close();
    const own = await openStore(s.path);
    try {
      assert.deepEqual(searchMessages(own, "工具"), [], "the first search looks at every message");
      const [id] = await insertRows(s.path, [], [
        {
          session_id: "s2",
          role: "tool",
          content: "bin\u0000ary",
          tool_name: "数据工具",
          timestamp: 5e5,
        },
      ]);
      // Index it the way SQLite 3.40 did: only up to the U+0000.
      using raw = await rawOpen(s.path);
      raw.prepare("DELETE FROM messages_fts_trigram WHERE rowid = ?").run(id);
      raw.prepare("INSERT INTO messages_fts_trigram(rowid, content) VALUES (?, 'bin')").run(id);
      raw.close();
      for (const query of ["工具", "据工"]) {
        assert.deepEqual(searchMessages(own, query).map((h) => h.id), [id], query);
      }
    } finally {
      own.db.close();
    }
  });
});

describe("searchMessages() on a stale words index: snippets of hits found by tool name or calls", () => {
  let s: Seeded;
  const call = (command: string) =>
    JSON.stringify([{ type: "function", function: { name: "terminal", arguments: command } }]);
  before(async () => {
    s = await seeded([{ id: "t", source: "cli", started_at: 10 }], [
      { session_id: "t", content: "roll out the new release", timestamp: 11 },
      {
        session_id: "t",
        role: "assistant",
        content: null,
        tool_calls: call("x".repeat(80) + " Kubectl rollout status " + "y".repeat(200)),
        timestamp: 12,
      },
      { session_id: "t", role: "tool", content: "", tool_name: "grafana_query", timestamp: 13 },
      { session_id: "t", content: "kubectl and grafana both work", timestamp: 14 },
    ]);
    s.db.setMeta("fts_stale:messages_fts", "x");
  });
  after(() => s.db.close());

  test("searchMessages() cuts a contentless hit's snippet from the tool calls holding the word (it was null)", () => {
    const hits = s.db.searchMessages("kubectl");
    assert.deepEqual(hits.map((h) => h.id), [s.ids[3], s.ids[1]]);
    const calls = call("x".repeat(80) + " Kubectl rollout status " + "y".repeat(200));
    const at = calls.indexOf("Kubectl");
    assert.equal(hits[1].snippet, calls.slice(at - 40, at - 40 + 120), "40 before, 120 long");
    assert.equal(hits[0].snippet, "kubectl and grafana both work", "a content hit as before");
  });

  test("searchMessages() cuts an empty-content hit's snippet from the tool name holding the word", () => {
    const hits = s.db.searchMessages("GRAFANA");
    assert.deepEqual(hits.map((h) => [h.id, h.snippet]), [
      [s.ids[3], "kubectl and grafana both work"],
      [s.ids[2], "grafana_query"],
    ]);
  });
});
