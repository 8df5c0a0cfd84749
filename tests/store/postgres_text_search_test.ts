/**
 * The PostgreSQL engine's word tokens are SQLite's: for texts in many
 * scripts, with diacritics, marks, emoji old and new and odd code points,
 * `tokenize()` gives exactly the terms FTS5's `unicode61` tokenizer stores
 * (read back through `fts5vocab`), and the FTS5 query translation keeps
 * FTS5's precedence. Runs without a server.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFtsQuery, tokenize, wordsQuery } from "../../lib/postgres/text_search.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";

const SAMPLES = [
  "Hello, World! docker-compose v2.3_beta",
  "café naïve Ångström ÉCOLE ő ș ñ",
  "ǖ ṩ ệ ǻ ḉ ǿ ł ø æ œ ß İstanbul",
  "ёлка Йод ά Ελλάδα",
  "x\u0301y e\u0301\u0301 \u0301",
  "हिन्दी नमस्ते",
  "👩🏽‍💻 🧑‍🚀 🚀 😀 🤔 🛑 🟠 🤌 ⭐",
  "x\ufe0fy a\u200db x\u00ady x\u2060y",
  "Ａｂｃ ｶﾞ が ガ 数据库 회의록",
  "x\uE000y \u{10FFFD} x\uFFFEy x\u0378y",
  "① ② x² ℌ 𝔘𝔫𝔦 ٠١٢",
  "tab\there\nnew line\u3000ideographic",
];

test("tokenize() gives the terms SQLite's unicode61 stores", async () => {
  const db = await rawOpen(tempDbPath());
  try {
    db.exec("CREATE VIRTUAL TABLE f USING fts5(c)");
    db.exec("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')");
    for (const sample of SAMPLES) {
      db.exec("DELETE FROM f");
      db.prepare("INSERT INTO f (rowid, c) VALUES (1, ?)").run(sample);
      const sqlite = db.prepare("SELECT term FROM v ORDER BY offset").all().map((r) => r.term);
      assert.deepEqual(tokenize(sample).map((t) => t.term), sqlite, JSON.stringify(sample));
    }
  } finally {
    db.close();
  }
});

test("wordsQuery() keeps FTS5's precedence: phrase > NOT > AND > OR", () => {
  assert.equal(wordsQuery("a OR b c"), "('a' | ('b' & 'c'))");
  assert.equal(wordsQuery("a NOT b c"), "('a' & !('b' & 'c'))");
  assert.equal(wordsQuery("a NOT b AND c"), "(('a' & !'b') & 'c')");
  assert.equal(wordsQuery('"docker compose" dep*'), "(('docker' <-> 'compose') & 'dep':*)");
  assert.equal(wordsQuery("NOT a"), undefined);
  assert.equal(wordsQuery("a AND OR b"), undefined);
  assert.equal(wordsQuery("foo:bar"), undefined);
  assert.equal(wordsQuery('"!!!"'), null);
  assert.equal(parseFtsQuery('"unterminated'), undefined);
});
