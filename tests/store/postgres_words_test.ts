/**
 * The narrow `message_words` table of the PostgreSQL engine (each message's
 * word vector, session, role and timestamp, which word search ranks from):
 * every write keeps it row for row with `messages` — appends, replaced and
 * cleared transcripts, deletes, prunes, imports and sync rewrites — and
 * migration 5 moves the vectors of a schema written before it.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { copyFixture } from "../_helpers.ts";
import { freshSchema, openPgStore, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

describe("message_words", { skip: SKIP }, () => {
  let client: PgClient;
  let connectPg: typeof import("../../lib/postgres/_client.ts").connectPg;
  const stores: SessionStore[] = [];
  before(async () => {
    ({ connectPg } = await import("../../lib/postgres/_client.ts"));
  });
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
    await client?.close();
  });

  /** Opens a client on `schema` (kept for the after hook). */
  async function clientOn(schema: string): Promise<PgClient> {
    await client?.close();
    client = await connectPg(PG_URL!, schema, { max: 1 });
    return client;
  }

  /** Messages without a word row, word rows without a message, and how many messages. */
  async function mismatch(schema: string): Promise<[number, number, number]> {
    const c = await clientOn(schema);
    const [row] = await c.query(`SELECT
      (SELECT count(*) FROM messages m WHERE NOT EXISTS
        (SELECT 1 FROM message_words w WHERE w.id = m.id AND w.session_id = m.session_id
          AND w.role = m.role AND w.timestamp = m.timestamp)) AS unindexed,
      (SELECT count(*) FROM message_words w WHERE NOT EXISTS
        (SELECT 1 FROM messages m WHERE m.id = w.id)) AS orphans,
      (SELECT count(*) FROM messages) AS messages`);
    return [Number(row.unindexed), Number(row.orphans), Number(row.messages)];
  }

  test("every write that adds or removes messages keeps one word row per message", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const store = await openPgStore({}, schema);
    stores.push(store);
    const check = async (step: string, messages: number) =>
      assert.deepEqual(await mismatch(schema), [0, 0, messages], step);
    await store.createSession("a", "cli");
    await store.createSession("b", "cli");
    await store.appendMessage("a", { role: "user", content: "zebra one" });
    await store.appendMessages("a", [
      { role: "assistant", content: "zebra two" },
      { role: "user", content: "zebra three" },
    ]);
    await store.appendMessages("b", [{ role: "user", content: "zebra four" }]);
    await check("appends", 4);
    await store.replaceMessages("a", [{ role: "user", content: "replaced zebra" }]);
    await check("replaceMessages", 2);
    assert.deepEqual(
      (await store.searchMessages("zebra")).map((hit) => hit.session_id).sort(),
      ["a", "b"],
    );
    await store.clearMessages("b");
    await check("clearMessages", 1);
    const exported = (await store.exportSession("a"))!;
    await store.importSession({
      ...exported,
      messages: [...exported.messages, ...exported.messages],
    }, {
      replace: true,
    });
    await check("importSession replace", 2);
    await store.endSession("a", "cli_close");
    assert.equal(await store.pruneSessions({ olderThanDays: 0 }), 1);
    await check("pruneSessions", 0);
    await store.appendMessage("b", { role: "user", content: "zebra five" });
    assert.equal(await store.deleteSession("b"), true);
    await check("deleteSession", 0);
    assert.deepEqual(await store.searchMessages("zebra"), []);
  });

  test("a sync pass that rewrites or drops a session leaves no word row behind", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    const target = await connectSyncTarget(schemaUrl(schema));
    try {
      const file = copyFixture("hermes-v11.db");
      await syncFile(target, file, { host: "h" });
      const db = await SessionDB.open({ path: file });
      const [kept, gone] = db.listSessionsRich({ limit: 100, includeChildren: true })
        .filter((s) => s.message_count >= 2).map((s) => s.id);
      db.replaceMessages(kept, [{ role: "user", content: "only this now" }]);
      db.deleteSession(gone);
      const left = db.messageCount();
      db.close();
      await syncFile(target, file, { host: "h" });
      assert.deepEqual(await mismatch(schema), [0, 0, left]);
    } finally {
      await target.close();
    }
  });

  test("migration 5 moves the word vectors of an older schema, and search finds them", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const c = await clientOn(schema);
    const { migratePg } = await import("../../lib/postgres/schema.ts");
    const { wordsVector, gramsVector } = await import("../../lib/postgres/text_search.ts");
    await migratePg(c, schema, 4);
    await c.query(
      "INSERT INTO sessions (id, source, started_at, message_count) VALUES ('old', 'cli', 1, 2)",
    );
    for (const [i, text] of ["written before the move", "also before 数据库"].entries()) {
      await c.query(
        `INSERT INTO messages (session_id, role, content, timestamp, search_words, search_grams)
         VALUES ('old', 'user', $1, $2::double precision, $3::tsvector, $4::tsvector)`,
        [text, 10 + i, wordsVector(text), gramsVector(text)],
      );
    }
    const store = await openPgStore({}, schema);
    stores.push(store);
    assert.deepEqual(await mismatch(schema), [0, 0, 2]);
    const [column] = await (await clientOn(schema)).query(
      `SELECT count(*) AS n FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'messages' AND column_name = 'search_words'`,
      [schema],
    );
    assert.equal(Number(column.n), 0, "messages.search_words is dropped");
    assert.deepEqual((await store.searchMessages("before")).map((h) => h.timestamp), [10, 11]);
    assert.equal((await store.searchMessages("数据库")).length, 1);
  });
});
