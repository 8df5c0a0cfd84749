/**
 * A long text's snippet is cut in TypeScript (`long_snippet.ts`), where
 * FTS5's `snippet()` takes a second on a log that repeats the searched
 * word: the hits are the same as FTS5's own `snippet()` of the same row,
 * by rank and in time order, for words and for CJK trigrams, and a short
 * text keeps FTS5's; in a newer Hermes's tables of several columns too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { LONG_TEXT_BYTES } from "../lib/sqlite/search/long_snippet.ts";
import { longTextColumns } from "../lib/sqlite/schema/fts_layout.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { layOutAsSchema30 } from "./_newer_layout.ts";
import { planSearch } from "../lib/core/search/plan.ts";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";

function log(lines: number, line: (i: number) => string): string {
  return Array.from({ length: lines }, (_, i) => line(i)).join("\n");
}

test("searchMessages() gives a long text the snippet FTS5 gives it, by rank and in time order, words and CJK", async () => {
  const path = tempDbPath();
  let clock = 1_700_000_000;
  const long = log(
    600,
    (i) => `12:00:${i % 60} worker-${i % 7}: error: connection reset. 数据库 重试 ${i}`,
  );
  const longer = "preface without the word. " +
    log(900, (i) => `line ${i}: 数据库迁移 step ${i} error? no: retry`);
  assert.ok(new TextEncoder().encode(long).length > LONG_TEXT_BYTES);
  {
    await using db = await SessionDB.open({ path, clock: () => clock++ });
    db.createSession("s1", "cli");
    db.appendMessages("s1", [
      { role: "user", content: "why does the worker show an error? 数据库" },
      { role: "tool", toolName: "terminal", content: long },
      { role: "tool", toolName: "terminal", content: longer },
      { role: "assistant", content: "The error is a reset: the 数据库 restarted." },
    ]);
  }
  using raw = await rawOpen(path, true);
  const ftsSnippet = (table: string, match: string, id: number) =>
    String(
      raw.prepare(
        `SELECT snippet(${table}, 0, '>>>', '<<<', '...', 40) AS s FROM ${table}
         WHERE ${table} MATCH ? AND rowid = CAST(? AS INTEGER)`,
      ).get(match, id)!.s,
    );
  using db = await SessionDB.open({ path, readonly: true });
  const cases: Array<[query: string, table: string, match: string]> = [
    ["error", "messages_fts", "error"],
    ['"connection reset"', "messages_fts", '"connection reset"'],
    ["error OR retry", "messages_fts", "error OR retry"],
    ["数据库", "messages_fts_trigram", '"数据库"'],
  ];
  let long_hits = 0;
  for (const [query, table, match] of cases) {
    for (const sort of ["rank", "newest", "oldest"] as const) {
      const hits = db.searchMessages(query, { sort });
      assert.ok(hits.length >= 1, `${query} ${sort}`);
      for (const hit of hits) {
        assert.equal(hit.snippet, ftsSnippet(table, match, hit.id), `${query} ${sort} #${hit.id}`);
        if (hit.role === "tool") long_hits++;
      }
    }
  }
  assert.ok(long_hits >= 12, `long texts among the hits: ${long_hits}`);
});

test("in a newer Hermes's layout a long text's snippet is FTS5's too, its other columns counted", async () => {
  const path = tempDbPath();
  let clock = 1_700_000_000;
  const pasted = log(500, (i) => `12:00:${i % 60} worker-${i % 7}: error: connection reset ${i}`);
  const reply = "The reset comes from the pool. " +
    log(400, (i) => `step ${i}: reset the worker, then retry; 数据库迁移 ${i}`);
  {
    await using db = await SessionDB.open({ path, clock: () => clock++ });
    db.createSession("s1", "cli");
    db.appendMessages("s1", [
      { role: "user", content: pasted },
      {
        role: "assistant",
        content: reply,
        toolCalls: [{
          id: "call_1",
          type: "function",
          function: { name: "terminal", arguments: '{"command": "docker restart pool"}' },
        }],
      },
      {
        role: "tool",
        toolName: "terminal",
        content: log(900, (i) => `pool ${i}: reset, no error`),
      },
      { role: "assistant", content: "Done: no error after the docker restart." },
    ]);
  }
  {
    using raw = await rawOpen(path);
    layOutAsSchema30(raw);
  }
  using raw = await rawOpen(path, true);
  assert.deepEqual(longTextColumns(raw, "messages_fts"), ["tool_name", "tool_calls"]);
  assert.deepEqual(longTextColumns(raw, "messages_fts_trigram"), ["tool_name"]);
  const ftsSnippet = (table: string, match: string, id: number) =>
    raw.prepare(
      `SELECT snippet(${table}, 0, '>>>', '<<<', '...', 40) AS s FROM ${table}
       WHERE ${table} MATCH ? AND rowid = CAST(? AS INTEGER)`,
    ).get(match, id)?.s;
  using db = await SessionDB.open({ path, readonly: true });
  const queries = [
    "error",
    // `docker` is in the reply's tool call only: its text's `reset`s are still marked.
    "docker reset",
    '"connection reset" OR retry',
    // A column filter, and `&` (a phrase without a token once sanitized): FTS5's own snippet.
    "tool_calls:docker OR retry",
    "content:retry",
    "reset & retry",
    // (CJK words are read by substring there: the newer trigram table leaves tool rows out.)
  ];
  // The texts were cut here, not by FTS5 (whose snippet is the same): the search says how many.
  const { db: connection, writer } = await openConnection({ path, readonly: true });
  const store = new Store(connection, writer, { path, readonly: true });
  let cut = 0;
  const hook = { onLongCut: (count: number) => (cut += count) };
  assert.equal(searchMessages(store, "error", {}, hook).length, 3);
  assert.equal(cut, 1, "the pasted log's snippet");
  assert.equal(searchMessages(store, "content:error", {}, hook).length, 3);
  assert.equal(cut, 1, "a column filter keeps FTS5's snippet");
  store.db.close();
  let long = 0;
  for (const query of queries) {
    const plan = planSearch(query);
    assert.ok(plan.kind === "ranked" && plan.index === "words", query);
    const table = "messages_fts";
    // What the search asked FTS5: the plan's expression, or its retry where FTS5 refused that.
    let match = plan.expression;
    try {
      raw.prepare(`SELECT 1 FROM ${table} WHERE ${table} MATCH ?`).get(match);
    } catch {
      match = plan.retry!;
    }
    for (const sort of ["rank", "newest"] as const) {
      const hits = db.searchMessages(query, { sort });
      assert.ok(hits.length >= 1, `${query} ${sort}`);
      for (const hit of hits) {
        assert.equal(hit.snippet, ftsSnippet(table, match, hit.id), `${query} ${sort} #${hit.id}`);
        if (hit.id <= 3) long++;
      }
    }
  }
  assert.ok(long >= 12, `long texts among the hits: ${long}`);
  // A tool call stored as a BLOB is indexed as its text: `deploy` is the reply's, by its call.
  {
    using write = await rawOpen(path);
    write.exec("UPDATE messages SET tool_calls = CAST('deploy now' AS BLOB) WHERE id = 2");
  }
  const [hit] = db.searchMessages("deploy reset");
  assert.equal(hit?.id, 2);
  assert.equal(hit.snippet, ftsSnippet("messages_fts", "deploy reset", 2));
  assert.match(String(hit.snippet), />>>reset<<</);
});

test("longTextColumns() keeps FTS5's snippet for a layout whose tokens or columns it does not know", async () => {
  const path = tempDbPath();
  {
    await using db = await SessionDB.open({ path });
    db.createSession("s1", "cli");
  }
  using raw = await rawOpen(path);
  assert.deepEqual(longTextColumns(raw, "messages_fts"), []);
  layOutAsSchema30(raw);
  const variants: Array<[columns: string, known: boolean]> = [
    ["content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id'", true],
    ["content, tool_name, tool_calls UNINDEXED, content='messages_fts_src'", false],
    ["content, tool_name, tokenize='porter unicode61', content='messages_fts_src'", false],
    ["content, tool_name, detail=column, content='messages_fts_src'", false],
    ["tool_name, content, content='messages_fts_src'", false],
    // Names in one pair of quotes are names; a keyword is one too (quoted in the statement).
    ['"content", "order", `group`, content=\'messages_fts_src\'', true],
    ['content, "tool""name", content=\'messages_fts_src\'', false],
  ];
  for (const [columns, known] of variants) {
    raw.exec(`DROP TABLE messages_fts; CREATE VIRTUAL TABLE messages_fts USING fts5(${columns})`);
    assert.equal(longTextColumns(raw, "messages_fts") !== undefined, known, columns);
  }
});
