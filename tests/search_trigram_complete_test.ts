/**
 * Speed audit at 1,000,000 messages: a substring search that finds nothing
 * (a word query with no hit falls back to one, a typo most often) walks to
 * the far end of the file and asks whether the trigram index holds a row
 * for every message of that range. Counting the messages row by row over the
 * whole file took 165–230 ms of a 0.55 s `search zzqqxx`; counting every
 * message through the table's smallest index and taking away those outside
 * the range reads no message row. The answer must stay the row-by-row
 * count's, whatever the range, the gaps in the ids and the index's state.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { TrigramGaps } from "../lib/sqlite/search/trigram_gaps.ts";
import { lastMessageId } from "../lib/sqlite/message_ids.ts";
import { searchMessages } from "../lib/sqlite/search/search.ts";
import { rawOpen } from "./_helpers.ts";
import { type MessageSeed, seeded } from "./_search_data.ts";

/** A store on `path` that `using` closes. */
async function openStore(path: string): Promise<Store & Disposable> {
  const { db, writer } = await openConnection({ path });
  const store = new Store(db, writer, { path, readonly: false });
  return Object.assign(store, { [Symbol.dispose]: () => db.close() });
}

/** The SQL of every statement `store` prepares or reuses while `fn` runs. */
function statementsOf(store: Store, fn: () => void): string[] {
  const seen: string[] = [];
  const statement = store.statement.bind(store);
  store.statement = (sql: string) => {
    seen.push(sql);
    return statement(sql);
  };
  try {
    fn();
  } finally {
    store.statement = statement;
  }
  return seen;
}

/** The row-by-row answer: as many index rows as messages in the range. */
function completeByRows(store: Store, from: number, to: number): boolean {
  const row = store.db.prepare(
    `SELECT (SELECT count(*) FROM messages WHERE id >= ?1 AND id <= ?2) =
       (SELECT count(*) FROM messages_fts_trigram_docsize WHERE id >= ?1 AND id <= ?2) AS same`,
  ).get(from, to);
  return row?.same === 1;
}

/** 2,000 messages with ids 1–2,000 in two sessions. */
async function corpus(): Promise<string> {
  const messages: MessageSeed[] = [];
  for (let i = 1; i <= 2000; i++) {
    messages.push({ session_id: `s${i % 2}`, content: `数据 message ${i}`, timestamp: 1000 + i });
  }
  const s = await seeded([{ id: "s0" }, { id: "s1" }], messages);
  s.db.close();
  return s.path;
}

describe("TrigramGaps.complete() over most of the file", () => {
  let path: string;
  before(async () => {
    path = await corpus();
  });

  test("the whole file's range counts its messages through an index, not row by row", async () => {
    using store = await openStore(path);
    const last = lastMessageId(store);
    let complete: boolean | undefined;
    const sqls = statementsOf(store, () => {
      complete = new TrigramGaps().complete(store, 1, last);
    });
    assert.equal(complete, true);
    const counting = sqls.filter((sql) => sql.includes("messages_fts_trigram_docsize"));
    assert.equal(counting.length, 1, "one statement compares the counts");
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${counting[0]}`).all(1, last)
      .map((row) => String(row.detail));
    assert.ok(
      plan.some((line) => /^SCAN messages USING COVERING INDEX /.test(line)),
      `every message counted in an index: ${plan.join(" | ")}`,
    );
    assert.ok(
      !plan.some((line) => /^SEARCH messages .*rowid>\? AND rowid<\?/.test(line)),
      `no walk of the messages inside the range: ${plan.join(" | ")}`,
    );
  });

  test("a short range is still counted by its own rows", async () => {
    using store = await openStore(path);
    const sqls = statementsOf(store, () => new TrigramGaps().complete(store, 1900, 2000));
    const counting = sqls.filter((sql) => sql.includes("messages_fts_trigram_docsize"));
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${counting[0]}`).all(1900, 2000)
      .map((row) => String(row.detail));
    assert.ok(
      plan.some((line) => /^SEARCH messages .*rowid>\? AND rowid<\?/.test(line)),
      `the range's rows only: ${plan.join(" | ")}`,
    );
    assert.ok(!plan.some((line) => /COVERING INDEX/.test(line)), plan.join(" | "));
  });

  test("the answer is the row-by-row count's, with gaps in the ids and a damaged index", async () => {
    using store = await openStore(path);
    const windows = (last: number): [number, number][] => [
      [1, last],
      [0, last + 10],
      [1, 1500],
      [2, last],
      [400, last - 3],
      [1000, 1200],
      [last - 50, last],
      [1, 1],
      [last + 1, last + 9],
      [-5, 0],
      [600, 1600],
      [300, 1900],
    ];
    const check = (label: string) => {
      const last = lastMessageId(store);
      for (const [from, to] of windows(last)) {
        assert.equal(
          new TrigramGaps().complete(store, from, to),
          completeByRows(store, from, to),
          `${label}: ${from}..${to}`,
        );
      }
    };
    check("sound");
    using raw = await rawOpen(path);
    // Ids 700–1,499 gone (with their index rows, by the triggers).
    raw.exec("DELETE FROM messages WHERE id >= 700 AND id < 1500");
    check("ids missing");
    // The index lacks messages 300–309, as a table recreated without a backfill would.
    raw.exec("DELETE FROM messages_fts_trigram WHERE rowid >= 300 AND rowid <= 309");
    check("index rows missing");
    assert.equal(new TrigramGaps().complete(store, 1, lastMessageId(store)), false);
    assert.equal(new TrigramGaps().complete(store, 1500, lastMessageId(store)), true);
    // An index row beyond the last message (and one below the first id).
    raw.exec(
      "INSERT INTO messages_fts_trigram(rowid, content) VALUES (5000, 'x'), (-3, 'y')",
    );
    check("index rows beyond the messages");
    assert.equal(new TrigramGaps().complete(store, 1500, 6000), false);
    assert.equal(new TrigramGaps().complete(store, -10, 299), false);
    assert.equal(new TrigramGaps().complete(store, 1500, 2000), true);
  });

  test("a search that finds nothing still answers as the scan does", async () => {
    using store = await openStore(path);
    for (const query of ["zzqqxx", "数据 message 1999", "message"]) {
      assert.deepEqual(
        searchMessages(store, query, { limit: 5 }),
        searchMessages(store, query, { limit: 5 }, { substring: "scan" }),
        query,
      );
    }
  });
});
