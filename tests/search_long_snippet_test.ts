/**
 * A long text's snippet is cut in TypeScript (`long_snippet.ts`), where
 * FTS5's `snippet()` takes a second on a log that repeats the searched
 * word: the hits are the same as FTS5's own `snippet()` of the same row,
 * by rank and in time order, for words and for CJK trigrams, and a short
 * text keeps FTS5's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { LONG_TEXT_BYTES } from "../lib/sqlite/search/long_snippet.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";

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
