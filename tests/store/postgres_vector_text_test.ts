/**
 * `vectorPrintedAs()`, with which the PostgreSQL doctor compares each
 * message's stored vectors with the ones its text gives without sending
 * them to the server, says what the server itself says: a literal of
 * `wordsVector` or `gramsVector` and a vector's printed text (`::text`,
 * read through the engine's client, as the doctor reads it) are the same
 * vector exactly when the server finds `literal::tsvector` equal to it.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { gramsVector, vectorPrintedAs, wordsVector } from "../../lib/postgres/text_search.ts";
import { mulberry32 } from "../_random.ts";
import { PG_URL, pgEngineSkip } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** Texts whose vectors are not plain ASCII words: every case the printed text could differ in. */
const TEXTS = [
  "",
  "deploy the staging cluster",
  "the the the unit test unit Test UNIT",
  "café naïve Ångström ÉCOLE ő ș ñ ǖ ệ",
  "数据库迁移完成了吗 数据 数",
  "ฐานข้อมูล ຖານຂໍ້ມູນ ဒေတာ ទិន្នន័យ",
  "👩🏽‍💻 🚀 x\u{10FFFD}y \u{10FFFD}\u{10FFFC} \uE000a \uE000\uE000 \uFFFDz \uF900",
  "\u0000image\uE000 private use",
  "1 2 3 10 9 ① x² ٠١٢",
  // One word more than 256 times, and positions past 16,383.
  Array.from({ length: 300 }, () => "again").join(" "),
  Array.from({ length: 17_000 }, (_, i) => `w${i % 50}`).join(" "),
  // Lexemes where UTF-16 order and code point order differ.
  "\u{1F600}x \uFB01x \uFF21x \u{20000}\u{20001} \uAC00\uAC01",
];

/** Random texts from a small alphabet of every kind of character above. */
function randomTexts(count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const alphabet = [..."ab zé数据库ฐา 🚀\u{10FFFD}\uE000\uFB01 1 ", "\u{20000}", " "];
  return Array.from({ length: count }, () => {
    let text = "";
    const length = Math.floor(random() * 40);
    for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
    return text;
  });
}

test("vectorPrintedAs(): the same entries in any order, and nothing else", () => {
  assert.ok(vectorPrintedAs("'b':2 'a':1,3", "'a':1,3 'b':2"));
  assert.ok(vectorPrintedAs("", ""));
  assert.ok(!vectorPrintedAs("'b':2 'a':1,3", "'a':1,2 'b':3"), "positions moved");
  assert.ok(
    !vectorPrintedAs("'ab':1 'c':2", "'a':1 'bc':2"),
    "the same characters split elsewhere",
  );
  assert.ok(!vectorPrintedAs("'a':1", "'b':1"), "another lexeme of the same length");
  assert.ok(!vectorPrintedAs("'a':1", "'a':1 'b':2"), "an entry more");
  assert.ok(!vectorPrintedAs("'数'", "'据'"));
});

describe("vectorPrintedAs() against the server", { skip: SKIP }, () => {
  let client: PgClient;
  before(async () => {
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    client = await connectPg(PG_URL!, "public", { max: 1 });
  });
  after(async () => await client?.close());

  const literals = () => {
    const texts = [...TEXTS, ...randomTexts(300, 7)];
    return [...new Set(texts.flatMap((text) => [wordsVector(text), gramsVector(text)]))];
  };

  test("each literal is the vector the server prints for it", { timeout: 60_000 }, async () => {
    const all = literals();
    const rows = await client.query(
      `SELECT v.literal, v.literal::tsvector::text AS printed
       FROM jsonb_array_elements_text($1::text::jsonb) AS v(literal)`,
      [JSON.stringify(all)],
    );
    assert.equal(rows.length, all.length);
    const differing = rows.filter((row) =>
      !vectorPrintedAs(String(row.literal), String(row.printed))
    );
    assert.deepEqual(differing, []);
    // The printed text is not merely the literal: the server orders the entries.
    assert.ok(rows.some((row) => row.literal !== row.printed));
  });

  test(
    "two literals: equal exactly when the server's vectors are",
    { timeout: 60_000 },
    async () => {
      const all = literals().slice(0, 120);
      const rows = await client.query(
        `SELECT a.i AS a, b.i AS b, b.literal::tsvector::text AS printed,
         a.literal::tsvector = b.literal::tsvector AS equal
       FROM jsonb_array_elements_text($1::text::jsonb) WITH ORDINALITY AS a(literal, i),
         jsonb_array_elements_text($1::text::jsonb) WITH ORDINALITY AS b(literal, i)`,
        [JSON.stringify(all)],
      );
      assert.equal(rows.length, all.length * all.length);
      for (const row of rows) {
        const said = vectorPrintedAs(all[Number(row.a) - 1], String(row.printed));
        assert.equal(said, row.equal, `${all[Number(row.a) - 1]} against ${row.printed}`);
      }
    },
  );
});
