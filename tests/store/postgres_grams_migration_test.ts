/**
 * Migration 7 gives the messages of a schema written before it the grams of
 * Thai, Lao, Myanmar and Khmer that a write now computes, and leaves every
 * other row as it was: afterwards the doctor finds each row's grams equal to
 * its text's, and a substring of those scripts is found through them.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { connectPg } from "../../lib/postgres/_client.ts";
import { migratePg } from "../../lib/postgres/schema.ts";
import { gramsVector, wordsVector } from "../../lib/postgres/text_search.ts";
import { doctorPostgresStore } from "../../lib/postgres/doctor/doctor.ts";
import { freshSchema, openPgStore, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

describe("migration 7: grams of the scripts without spaces", { skip: SKIP }, () => {
  test("rows holding Thai, Lao, Myanmar or Khmer get their grams; the others are not rewritten", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const client = await connectPg(PG_URL!, schema, { max: 1 });
    // Each text with the grams the version before migration 7 wrote (CJK's alone).
    const rows: Array<[string, string]> = [
      ["ฉันต้องการย้ายฐานข้อมูลไปยังเซิร์ฟเวอร์ใหม่", ""],
      ["数据库 and ฐานข้อมูล together", gramsVector("数据库")],
      ["ພາສາລາວ", ""],
      ["plain English, untouched", ""],
      ["只有中文的数据库", gramsVector("只有中文的数据库")],
    ];
    try {
      await migratePg(client, schema, 6);
      await client.query(
        "INSERT INTO sessions (id, source, started_at, message_count) VALUES ('old', 'cli', 1, 5)",
      );
      for (const [i, [text, grams]] of rows.entries()) {
        await client.query(
          `WITH m AS (INSERT INTO messages (session_id, role, content, timestamp, search_grams)
             VALUES ('old', 'user', $1, $2::double precision, $4::tsvector) RETURNING id)
           INSERT INTO message_words (id, session_id, role, timestamp, search_words)
           SELECT id, 'old', 'user', $2::double precision, $3::tsvector FROM m`,
          [text, 10 + i, wordsVector(text), grams],
        );
      }
      const before = await client.query("SELECT id, xmin::text AS x FROM messages ORDER BY id");
      const stale = await doctorPostgresStore(schemaUrl(schema));
      assert.equal(stale.checks[0].status, "problem", "migration 6: the doctor asks for 7 first");

      await using store = await openPgStore({}, schema);
      const after = await client.query("SELECT id, xmin::text AS x FROM messages ORDER BY id");
      const rewritten = after.filter((row, i) => row.x !== before[i].x).map((row) => row.id);
      assert.deepEqual(rewritten, [before[0].id, before[1].id, before[2].id]);

      const withGram = async (gram: string) =>
        (await client.query(
          "SELECT count(*) AS n FROM messages WHERE search_grams @@ $1::text::tsquery",
          [`'${gram}'`],
        ))[0].n;
      assert.equal(Number(await withGram("ฐา")), 2);
      assert.equal(Number(await withGram("ລາ")), 1);
      assert.equal(Number(await withGram("数据")), 2, "the CJK grams kept");
      const report = await doctorPostgresStore(schemaUrl(schema));
      assert.deepEqual(
        report.checks.filter((c) => c.status !== "ok").map((c) => c.name),
        [],
        JSON.stringify(report.checks),
      );
      assert.deepEqual(
        (await store.searchMessages("ฐานข้อมูล")).map((hit) => hit.timestamp).sort(),
        [10, 11],
      );
      assert.equal((await store.searchMessages("ฐา")).length, 2);
    } finally {
      await client.close();
    }
  });
});
