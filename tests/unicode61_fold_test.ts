/**
 * The tokens `fts5_text.ts` computes against those of the running runtime's
 * own SQLite, for every code point: `unicode61` as Hermes's `messages_fts`
 * is made, and `trigram` as its `messages_fts_trigram` is.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import { ftsTableSql } from "../lib/sqlite/schema/schema_sql.ts";
import {
  eachToken,
  foldToken,
  foldTrigram,
  tokenize,
  trigramTokens,
} from "../lib/core/search/fts5_text.ts";
import { wordsVector } from "../lib/postgres/text_search.ts";

const open = await loadDriver();
const db = open(":memory:");
after(() => db.close());
db.exec(ftsTableSql("messages_fts_trigram"));
db.exec("CREATE VIRTUAL TABLE grams_vocab USING fts5vocab(messages_fts_trigram, instance)");

/** Every code point but U+0000 (which ends a text in SQLite's eyes) and the surrogates. */
function codePoints(): number[] {
  const all: number[] = [];
  for (let cp = 1; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) all.push(cp);
  return all;
}

function hex(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The terms SQLite's `unicode61` (as in `messages_fts`) makes of each text, in order. */
function sqliteWords(texts: readonly string[]): string[][] {
  // A table of their own: deleting texts from FTS5 costs as much as writing them.
  db.exec("DROP TABLE IF EXISTS words_vocab; DROP TABLE IF EXISTS messages_fts");
  db.exec(ftsTableSql("messages_fts"));
  db.exec("CREATE VIRTUAL TABLE words_vocab USING fts5vocab(messages_fts, instance)");
  const insert = db.prepare("INSERT INTO messages_fts (rowid, content) VALUES (?, ?)");
  db.exec("BEGIN");
  texts.forEach((text, i) => insert.run(i + 1, text));
  db.exec("COMMIT");
  const out: string[][] = texts.map(() => []);
  const rows = db.prepare(
    "SELECT doc, group_concat(term, ' ' ORDER BY offset) AS terms FROM words_vocab GROUP BY doc",
  ).all();
  for (const row of rows) out[Number(row.doc) - 1] = String(row.terms).split(" ");
  return out;
}

/** The trigrams SQLite's `trigram` (as in `messages_fts_trigram`) makes of a text, in order. */
function sqliteTrigrams(text: string): string[] {
  db.exec("DELETE FROM messages_fts_trigram");
  db.prepare("INSERT INTO messages_fts_trigram (rowid, content) VALUES (1, ?)").run(text);
  return db.prepare("SELECT term FROM grams_vocab ORDER BY offset").all().map((r) =>
    String(r.term)
  );
}

function words(text: string): string[] {
  return tokenize(text).map((token) => token.term);
}

describe("tokenize() splits and folds as SQLite's unicode61", () => {
  test("tokenize() makes SQLite's terms of every code point, in runs of 32", () => {
    // Runs of consecutive code points between spaces: a code point that separates words
    // in one and not the other, or folds otherwise, changes the terms of its run.
    const all = codePoints();
    const texts: string[] = [];
    const firsts: number[] = [];
    for (let at = 0; at < all.length; at += 4096) {
      const runs: string[] = [];
      for (let run = at; run < Math.min(at + 4096, all.length); run += 32) {
        runs.push(String.fromCodePoint(...all.slice(run, Math.min(run + 32, at + 4096))));
      }
      texts.push(runs.join(" "));
      firsts.push(all[at]);
    }
    const expected = sqliteWords(texts);
    const wrong: string[] = [];
    texts.forEach((text, i) => {
      const mine: string[] = [];
      eachToken(text, (term) => void mine.push(term));
      if (mine.join(" ") !== expected[i].join(" ")) {
        const at = mine.findIndex((term, k) => term !== expected[i][k]);
        wrong.push(
          `${hex(firsts[i])}…: term ${at} is ${JSON.stringify(mine[at])}, SQLite's ${
            JSON.stringify(expected[i][at])
          }`,
        );
      }
    });
    assert.deepEqual(wrong, []);
  });

  test("tokenize() folds Greek final sigma and the symbols Unicode folds", () => {
    assert.deepEqual(words("ΚΩΔΙΚΟΣ κωδικος Κωδικός"), ["κωδικοσ", "κωδικοσ", "κωδικόσ"]);
    assert.deepEqual(words("350µs ſtraße ϐϑϕϖϰϱϵ"), ["350μs", "straße", "βθφπκρε"]);
    assert.deepEqual(sqliteWords(["ΚΩΔΙΚΟΣ κωδικος Κωδικός"])[0], words("ΚΩΔΙΚΟΣ κωδικος Κωδικός"));
    assert.deepEqual(sqliteWords(["350µs ſtraße ϐϑϕϖϰϱϵ"])[0], words("350µs ſtraße ϐϑϕϖϰϱϵ"));
  });

  test("tokenize() splits Zalgo text where SQLite does", () => {
    const zalgo = "Z̵͉a̶l̷g̸o̴ t̀é̂x̃t̄";
    assert.deepEqual(words(zalgo), ["z", "a", "l", "g", "o", "text"]);
    assert.deepEqual(sqliteWords([zalgo])[0], words(zalgo));
  });

  test("tokenize() keeps the isolates of a name in its word, as SQLite does", () => {
    // U+2068 and U+2069 came after Unicode 6.1: token characters to SQLite.
    const text = "hi \u2068Alice\u2069 ₽5 🌭";
    assert.deepEqual(words(text), ["hi", "\u2068alice\u2069", "₽5", "🌭"]);
    assert.deepEqual(sqliteWords([text])[0], words(text));
  });

  test("a removed diacritic never begins a token: a lone one separates, as SQLite reads it", () => {
    // Before: `\u0301école` was one token from the mark (the snippet marked it, where SQLite's
    // mark begins at é), and a lone mark took a position (PostgreSQL's phrase `"a b"` missed).
    const text = "x \u0301école y a \u0301 b";
    assert.deepEqual(
      tokenize(text).map((token) => [token.term, token.start]),
      [["x", 0], ["ecole", 3], ["y", 9], ["a", 11], ["b", 15]],
    );
    assert.deepEqual(sqliteWords([text])[0], words(text));
    assert.equal(wordsVector("a \u0301 b"), "'a':1 'b':2");
  });

  test("tokenize() leaves letters assigned after Unicode 6.1 as they are", () => {
    // Cherokee small letters and Georgian Mtavruli are not in SQLite's tables.
    assert.deepEqual(words("Ꭰꭰ Ა"), ["Ꭰꭰ", "Ა"]);
    assert.deepEqual(sqliteWords(["Ꭰꭰ Ა"])[0], words("Ꭰꭰ Ა"));
    assert.equal(foldToken("ΣΟΦΊΑ"), "σοφία");
  });
});

describe("trigramTokens() folds as SQLite's trigram", () => {
  test("trigramTokens() makes SQLite's trigram of every code point", () => {
    // Three code points a column, in a table of many columns: one trigram each, and few rows.
    const columns = Array.from({ length: 64 }, (_, i) => `c${String(i).padStart(2, "0")}`);
    db.exec(
      `CREATE VIRTUAL TABLE wide USING fts5(${columns.join(", ")}, tokenize='trigram')`,
    );
    db.exec("CREATE VIRTUAL TABLE wide_vocab USING fts5vocab(wide, instance)");
    const all = codePoints();
    while (all.length % (3 * columns.length) !== 0) all.push(0x61);
    const insert = db.prepare(
      `INSERT INTO wide (rowid, ${columns.join(", ")}) VALUES (?, ${
        columns.map(() => "?").join(", ")
      })`,
    );
    const texts: string[] = [];
    db.exec("BEGIN");
    for (let at = 0, row = 1; at < all.length; at += 3 * columns.length, row++) {
      const values = columns.map((_, c) =>
        String.fromCodePoint(...all.slice(at + 3 * c, at + 3 * c + 3))
      );
      texts.push(...values);
      insert.run(row, ...values);
    }
    db.exec("COMMIT");
    const { terms } = db.prepare(
      "SELECT group_concat(term, '' ORDER BY doc, col) AS terms FROM wide_vocab",
    ).get()!;
    const expected = [...String(terms)];
    const wrong: string[] = [];
    texts.forEach((text, i) => {
      const mine = trigramTokens(text);
      assert.equal(mine.length, 1);
      const sqlite = expected.slice(3 * i, 3 * i + 3).join("");
      if (mine[0].term !== sqlite) {
        wrong.push(`${JSON.stringify(text)}: ${mine[0].term} ≠ ${sqlite}`);
      }
    });
    assert.equal(expected.length, 3 * texts.length);
    assert.deepEqual(wrong.slice(0, 10), []);
  });

  test("trigramTokens() folds symbols unicode61 does not index, and final sigma", () => {
    const text = "ⒶⓑΣΟΔΟΣ ΚΩΔΙΚΟΣ µs ſ\u0000x";
    assert.deepEqual(trigramTokens(text).map((t) => t.term), sqliteTrigrams(text));
    assert.equal(foldTrigram("ⒶΣς µſ Straße"), "ⓐσσ μs straße");
  });

  test("trigramTokens() folds a long text as SQLite does, and as each of its characters", () => {
    // A long text is folded unit by unit into an array, a short one character by character.
    const text = "ΟΔΟΣ 𐐀𐐨 ΚΩΔΙΚΟΣ Ⓐ µs İ ẞ ǅ ".repeat(20);
    assert.ok(text.length > 256);
    assert.deepEqual(trigramTokens(text).map((t) => t.term), sqliteTrigrams(text));
    const chars = codePoints().filter((cp) => cp <= 0x1ffff).map((cp) => String.fromCodePoint(cp));
    const all = chars.join("");
    const each = chars.map((char) => foldTrigram(char)).join("");
    assert.equal(foldTrigram(all), each);
  });
});
