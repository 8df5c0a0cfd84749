/**
 * Odd input answered by the PostgreSQL store as by the SQLite store on the
 * same data: empty, NUL, lone surrogates, emoji with VS16, CJK of one and
 * two characters, punctuation, FTS5 operators unbalanced, ids holding LIKE
 * wildcards and spaces. And search never throws on user text, however long:
 * a pasted text of tens of thousands of words (PostgreSQL recursed once per
 * word of a flat `tsquery` and overflowed its stack), one whose words add
 * up to over the 1 MB a `tsquery` may hold, a CJK text with more
 * substring grams than that, and tens of thousands of short CJK words
 * (searched by substring, a parameter each: more than the protocol's
 * 65,535 parameters). The SQLite engine answers the same queries
 * (seconds per query there, so they are here rather than in the
 * conformance suite). Each of those four long searches runs under one of
 * Deno, Bun and Node (`caseSkip`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { StorageError } from "../../lib/core/errors.ts";
import { openPgStore, PG_SKIP } from "./_pg.ts";
import { tempDbPath } from "../_helpers.ts";
import { caseSkip } from "../reliability/_runtimes.ts";

/** `count` distinct words, each `width` characters after its `w`. */
function wordList(count: number, width = 3): string[] {
  return Array.from({ length: count }, (_, i) => `w${i.toString(36).padStart(width, "0")}`);
}

/** CJK text of `length` characters, its neighbouring pairs nearly all distinct. */
function cjkText(length: number): string {
  return Array.from({ length }, (_, i) => String.fromCharCode(0x4e00 + (i * 7919) % 20_000))
    .join("");
}

/** Runs `fn` on a PostgreSQL store holding `contents` in one session. */
async function withStore(
  contents: readonly string[],
  fn: (store: SessionStore) => Promise<void>,
): Promise<void> {
  const store = await openPgStore();
  try {
    await store.createSession("s", "cli");
    for (const content of contents) await store.appendMessage("s", { role: "user", content });
    await fn(store);
  } finally {
    await store.close();
  }
}

/** How many messages a search finds, or the error it threw (it must throw none). */
async function found(store: SessionStore, query: string): Promise<number | string> {
  try {
    return (await store.searchMessages(query)).length;
  } catch (error) {
    assert.ok(error instanceof StorageError, String(error));
    return error.message.slice(0, 200);
  }
}

/** Session ids a LIKE would misread, or that differ only in a space. */
const ODD_IDS = [
  "a%b",
  "a_b",
  "axb",
  "a b",
  "a\\b",
  "x%",
  "with space ",
  " lead",
  "❤️id",
  "中文",
  "a",
];

/** Message contents: one each, in turn over {@linkcode ODD_IDS}. */
const ODD_CONTENTS = [
  "",
  " ",
  "\u0000",
  "a\u0000b docker",
  "lone \ud800 surrogate",
  "❤️",
  "I ❤️ docker",
  "👍🏽 ok",
  "数",
  "数据",
  "数据库迁移计划",
  "!!!",
  "a-b c_d",
  "e.g. foo:bar",
  "NEAR AND OR NOT",
  '"quoted"',
  "100% sure_thing",
  "ß straße STRASSE",
  "café cafe\u0301",
  "docker compose up",
  "a*b ^caret (paren col:val",
  "lorem ipsum ".repeat(90_000) + "needle",
];

const ODD_QUERIES = [
  "",
  " ",
  "\u0000",
  "\ud800",
  "❤️",
  "❤",
  "I ❤️",
  "👍🏽",
  "数",
  "据",
  "数据",
  "中",
  "!!!",
  "...",
  "-",
  "a-b",
  "c_d",
  "e.g.",
  "foo:bar",
  "AND",
  "OR",
  "NOT",
  "NEAR",
  "docker AND",
  "AND docker",
  "OR docker",
  "NOT docker",
  "docker NOT",
  "NEAR(docker compose)",
  '"',
  '""',
  '"docker',
  'docker"',
  "*",
  "docker*",
  "*docker",
  "^docker",
  "^",
  "(",
  ")",
  "(docker",
  "docker)",
  "(docker OR kubectl",
  "100%",
  "%",
  "_",
  "sure_thing",
  "ß",
  "strasse",
  "café",
  "needle",
  "a*b",
  "col:val",
  "content:docker",
  "'",
  "\\",
  "a\u0000b",
];

test("odd text, queries and ids: the PostgreSQL store answers as the SQLite store", {
  skip: PG_SKIP,
  timeout: 120_000,
}, async () => {
  await using lite = await openStore(tempDbPath());
  const pg = await openPgStore();
  try {
    for (const store of [lite, pg]) {
      for (const id of ODD_IDS) await store.createSession(id, id.length % 2 ? "cli" : "web%_");
      for (const [i, content] of ODD_CONTENTS.entries()) {
        await store.appendMessage(ODD_IDS[i % ODD_IDS.length], { role: "user", content });
      }
    }
    const same = async (label: string, ask: (store: SessionStore) => Promise<unknown>) => {
      const answer = async (store: SessionStore) => {
        try {
          return await ask(store);
        } catch (error) {
          return `${(error as Error).name}: ${(error as Error).message}`;
        }
      };
      assert.deepEqual(await answer(pg), await answer(lite), label);
    };
    // Ranks may differ (README, "Scale out"): the hits and their snippets may not.
    const hits = (query: string, options = {}) => async (store: SessionStore) =>
      (await store.searchMessages(query, { limit: 100, ...options }))
        .map(({ id, session_id, snippet }) => ({ id, session_id, snippet }))
        .sort((a, b) => a.id - b.id);
    for (const query of ODD_QUERIES) await same(`search ${JSON.stringify(query)}`, hits(query));
    for (const id of ["", "a", "a%", "a_", "a ", "a\\", "%", "_", "with space", " ", "❤", "S"]) {
      const label = JSON.stringify(id);
      await same(`resolveSessionId ${label}`, (s) => s.resolveSessionId(id));
      await same(`sessionIdsWithPrefix ${label}`, async (s) => {
        const { count, ids } = await s.sessionIdsWithPrefix(id);
        return { count, ids: [...ids].sort() };
      });
      await same(`search in session ${label}`, hits("docker", { sessionId: id }));
      await same(`getSession ${label}`, async (s) => (await s.getSession(id))?.id);
      await same(`messageCount ${label}`, (s) => s.messageCount(id));
    }
    for (const [limit, offset] of [[0, 0], [1e9, 0], [10, 1e9], [-1, 0], [10, -1], [1.5, 0]]) {
      await same(`search limit ${limit} offset ${offset}`, hits("docker", { limit, offset }));
      await same(
        `list limit ${limit} offset ${offset}`,
        async (s) => (await s.listSessionsRich({ limit, offset })).map((row) => row.id).sort(),
      );
    }
    await same("sessionCount web%", (s) => s.sessionCount({ source: "web%" }));
    await same("deleteSession a_b", async (s) => [
      await s.deleteSession("a_b"),
      await s.getSession("axb") !== undefined,
    ]);
  } finally {
    await pg.close();
  }
});

test("a search of 60,000 words, with or without OR, answers", {
  skip: PG_SKIP || caseSkip(0),
  timeout: 120_000,
}, async () => {
  const words = wordList(60_000);
  await withStore([words.slice(0, 30).join(" ")], async (store) => {
    assert.equal(await found(store, words.join(" ")), 0);
    assert.equal(await found(store, words.join(" AND ")), 0);
    assert.equal(await found(store, words.join(" OR ")), 1);
    assert.equal(await found(store, `"${words.join(" ")}"`), 0);
    assert.equal(await found(store, words.slice(0, 30).join(" ")), 1);
    assert.equal(await found(store, `"${words.slice(0, 30).join(" ")}"`), 1);
    assert.equal(await found(store, words.slice(5, 30).join("* ") + "*"), 1);
  });
});

test("a search whose words add up to over 1 MB finds nothing, as no message holds them all", {
  skip: PG_SKIP || caseSkip(1),
  timeout: 120_000,
}, async () => {
  // 8,000 words of 136 characters: over the 1 MB as 60,000 of 17 were (PostgreSQL refuses their
  // tsquery, "value is too big"), at an eighth of the words the SQLite engine looks up.
  const words = wordList(8_000, 135);
  const query = words.join(" ");
  assert.ok(query.length > 1 << 20);
  await withStore([words.slice(0, 30).join(" ")], async (store) => {
    assert.equal(await found(store, query), 0);
    assert.equal(await found(store, `"${query}"`), 0);
  });
  // The SQLite engine agrees.
  await using lite = await openStore(tempDbPath());
  await lite.createSession("s", "cli");
  await lite.appendMessage("s", { role: "user", content: words.slice(0, 30).join(" ") });
  assert.deepEqual(await lite.searchMessages(query), []);
});

test("a CJK search of more grams than a tsquery holds is matched by substring alone", {
  skip: PG_SKIP || caseSkip(3),
  timeout: 120_000,
}, async () => {
  const long = cjkText(400_000);
  await withStore([`开头 ${long} 结尾`, "数据库"], async (store) => {
    assert.equal(await found(store, long), 1);
    assert.equal(await found(store, long + "数"), 0);
    assert.equal(await found(store, "数据库"), 1);
  });
});

test("a CJK search of 33,000 short words answers as the SQLite store does, with OR and NOT too", {
  skip: PG_SKIP || caseSkip(2),
  timeout: 180_000,
}, async () => {
  // Two characters each, all distinct: every word binds two parameters when bound one by one,
  // and 33,000 of them passed the protocol's 65,535 ("MAX_PARAMETERS_EXCEEDED").
  const words = Array.from(
    { length: 33_000 },
    (_, i) => String.fromCharCode(0x4e00 + i % 20_000, 0x4e00 + Math.floor(i / 20_000)),
  );
  const contents = [
    words.join(""),
    `${words.slice(0, 300).join("")} Docker`,
    `${words[7]} only`,
    "nothing here",
  ];
  const queries = [
    words.join(" "),
    words.join(" OR "),
    `${words.slice(0, 299).join(" ")} NOT ${words[32_999]}`,
    `${words.slice(0, 299).join(" ")} docker`,
    `${words.slice(0, 299).join(" ")} NOT docker`,
    `${words.slice(0, 400).join(" ")} OR ${words[7]}`,
  ];
  const ids = (hits: readonly { id: number }[]) => hits.map((hit) => hit.id).sort();
  await using lite = await openStore(tempDbPath());
  await lite.createSession("s", "cli");
  for (const content of contents) await lite.appendMessage("s", { role: "user", content });
  // The SQLite store's answers; it takes 13 s over the OR of every word, whose answer is
  // plain (each message but the last holds a word), so that one is written out.
  const expected: number[][] = [];
  for (const query of queries) {
    expected.push(
      query === queries[1] ? [1, 2, 3] : ids(await lite.searchMessages(query, { limit: 10 })),
    );
  }
  assert.deepEqual(expected, [[1], [1, 2, 3], [2], [2], [1], [1, 2, 3]]);
  await withStore(contents, async (store) => {
    for (const [i, query] of queries.entries()) {
      assert.deepEqual(
        ids(await store.searchMessages(query, { limit: 10 })),
        expected[i],
        `query ${i}`,
      );
    }
  });
});
