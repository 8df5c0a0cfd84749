/**
 * The PostgreSQL engine's `iterateExport` (what `copy postgres://… FILE`
 * reads) keeps its pages bounded when sessions' stored `message_count` is
 * stale (an old or hand-edited row says 0 or 1 of many messages). It made
 * its pages by those counts, so such sessions went into one page, read in
 * one statement of every message they held: memory as large as the
 * sessions. A page is now made by the messages each session holds, counted
 * with the listing, and each statement reads {@linkcode EXPORT_PAGE}
 * messages at most, going on after the last one read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { adminSql, freshSchema, openPgStore, PG_URL, pgEngineSkip } from "./_pg.ts";
import { connectPg } from "../../lib/postgres/_client.ts";
import { EXPORT_PAGE, type ExportReads, iterateExportPg } from "../../lib/postgres/_export.ts";
import type { PgQuery } from "../../lib/postgres/_client_types.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** Sessions and the messages each holds: two pages' worth, and one session alone beyond one. */
const HOLDS: Record<string, number> = { big: 5_000, a: 1_500, b: 1_500, c: 700 };

test("iterateExport reads at most a page of messages a statement when message_count is stale", {
  skip: SKIP,
  timeout: 120_000,
}, async () => {
  const schema = freshSchema();
  await using store = await openPgStore({}, schema);
  for (const [id, count] of Object.entries(HOLDS)) {
    await store.createSession(id, "cli");
    await store.appendMessages(
      id,
      Array.from({ length: count }, (_, i) => ({ role: "user", content: `${id} line ${i}` })),
    );
  }
  // Times that tie and run against the ids: a page read in parts goes on in time and id order.
  await adminSql(`UPDATE "${schema}".messages SET timestamp = 1770000000 + (id % 7)`);
  await adminSql(
    `UPDATE "${schema}".sessions SET message_count = CASE id WHEN 'big' THEN 1 ELSE 0 END`,
  );

  const client = await connectPg(PG_URL!, schema, { max: 2 });
  try {
    /** The rows each statement that read messages returned. */
    const read: number[] = [];
    const counting = (query: PgQuery): PgQuery => async (text, params, options) => {
      const rows = await query(text, params, options);
      if (/FROM messages m\s+WHERE m\.session_id IN/.test(text)) read.push(rows.length);
      return rows;
    };
    const reads: ExportReads = {
      query: counting(client.query),
      inSnapshot: (fn) =>
        client.transaction(async (query) => {
          await query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
          return await fn(counting(query));
        }),
      client,
      closed: () => false,
    };
    const exported = [];
    for await (const session of iterateExportPg(reads, {})) exported.push(session);

    assert.ok(read.length > 0);
    assert.ok(Math.max(...read) <= EXPORT_PAGE, `statements read ${read.join(", ")} messages`);
    // Every message, once, in each session's order, with the row as stored.
    assert.deepEqual(
      exported.map((s) => [s.id, s.messages.length]).sort(),
      Object.entries(HOLDS).sort(),
    );
    for (const session of exported) {
      const whole = await store.exportSession(session.id);
      assert.deepEqual(session.messages, whole!.messages, session.id);
      assert.equal(session.message_count, session.id === "big" ? 1 : 0);
    }
  } finally {
    await client.close();
  }
});
