/**
 * A query that repeats a word, or pastes many words, over a long match:
 * FTS5's `snippet()` costs the square of the phrases' instances (a word
 * written 16 times took 7 s over one 14 KB message, 2,000 times never
 * ended). Repeats under AND and OR are dropped from the plan
 * (`repeated_phrases.ts`), which then answers as the word written once;
 * a query of many phrases has its snippets cut in TypeScript in linear
 * time (`long_snippet.ts`), still FTS5's own.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { withoutRepeatedPhrases } from "../lib/core/search/repeated_phrases.ts";
import { planSearch } from "../lib/core/search/plan.ts";
import { LONG_TEXT_BYTES, longTextBytes } from "../lib/sqlite/search/long_snippet.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";

/** Generous: before the fix the first test ran for minutes. */
const TIMEOUT = 60_000;

test("withoutRepeatedPhrases() drops a phrase repeated under AND or OR, folded as FTS5 folds it", () => {
  const cases: Array<[string, "words" | "trigram", string]> = [
    ["docker docker docker", "words", "docker"],
    ["docker AND docker", "words", "docker"],
    ["Docker docker DOCKER", "words", "Docker"],
    ['docker "docker"', "words", "docker"],
    ["café cafe CAFÉ", "words", "café"],
    ["docker OR docker", "words", "docker"],
    ["a b OR b a", "words", "a b"],
    ["docker docker NOT x x", "words", "docker NOT x"],
    ['"记忆断裂" "记忆断裂"', "trigram", '"记忆断裂"'],
    // Not the same phrase, or not a repeat under AND/OR: kept.
    ["dock* dock", "words", "dock* dock"],
    ["a NOT a", "words", "a NOT a"],
    ["a OR a b", "words", "a OR a b"],
    ['"docker compose" docker compose', "words", '"docker compose" docker compose'],
    ["ᲐᲑᲒ აბგ", "words", "ᲐᲑᲒ აბგ"],
    // FTS5 reads no-break space inside a bareword; the parser here would not: left alone.
    ["docker\u00a0docker docker", "words", "docker\u00a0docker docker"],
    ["foo:bar foo:bar", "words", "foo:bar foo:bar"],
  ];
  for (const [query, index, want] of cases) {
    assert.equal(withoutRepeatedPhrases(query, index), want, JSON.stringify(query));
  }
});

test("planSearch() asks the index for a repeated word once, and its retry too", () => {
  const plan = planSearch(Array(2000).fill("docker").join(" "));
  assert.deepEqual(plan, {
    kind: "ranked",
    index: "words",
    expression: "docker",
    retry: '"docker"',
    check: null,
  });
});

test("searchMessages() answers a word repeated 64 times as the word once, over a long match", {
  timeout: TIMEOUT,
}, async () => {
  const path = tempDbPath();
  let clock = 1_700_000_000;
  await using db = await SessionDB.open({ path, clock: () => clock++ });
  db.createSession("s", "cli");
  db.appendMessages("s", [
    { role: "tool", content: "docker ps output\n" + "docker ".repeat(600) },
    { role: "tool", content: "docker logs. 数据库迁移 " + "docker 数据库迁移 ".repeat(300) },
    { role: "user", content: "why does docker restart?" },
  ]);
  for (
    const [once, repeated] of [
      ["docker", Array(64).fill("docker").join(" ")],
      ["docker", Array(64).fill("Docker").join(" AND ")],
      ["数据库迁移", Array(64).fill("数据库迁移").join(" ")],
    ]
  ) {
    for (const sort of ["rank", "newest"] as const) {
      const want = db.searchMessages(once, { sort });
      assert.ok(want.length >= 1 && want[0].snippet!.includes(">>>"), `${once} ${sort}`);
      assert.deepEqual(
        db.searchMessages(repeated, { sort }),
        want,
        `${repeated.slice(0, 20)} ${sort}`,
      );
    }
  }
});

test("searchMessages() gives a query of many words FTS5's snippets, cut in TypeScript", {
  timeout: TIMEOUT,
}, async () => {
  const path = tempDbPath();
  let clock = 1_700_000_000;
  const words = Array.from({ length: 40 }, (_, i) => `w${i.toString(36)}x`);
  let text = "";
  for (let i = 0; text.length < 6000; i++) text += words[(i * 7) % 40] + (i % 9 === 0 ? ". " : " ");
  {
    await using db = await SessionDB.open({ path, clock: () => clock++ });
    db.createSession("s", "cli");
    db.appendMessages("s", [
      { role: "tool", content: text },
      { role: "user", content: `first ${words.join(" ")} last` },
    ]);
  }
  assert.ok(longTextBytes(words.length) < text.length && longTextBytes(1) === LONG_TEXT_BYTES);
  using raw = await rawOpen(path, true);
  const { db: connection, writer } = await openConnection({ path, readonly: true });
  const store = new Store(connection, writer, { path, readonly: true });
  for (const query of [words.join(" "), words.join(" OR "), words.slice(0, 3).join(" ")]) {
    let cut = 0;
    const hits = searchMessages(store, query, {}, { onLongCut: (count) => cut += count });
    assert.equal(hits.length, 2, query.slice(0, 20));
    for (const hit of hits) {
      const want = raw.prepare(
        `SELECT snippet(messages_fts, 0, '>>>', '<<<', '...', 40) AS s FROM messages_fts
         WHERE messages_fts MATCH ? AND rowid = CAST(? AS INTEGER)`,
      ).get(query, hit.id)!.s;
      assert.equal(hit.snippet, want, `${query.slice(0, 20)} #${hit.id}`);
    }
    assert.ok(cut >= 1, `cut in TypeScript: ${cut}`);
  }
  store.db.close();
});
