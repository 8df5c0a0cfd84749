/**
 * A page of messages (`getMessages` with `beforeId`, `fromId`, `limit`,
 * `last`) is read along the `(session_id, timestamp)` index with a LIMIT:
 * the rows of the page, not the session's. On SQLite the statements the
 * store really runs are captured and explained (on a file of this tool's
 * schema and on a newer Hermes's, whose extra `(session_id, active,
 * timestamp)` index must not be taken instead); on PostgreSQL (when
 * HERMES_TEST_PG_URL is set) the engine's own statements are explained.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB, storeOf } from "../../lib/sqlite/session_db.ts";
import type { SqlValue } from "../../lib/sqlite/driver/types.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { checkedMessagesOptions, type MessagesOptions } from "../../lib/core/session_options.ts";
import { copyFixture, tempDbPath } from "../_helpers.ts";
import { freshSchema, openPgStore, PG_SKIP, PG_URL } from "./_pg.ts";

/** Messages in the paged session: many pages of {@linkcode PAGE}. */
const SIZE = 3000;
const PAGE = 10;

/** The pages asked for, given the ids of the session's messages in order. */
function pages(ids: number[]): MessagesOptions[] {
  const middle = ids[SIZE / 2];
  return [
    { last: PAGE, excludeHidden: true },
    { beforeId: middle, last: PAGE, excludeHidden: true },
    { fromId: middle, limit: PAGE + 1, excludeHidden: true },
    { beforeId: middle, last: PAGE },
    { fromId: middle, limit: PAGE, includeInactive: true },
  ];
}

/** `count` messages in session `id`, a second apart, with another session's rows between. */
function fill(db: SessionDB, id: string, count: number): void {
  db.createSession(id, "cli");
  db.createSession(`${id}-other`, "cli");
  let tick = 1777600000;
  for (let i = 0; i < count; i += 500) {
    db.appendMessages(
      id,
      Array.from({ length: 500 }, (_, j) => ({
        role: "user",
        content: `message ${i + j}`,
        timestamp: tick++,
      })),
    );
    db.appendMessage(`${id}-other`, { role: "user", content: "between" });
  }
}

for (
  const [layout, path] of [
    ["this tool's schema", () => tempDbPath()],
    ["a newer Hermes's schema (active, display_kind)", () => copyFixture("hermes-v21.db")],
  ] as const
) {
  describe(`SQLite, ${layout}: a page of messages is read along the session index`, () => {
    let db: SessionDB;
    let ids: number[];

    before(async () => {
      db = await SessionDB.open({ path: path() });
      const raw = storeOf(db).db;
      if (layout.startsWith("a newer")) {
        raw.exec("ALTER TABLE messages ADD COLUMN display_kind TEXT");
      }
      fill(db, "paged", SIZE);
      ids = db.getMessages("paged").map((m) => m.id);
    });
    after(() => db?.close());

    test("each page is its rows, and its statement searches the index with a LIMIT, no sort", () => {
      const store = storeOf(db);
      const seen: string[] = [];
      const statement = store.statement;
      store.statement = (sql: string) => {
        seen.push(sql);
        return statement.call(store, sql);
      };
      try {
        for (const options of pages(ids)) {
          seen.length = 0;
          const rows = db.getMessages("paged", options);
          const want = options.limit ?? options.last!;
          assert.equal(rows.length, want, JSON.stringify(options));
          const select = seen.find((sql) => /^SELECT \* FROM/.test(sql));
          assert.ok(select !== undefined, "the page's statement");
          const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${select}`)
            .all(...Array<SqlValue>(select.split("?").length - 1).fill(null))
            .map((row) => ({ parent: Number(row.parent), detail: String(row.detail) }));
          const shown = `${JSON.stringify(options)}\n${plan.map((row) => row.detail).join("\n")}`;
          assert.match(select, /LIMIT \?/, shown);
          const searches = plan.filter((row) => /^(SEARCH|SCAN) m\b/.test(row.detail));
          assert.equal(searches.length, 1, shown);
          assert.match(
            searches[0].detail,
            options.beforeId !== undefined
              ? /^SEARCH m USING INDEX idx_messages_session \(session_id=\? AND timestamp<\?\)$/
              : options.fromId !== undefined
              ? /^SEARCH m USING INDEX idx_messages_session \(session_id=\? AND timestamp>\?\)$/
              : /^SEARCH m USING INDEX idx_messages_session \(session_id=\?\)$/,
            shown,
          );
          // The index's order is the page's: a sort, if any, is of the page's rows (the last
          // ones, read backwards in a subquery, put back in order), never of the session's.
          if (plan.some((row) => /TEMP B-TREE/.test(row.detail))) {
            assert.notEqual(searches[0].parent, 0, shown);
            assert.ok(plan.some((row) => /^SCAN \(subquery-\d+\)$/.test(row.detail)), shown);
          }
        }
      } finally {
        store.statement = statement;
      }
    });
  });
}

describe(
  "PostgreSQL: a page of messages is read along the session index",
  { skip: PG_SKIP },
  () => {
    let store: SessionStore;
    let schema: string;
    let ids: number[];

    before(async () => {
      schema = freshSchema();
      store = await openPgStore({}, schema);
      const file = await SessionDB.open({ path: tempDbPath() });
      try {
        fill(file, "paged", SIZE);
        for (const id of ["paged", "paged-other"]) {
          await store.importSession(file.exportSession(id));
        }
      } finally {
        file.close();
      }
      ids = (await store.getMessages("paged")).map((m) => m.id);
    });
    after(async () => {
      await store?.close();
    });

    test("each page's statement takes the index with a LIMIT, reading about the page's rows", async () => {
      const { connectPg } = await import("../../lib/postgres/_client.ts");
      const { messageSelection, selectedMessagesSql } = await import(
        "../../lib/postgres/_message_selection.ts"
      );
      const client = await connectPg(PG_URL!, schema, { max: 1 });
      try {
        await client.query("ANALYZE messages");
        for (const options of pages(ids)) {
          assert.equal(
            (await store.getMessages("paged", options)).length,
            options.limit ?? options.last,
          );
          const checked = checkedMessagesOptions("read messages", options);
          const { sql, params } = selectedMessagesSql(
            messageSelection("paged", checked)!,
            checked.take,
          );
          const [row] = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
          const plan = JSON.stringify(row["QUERY PLAN"]);
          assert.match(plan, /"Index Name":"idx_messages_session"/, plan);
          assert.match(plan, /"Node Type":"Limit"/, plan);
          // Rows the session index gave: the page and a few, of thousands.
          const scanned = [
            ...plan.matchAll(/"Index Name":"idx_messages_session".*?"Actual Rows":(\d+)/g),
          ]
            .map((match) => Number(match[1]));
          assert.ok(scanned.length > 0 && Math.max(...scanned) <= 2 * PAGE + 2, plan);
        }
      } finally {
        await client.close();
      }
    });
  },
);
