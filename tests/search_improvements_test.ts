/**
 * The documented differences from Python v11 (docs/search_improvements.md):
 * where Python answers `[]`, searchMessages() returns what a user expects.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { planSearch } from "../lib/core/search/plan.ts";
import { copyFixture } from "./_helpers.ts";
import { type Seeded, seeded } from "./_search_data.ts";

describe("searchMessages() improvements on the v11 fixture", () => {
  let db: SessionDB;
  before(async () => {
    db = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
  });
  after(() => db.close());

  test("searchMessages() finds short CJK words joined by OR, newest first", () => {
    const hits = db.searchMessages("记忆 OR 断裂");
    assert.deepEqual(hits.map((h) => h.id), [46, 45, 44, 42, 41]);
    assert.ok(hits.every((h) => /记忆|断裂/.test(h.snippet ?? "")));
    assert.ok(hits.every((h) => !h.snippet!.includes(">>>")), "substring snippets are unmarked");
  });

  test("searchMessages() requires every short CJK word when there is no OR", () => {
    const hits = db.searchMessages("记忆 断裂");
    assert.deepEqual(hits.map((h) => h.id), [46, 45, 42, 41]);
    for (const hit of hits) {
      const text = hit.context.find((c) => c.content.startsWith(hit.snippet!.slice(0, 10)));
      assert.ok(text === undefined || (/记忆/.test(text.content) && /断裂/.test(text.content)));
    }
  });

  test("searchMessages() reads a quoted compound next to CJK text as a phrase", () => {
    for (const query of ['"chat-send" 負荷テスト', "負荷テスト chat-send"]) {
      const hits = db.searchMessages(query);
      assert.deepEqual(hits.map((h) => h.id).sort(), [131, 132], query);
      for (const hit of hits) {
        assert.match(hit.snippet!, />>>chat-send<<< の>>>負荷テスト<<</, query);
      }
    }
  });

  test("searchMessages() finds an emoji by substring", () => {
    const hits = db.searchMessages("🚀");
    assert.deepEqual(hits.map((h) => h.id), [163, 162, 95, 94]);
    assert.ok(hits.every((h) => h.snippet!.includes("🚀")));
    // A keycap emoji, which no message holds, is not its digit (19 hits of a "1" before).
    assert.deepEqual(db.searchMessages("1\uFE0F\u20E3"), []);
  });

  test("searchMessages() retries e.g. as a quoted phrase", () => {
    const hits = db.searchMessages("e.g.");
    assert.deepEqual(hits.map((h) => h.id), [128]);
    assert.match(hits[0].snippet!, />>>e\.g<<<\./);
  });

  test("searchMessages() keeps Python's [] where even the repaired query is invalid", () => {
    assert.deepEqual(db.searchMessages("a AND OR b"), []);
  });
});

describe("searchMessages() improvements on synthetic text", () => {
  let s: Seeded;
  before(async () => {
    s = await seeded([{ id: "x", source: "cli" }], [
      { session_id: "x", content: "set foo:bar in the config", timestamp: 1 },
      { session_id: "x", content: "foo and bar apart", timestamp: 2 },
      { session_id: "x", content: "pass the -flag option", timestamp: 3 },
      { session_id: "x", content: "회의록 정리 완료", timestamp: 4 },
      { session_id: "x", content: "회의록 초안", timestamp: 5 },
      { session_id: "x", content: "→ arrow ← back", timestamp: 6 },
    ]);
  });
  after(() => s.db.close());

  test("searchMessages() reads foo:bar as a phrase instead of a column filter", () => {
    const hits = s.db.searchMessages("foo:bar");
    assert.deepEqual(hits.map((h) => h.id), [s.ids[0]]);
    assert.equal(hits[0].snippet, "set >>>foo:bar<<< in the config  ");
  });

  test("searchMessages() keeps a trailing prefix star when it repairs a query", () => {
    assert.deepEqual(s.db.searchMessages("foo:ba*").map((h) => h.id), [s.ids[0]]);
  });

  test("searchMessages() reads -flag as a word", () => {
    assert.deepEqual(s.db.searchMessages("-flag").map((h) => h.id), [s.ids[2]]);
  });

  test("searchMessages() ranks by the long CJK word and checks the short one", () => {
    const hits = s.db.searchMessages("회의록 정리");
    assert.deepEqual(hits.map((h) => h.id), [s.ids[3]], "Python would also return the draft");
    assert.equal(hits[0].snippet, ">>>회의록<<< 정리 완료  ");
  });

  test("searchMessages() finds non-ASCII symbols by substring", () => {
    assert.deepEqual(s.db.searchMessages("←").map((h) => h.id), [s.ids[5]]);
  });
});

/** A substring plan: one clause per list of words; `none` excludes from the first clause. */
function substring(clauses: string[][], none: string[][] = []): ReturnType<typeof planSearch> {
  return {
    kind: "substring",
    condition: clauses.map((all, i) => ({ all, none: i === 0 ? none : [] })),
  };
}

describe("planSearch() routes like Python except where documented", () => {
  const cases: Array<[string, ReturnType<typeof planSearch>]> = [
    ["docker", {
      kind: "ranked",
      index: "words",
      expression: "docker",
      retry: '"docker"',
      check: null,
    }],
    ["记忆断裂", {
      kind: "ranked",
      index: "trigram",
      expression: '"记忆断裂"',
      retry: undefined,
      check: null,
    }],
    ["通信", substring([["通信"]])],
    ["数 据", substring([["数", "据"]])],
    ["记忆 OR 断裂", substring([["记忆"], ["断裂"]])],
    ["记忆 断裂", substring([["记忆", "断裂"]])],
    ["记忆 docker", substring([["记忆", "docker"]])],
    ["记忆 AND docker", substring([["记忆", "docker"]])],
    ["docker 数据", substring([["docker", "数据"]])],
    ["记忆 NOT docker", substring([["记忆"]], [["docker"]])],
    ["记忆* deploy*", substring([["记忆", "deploy"]])],
    ["회의록 정리", {
      kind: "ranked",
      index: "trigram",
      expression: '"회의록"',
      retry: undefined,
      check: [{ all: ["정리"], none: [] }],
    }],
    ["회의록 OR 정리 docker", {
      kind: "ranked",
      index: "trigram",
      expression: '"회의록" OR "docker"',
      retry: undefined,
      check: [{ all: ["회의록"], none: [] }, { all: ["정리", "docker"], none: [] }],
    }],
    ["회의록 OR 정리", substring([["회의록"], ["정리"]])],
    ["记忆断裂 AND OR 数据库", { kind: "nothing" }],
    ['"chat-send" 負荷テスト', {
      kind: "ranked",
      index: "trigram",
      expression: '"chat-send" "負荷テスト"',
      retry: undefined,
      check: null,
    }],
    ["🚀", substring([["🚀"]])],
    ['"🚀" 🎉', substring([["🚀", "🎉"]])],
    ["🚀 OR 🎉", substring([["🚀"], ["🎉"]])],
    ["warning \u26A0\uFE0F", substring([["warning", "\u26A0\uFE0F"]])],
    // A keycap emoji is its digit to the word index (which found every "1").
    ["1\uFE0F\u20E3", substring([["1\uFE0F\u20E3"]])],
    ["step 1\u20E3", substring([["step", "1\u20E3"]])],
    ['记忆 OR "" OR 断裂', substring([["记忆"], ["断裂"]])],
    ["e.g.", {
      kind: "ranked",
      index: "words",
      expression: '"e.g".',
      retry: '"e.g."',
      check: null,
    }],
    ["", { kind: "nothing" }],
    ['""', { kind: "ranked", index: "words", expression: '""', retry: undefined, check: null }],
  ];
  for (const [query, plan] of cases) {
    test(`planSearch() plans ${JSON.stringify(query)}`, () => {
      assert.deepEqual(planSearch(query), plan);
    });
  }
});
