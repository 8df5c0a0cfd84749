/**
 * searchMessages() with `sort: "newest" | "oldest"`: the newer Python
 * Hermes's order (timestamp, then rank), and the walk in id order checked
 * against the full sort on files whose timestamps follow ids, do not
 * (backdated rows), tie, and change under the connection. Each file's
 * checks run under one of Deno, Bun and Node (`caseSkip`).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import type { SortStrategy } from "../lib/sqlite/search/sorted.ts";
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture, rawOpen, tempDbPath } from "./_helpers.ts";
import { insertRows, type MessageSeed, seeded } from "./_search_data.ts";
import { mulberry32, type Random } from "./_random.ts";
import { caseSkip } from "./reliability/_runtimes.ts";

async function openStore(path: string, readonly = false): Promise<Store> {
  const { db, writer } = await openConnection({ path, readonly });
  return new Store(db, writer, { path, readonly });
}

const WORDS = ["docker", "kernel", "deploy", "timeout", "cache", "python", "rust", "数据库性能"];

function sentence(random: Random): string {
  const n = 1 + Math.floor(random() * 6);
  return Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
}

const SESSION_IDS = "abcdefghijkl".split("");

type Shape = "growing" | "backdated" | "swapped" | "shuffled";

function messages(random: Random, count: number, shape: Shape, start: number): MessageSeed[] {
  const out: MessageSeed[] = [];
  let t = start;
  for (let i = 0; i < count; i++) {
    // Ties: one message in five shares the previous timestamp.
    if (random() >= 0.2) t += 1 + Math.floor(random() * 3);
    let timestamp = t;
    if (shape === "backdated" && random() < 0.05) timestamp = start - random() * 1000;
    if (shape === "shuffled") timestamp = start + Math.floor(random() * count);
    // A few rows a little earlier than the ones just before them (clocks of two writers).
    if (shape === "swapped" && random() < 0.08) timestamp = t - 1 - Math.floor(random() * 6);
    out.push({
      // Sessions run one after another, with some overlap, as on a gateway.
      session_id: SESSION_IDS[
        (Math.floor(i / 250) + (random() < 0.3 ? Math.floor(random() * 4) : 0)) % SESSION_IDS.length
      ],
      role: random() < 0.5 ? "user" : "assistant",
      content: random() < 0.05 ? "same docker words" : sentence(random),
      timestamp,
    });
  }
  return out;
}

/** Python's statement (hermes_state_search `_FTS_ORDER_BY`), with the id tie-break. */
function pythonOrder(
  raw: SqliteConnection,
  table: string,
  match: string,
  order: "newest" | "oldest",
) {
  const dir = order === "newest" ? "DESC" : "ASC";
  return raw.prepare(
    `SELECT m.id AS id FROM ${table} JOIN messages m ON m.id = ${table}.rowid
     JOIN sessions s ON s.id = m.session_id WHERE ${table} MATCH ?
     ORDER BY m.timestamp ${dir}, rank, m.id ${dir}`,
  ).all(match).map((row) => Number(row.id));
}

const QUERIES = [
  "docker",
  "kernel OR rust",
  "deplo*",
  '"docker words"',
  "cache NOT python",
  "数据库",
];
const PAGES: SearchOptions[] = [
  { limit: 20 },
  { limit: 1 },
  { limit: 7, offset: 13 },
  { limit: 50, offset: 200 },
  { limit: 20, roleFilter: ["assistant"] },
  { limit: 20, sourceFilter: ["telegram"] },
];

/** Substring queries (two CJK characters): by time, the candidate walk against Python's scan. */
const SUBSTRING_QUERIES = ["数据", "性能 OR 库性", "据库", "数据 库性"];

function check(store: Store, strategy: SortStrategy): void {
  for (const query of SUBSTRING_QUERIES) {
    for (const page of [...PAGES, { limit: 0 }, { limit: 3, offset: 2000 }]) {
      for (const sort of ["rank", "newest", "oldest"] as const) {
        const options = { ...page, sort };
        const scan = searchMessages(store, query, options, { substring: "scan" });
        assert.deepEqual(searchMessages(store, query, options), scan, `${query} ${sort}`);
      }
    }
  }
  for (const query of QUERIES) {
    for (const page of PAGES) {
      for (const sort of ["newest", "oldest"] as const) {
        const options = { ...page, sort };
        const full = searchMessages(store, query, options, { sort: "full" });
        const fast = searchMessages(store, query, options, { sort: strategy });
        assert.deepEqual(fast, full, `${query} ${JSON.stringify(options)}`);
      }
    }
  }
}

for (const [index, shape] of (["growing", "backdated", "swapped", "shuffled"] as const).entries()) {
  describe(`searchMessages() sorted by time on a file whose timestamps are ${shape}`, {
    skip: caseSkip(index),
  }, () => {
    let path: string;
    let store: Store;
    const random = mulberry32(shape.length * 7919);
    before(async () => {
      path = tempDbPath();
      (await SessionDB.open({ path })).close();
      await insertRows(
        path,
        SESSION_IDS.map((id, i) => ({ id, source: i % 3 === 0 ? "telegram" : "cli" })),
        [],
      );
      await insertRows(path, [], messages(random, 3000, shape, 1_700_000_000));
      store = await openStore(path);
    });
    after(() => store.db.close());

    test("searchMessages() gives the full sort's page, hit for hit", () => {
      check(store, shape === "growing" ? "walk" : "auto");
    });

    test("a session filter (the index read over the session's ids) gives the unfiltered search's hits of that session", () => {
      // Sessions overlap, so each one's id range holds other sessions' messages too.
      for (const sessionId of ["a", "d", "k"]) {
        for (const query of QUERIES) {
          const all = (sort: "rank" | "newest" | "oldest") =>
            searchMessages(store, query, { limit: 10_000, sort }, { sort: "full" })
              .filter((hit) => hit.session_id === sessionId);
          for (const sort of ["rank", "newest", "oldest"] as const) {
            const want = all(sort);
            for (const page of [{ limit: 10_000 }, { limit: 5, offset: 3 }]) {
              const got = searchMessages(store, query, { ...page, sessionId, sort });
              const what = `${sessionId} ${query} ${sort} ${JSON.stringify(page)}`;
              const expected = want.slice(page.offset ?? 0, (page.offset ?? 0) + page.limit);
              if (sort === "rank") {
                // bm25 is the whole table's either way; rank ties may come in another order.
                const ids = (hits: { id: number }[]) => hits.map((h) => h.id).sort((a, b) => a - b);
                if (page.limit === 10_000) assert.deepEqual(ids(got), ids(want), what);
                else assert.equal(got.length, expected.length, what);
              } else {
                assert.deepEqual(got, expected, what);
              }
            }
          }
        }
      }
    });

    test("searchMessages() follows messages written since, by another connection", async () => {
      check(store, "auto"); // the connection knows the file as it was
      await insertRows(path, [], messages(random, 700, shape, 1_700_010_000));
      await insertRows(path, [], [{ session_id: "a", content: "docker kernel", timestamp: 5 }]);
      check(store, "auto");
      const raw = await rawOpen(path);
      try {
        raw.exec("DELETE FROM messages WHERE id % 3 = 0");
      } finally {
        raw.close();
      }
      check(store, "auto");
    });

    test("searchMessages() follows messages this connection writes", () => {
      store.db.exec("BEGIN IMMEDIATE");
      const insert = store.db.prepare(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('b', 'user', ?, ?)",
      );
      for (let i = 0; i < 300; i++) insert.run(sentence(random), 1_800_000_000 + i);
      store.db.exec("COMMIT");
      check(store, shape === "growing" ? "walk" : "auto");
    });
  });
}

describe("searchMessages() sort semantics", () => {
  let s: Awaited<ReturnType<typeof seeded>>;
  before(async () => {
    s = await seeded(
      [{ id: "g", source: "cli" }],
      [
        { session_id: "g", content: "docker", timestamp: 30 },
        { session_id: "g", content: "docker docker docker", timestamp: 20 },
        { session_id: "g", content: "docker and many other words here", timestamp: 20 },
        { session_id: "g", content: "docker docker", timestamp: 10 },
        { session_id: "g", content: "没有 数据", timestamp: 15 },
        { session_id: "g", content: "数据 again", timestamp: 5 },
      ],
    );
  });
  after(() => s.db.close());

  test("searchMessages() orders by timestamp, then rank, as Python's sort does", async () => {
    const raw = await rawOpen(s.path);
    try {
      for (const sort of ["newest", "oldest"] as const) {
        const ids = s.db.searchMessages("docker", { sort }).map((h) => h.id);
        assert.deepEqual(ids, pythonOrder(raw, "messages_fts", "docker", sort));
      }
    } finally {
      raw.close();
    }
    const newest = s.db.searchMessages("docker", { sort: "newest" }).map((h) => h.id);
    // Timestamp 20 twice: the denser match ranks first.
    assert.deepEqual(newest, [s.ids[0], s.ids[1], s.ids[2], s.ids[3]]);
    const oldest = s.db.searchMessages("docker", { sort: "oldest" }).map((h) => h.id);
    assert.deepEqual(oldest, [s.ids[3], s.ids[1], s.ids[2], s.ids[0]]);
  });

  test("searchMessages() keeps snippets and context in time order", () => {
    const [hit] = s.db.searchMessages("docker", { sort: "newest", limit: 1 });
    assert.equal(hit.snippet, ">>>docker<<<  ", "content, empty tool name and calls");
    assert.deepEqual(hit.context?.map((c) => c.content), [
      "docker and many other words here",
      "docker",
    ]);
  });

  test("searchMessages() sorts substring matches oldest first on request", () => {
    assert.deepEqual(s.db.searchMessages("数据", { sort: "oldest" }).map((h) => h.id), [
      s.ids[5],
      s.ids[4],
    ]);
    assert.deepEqual(s.db.searchMessages("数据", { sort: "newest" }).map((h) => h.id), [
      s.ids[4],
      s.ids[5],
    ]);
  });

  test("searchMessages() rejects an unknown sort, naming it", () => {
    assert.throws(
      () => s.db.searchMessages("docker", { sort: "latest" as "newest" }),
      {
        name: "RangeError",
        message: 'Cannot search messages: sort must be "rank", "newest" or "oldest": ' +
          'current value is "latest"',
      },
    );
    // NaN was named "null", and a bigint made the message itself throw.
    for (const [sort, shown] of [[NaN, "NaN"], [5n, "5"], [{ by: "time" }, '{"by":"time"}']]) {
      assert.throws(() => s.db.searchMessages("docker", { sort: sort as "newest" }), {
        name: "RangeError",
        message: 'Cannot search messages: sort must be "rank", "newest" or "oldest": ' +
          `current value is ${shown}`,
      });
    }
  });

  test("searchMessages() gives [] for a query FTS5 rejects, in time order too", () => {
    assert.deepEqual(s.db.searchMessages("docker NEAR/x", { sort: "newest" }), []);
    assert.deepEqual(s.db.searchMessages("docker", { sort: "newest", limit: 0 }), []);
  });
});

describe("searchMessages() sorted by time on the Python-written fixtures", () => {
  for (const name of ["hermes-v6.db", "hermes-v10-external.db", "hermes-v11.db", "hermes-v21.db"]) {
    for (const readonly of [true, false]) {
      test(`searchMessages() gives the full sort's page on ${name}${readonly ? ", read-only" : ""}`, async () => {
        const store = await openStore(copyFixture(name), readonly);
        try {
          for (const query of ["docker", "the", "session*", "数据", "数据库", "terminal OR 数据"]) {
            for (const sort of ["newest", "oldest"] as const) {
              for (const page of [{ limit: 5 }, { limit: 3, offset: 4 }]) {
                const options = { ...page, sort };
                assert.deepEqual(
                  [searchMessages(store, query, options), searchMessages(store, query, options)],
                  [
                    searchMessages(store, query, options, { sort: "full", substring: "scan" }),
                    searchMessages(store, query, options, { sort: "full", substring: "scan" }),
                  ],
                  `${query} ${JSON.stringify(options)}`,
                );
              }
            }
          }
        } finally {
          store.db.close();
        }
      });
    }
  }
});
