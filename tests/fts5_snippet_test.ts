/**
 * FTS5's snippet, cut in TypeScript (the PostgreSQL engine's snippets, and
 * the SQLite engine's for a long text), is FTS5's own: `trigramTokens()` splits a
 * text as FTS5's `trigram` tokenizer does (read back through `fts5vocab`),
 * and `wordsSnippet()` and `trigramSnippet()` with `asFts5` give what SQLite's own
 * `snippet(table, 0, '>>>', '<<<', '...', 40)` gives on the words and the
 * trigram table, for generated texts: CJK runs, sentences, U+0000 (which
 * multimodal content starts with), emoji, case, and overlapping trigram
 * instances. Without `asFts5` they give the same wherever FTS5's snippet
 * does not end in a marked token (`<<<...`), the only place where they may
 * show a match whole that FTS5 cuts (`whole_match.ts`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { trigramTokens } from "../lib/core/search/fts5_text.ts";
import { trigramSnippet, wordsSnippet } from "../lib/core/search/fts5_snippet.ts";
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { mulberry32 } from "./_random.ts";

/** The pieces the generated texts are made of. */
const PIECES = [
  "数据库",
  "数据",
  "库迁移",
  "记忆系统",
  "记忆",
  "负荷测试",
  "测试",
  "完成",
  "的",
  "。",
  "：",
  ". ",
  ": ",
  " ",
  "\n",
  "docker",
  "Docker",
  "compose",
  "unit",
  "test",
  "\u0000json:",
  "ÉTÉ",
  "é",
  "🙂",
  "a",
];

/** Queries as the SQLite engine asks each table (the trigram one only ever with 3+ characters). */
const TRIGRAM_QUERIES = [
  '"数据库"',
  '"记忆系统"',
  '"数据库" AND "记忆系统"',
  '"数据库" OR "负荷测试"',
  '"数据库" NOT "负荷测试"',
  '"数据库 记忆"',
  '"docker" "数据库"',
  '"ÉTÉ数据"',
  '"数据数据"',
];
const WORD_QUERIES = [
  "docker",
  '"unit test"',
  "docker OR compose",
  "unit AND test",
  "compose NOT unit",
  "doc*",
  '"docker compose"',
  'docker OR "..."',
  // A phrase without a token beside others (`docker & compose` is retried so): FTS5 leaves it out.
  'docker "&" compose',
  'unit ""',
  'docker AND ""',
];

function ftsSnippet(db: SqliteConnection, table: string, query: string): string | undefined {
  const row = db.prepare(
    `SELECT snippet(${table}, 0, '>>>', '<<<', '...', 40) AS s FROM ${table} WHERE ${table} MATCH ?`,
  ).get(query);
  return row === undefined ? undefined : String(row.s);
}

test("trigramTokens() gives the terms SQLite's trigram tokenizer stores, in order", async () => {
  const db = await rawOpen(tempDbPath());
  try {
    db.exec("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='trigram')");
    db.exec("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')");
    const samples = [
      "数据库迁移完成",
      "Docker Compose 数据",
      "\u0000json:[数据库]",
      "a\u0000b\u0000cd",
      "ÉTÉ café ÅNGSTRÖM",
      "🙂🚀数据🙂",
      "ab",
      "",
    ];
    for (const sample of samples) {
      db.exec("DELETE FROM t");
      db.prepare("INSERT INTO t (rowid, c) VALUES (1, ?)").run(sample);
      const sqlite = db.prepare("SELECT term FROM v ORDER BY offset").all().map((r) => r.term);
      assert.deepEqual(trigramTokens(sample).map((t) => t.term), sqlite, JSON.stringify(sample));
    }
  } finally {
    db.close();
  }
});

test("wordsSnippet() and trigramSnippet() give FTS5's snippet of generated texts, mark for mark", async () => {
  const db = await rawOpen(":memory:");
  const random = mulberry32(20261202);
  let compared = 0;
  let marked = 0;
  let whole = 0;
  try {
    db.exec("CREATE VIRTUAL TABLE w USING fts5(content)");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')");
    for (let n = 0; n < 400; n++) {
      const length = 1 + Math.floor(random() * (random() < 0.3 ? 120 : 25));
      let text = "";
      for (let i = 0; i < length; i++) text += PIECES[Math.floor(random() * PIECES.length)];
      for (
        const [table, queries, snippet] of [
          ["w", WORD_QUERIES, wordsSnippet],
          ["t", TRIGRAM_QUERIES, trigramSnippet],
        ] as const
      ) {
        db.exec(`DELETE FROM ${table}`);
        db.prepare(`INSERT INTO ${table} (rowid, content) VALUES (1, ?)`).run(text);
        for (const query of queries) {
          const want = ftsSnippet(db, table, query);
          if (want === undefined) continue;
          const what = `${table} ${query} ${JSON.stringify(text)}`;
          assert.equal(snippet(text, query, [], { asFts5: true }), want, what);
          const got = snippet(text, query);
          if (!want.endsWith("<<<...")) assert.equal(got, want, what);
          else if (got !== want) whole++;
          compared++;
          if (want.includes(">>>")) marked++;
        }
      }
    }
  } finally {
    db.close();
  }
  assert.ok(compared > 1000 && marked > 1000, `compared ${compared}, ${marked} with marks`);
  // Some generated texts have a match FTS5 cuts, and the window chosen instead.
  assert.ok(whole >= 5, `${whole} snippets chosen otherwise`);
});

test("the cut snippet of column 0 is FTS5's in a newer Hermes's tables of several columns", async () => {
  // A newer Hermes indexes content, tool_name and tool_calls (words) and content and tool_name
  // (trigrams) in one table each: matches in the other columns must not change column 0's snippet.
  const db = await rawOpen(":memory:");
  const random = mulberry32(20261203);
  const text = (max: number) => {
    let out = "";
    const length = Math.floor(random() * max);
    for (let i = 0; i < length; i++) out += PIECES[Math.floor(random() * PIECES.length)];
    return out;
  };
  let compared = 0;
  let marked = 0;
  let elsewhere = 0;
  try {
    db.exec("CREATE VIRTUAL TABLE w USING fts5(content, tool_name, tool_calls)");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(content, tool_name, tokenize='trigram')");
    for (let n = 0; n < 300; n++) {
      const columns = [text(random() < 0.3 ? 120 : 25), text(4), text(30)];
      db.exec("DELETE FROM w");
      db.exec("DELETE FROM t");
      db.prepare("INSERT INTO w (rowid, content, tool_name, tool_calls) VALUES (1, ?, ?, ?)")
        .run(...columns);
      db.prepare("INSERT INTO t (rowid, content, tool_name) VALUES (1, ?, ?)")
        .run(columns[0], columns[1]);
      for (
        const [table, queries, snippet] of [
          ["w", WORD_QUERIES, wordsSnippet],
          ["t", TRIGRAM_QUERIES, trigramSnippet],
        ] as const
      ) {
        for (const query of queries) {
          const want = ftsSnippet(db, table, query);
          if (want === undefined) continue;
          const others = columns.slice(1, table === "w" ? 3 : 2);
          const what = `${table} ${query} ${JSON.stringify(columns)}`;
          assert.equal(snippet(columns[0], query, others, { asFts5: true }), want, what);
          if (!want.endsWith("<<<...")) {
            assert.equal(snippet(columns[0], query, others), want, what);
          }
          compared++;
          if (want.includes(">>>")) marked++;
          else elsewhere++;
        }
      }
    }
  } finally {
    db.close();
  }
  assert.ok(
    compared > 1000 && marked > 500 && elsewhere > 100,
    `${compared}, ${marked}, ${elsewhere}`,
  );
});

test("a phrase without a token beside others is left out, as FTS5 leaves it out", () => {
  assert.equal(wordsSnippet("error here", 'error ""'), ">>>error<<< here");
  assert.equal(
    wordsSnippet("reset then retry", '"reset" "&" "retry"'),
    ">>>reset<<< then >>>retry<<<",
  );
  assert.equal(wordsSnippet("error here", '"" ""'), "error here");
});

test("trigramSnippet() keeps a span open over the trigrams that overlap it, as FTS5 does", () => {
  assert.equal(trigramSnippet("见数据数据数据见", '"数据数据"'), "见>>>数据数据数据<<<见");
  assert.equal(trigramSnippet("数据库与数据库", '"数据库"'), ">>>数据库<<<与>>>数据库<<<");
  assert.equal(
    trigramSnippet("x".repeat(60) + "数据库", '"数据库"'),
    "..." + "x".repeat(39) + ">>>数据库<<<",
  );
});

test("a match FTS5's snippet cuts at its window's end is shown whole, in the window centred on it", async () => {
  const words = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");
  const cases = [
    {
      table: "w",
      snippet: wordsSnippet,
      text: `${words("w", 39)} unit test ${words("v", 30)}`,
      query: '"unit test"',
      whole: `...${words("w", 39).slice(words("w", 20).length + 1)} >>>unit test<<< ${
        words("v", 19)
      }...`,
    },
    {
      table: "t",
      snippet: trigramSnippet,
      text:
        "我们今天讨论了很多关于系统设计的问题，包括缓存和队列的使用方法以及消息中间件数据库连接池的配置和调优。",
      query: '"数据库连接池"',
      whole:
        "...关于系统设计的问题，包括缓存和队列的使用方法以及消息中间件>>>数据库连接池<<<的配置和调优。",
    },
  ] as const;
  const db = await rawOpen(":memory:");
  try {
    db.exec("CREATE VIRTUAL TABLE w USING fts5(content)");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')");
    for (const { table, snippet, text, query, whole } of cases) {
      db.prepare(`INSERT INTO ${table} (rowid, content) VALUES (1, ?)`).run(text);
      // FTS5 keeps the window from the sentence's start, which holds only the match's beginning.
      const fts5 = ftsSnippet(db, table, query)!;
      assert.match(fts5, /^w0 |^我们/);
      assert.match(fts5, />>>(unit|数据库连)<<<\.\.\.$/);
      assert.equal(snippet(text, query, [], { asFts5: true }), fts5);
      assert.equal(snippet(text, query), whole);
    }
  } finally {
    db.close();
  }
});
