/**
 * The PostgreSQL engine's word tokens are SQLite's: for texts in many
 * scripts, with diacritics, marks, emoji old and new and odd code points,
 * `tokenize()` gives exactly the terms FTS5's `unicode61` tokenizer stores
 * (read back through `fts5vocab`), and the FTS5 query translation keeps
 * FTS5's precedence; the CJK grams are each character and each pair of a
 * run, once each, in order. Runs without a server.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  gramsVector,
  substringGrams,
  withoutContentFilter,
  wordsQuery,
} from "../../lib/postgres/text_search.ts";
import { parseFtsQuery, tokenize } from "../../lib/core/search/fts5_text.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { mulberry32 } from "../_random.ts";

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

test("substringGrams() gives each CJK character and each pair of a run once, in order of first sight", () => {
  assert.deepEqual(substringGrams("数据库 数据"), ["数", "据", "数据", "库", "据库"]);
  // A non-CJK character ends a run; kana, Hangul and the ideographic space are CJK.
  assert.deepEqual(substringGrams("测a试テスト 회의"), [
    "测",
    "试",
    "テ",
    "试テ",
    "ス",
    "テス",
    "ト",
    "スト",
    "회",
    "의",
    "회의",
  ]);
  assert.deepEqual(substringGrams("\u3000字"), ["\u3000", "字", "\u3000字"]);
  // Extension B lies beyond U+FFFF (two UTF-16 units); a lone surrogate is no character.
  assert.deepEqual(substringGrams("𠀀𠀁"), ["𠀀", "𠀁", "𠀀𠀁"]);
  assert.deepEqual(substringGrams("字\ud840字\udc00"), ["字"]);
  // Full-width Latin, half-width katakana and compatibility ideographs are not CJK here.
  assert.deepEqual(substringGrams("Ａｂｃ ｶﾞ \uf900 hello"), []);
});

test("substringGrams() gives Thai, Lao, Myanmar and Khmer grams as CJK's, their marks included", () => {
  // Thai: the tone mark and vowel sign above are characters of the run.
  assert.deepEqual(substringGrams("ที่ x"), ["ท", "ี", "ที", "่", "ี่"]);
  assert.deepEqual(substringGrams("ລາວ"), ["ລ", "າ", "ລາ", "ວ", "າວ"]);
  assert.deepEqual(substringGrams("မြန်"), ["မ", "ြ", "မြ", "န", "ြန", "်", "န်"]);
  assert.deepEqual(substringGrams("ខ្មែរ").slice(0, 3), ["ខ", "្", "ខ្"]);
  // One run across scripts: a Thai character beside a CJK one makes a pair.
  assert.deepEqual(substringGrams("字ก"), ["字", "ก", "字ก"]);
  assert.ok(substringGrams("ย้ายฐานข้อมูลไป").includes("ฐา"));
});

test("gramsVector() writes the grams as a tsvector literal, and stops short of 1 MB", () => {
  assert.equal(gramsVector("数据 数"), "'数' '据' '数据'");
  assert.equal(gramsVector("no CJK here"), "");
  // 200,000 random ideographs: some 220,000 distinct grams, ~1,080,000 characters of literal.
  const random = mulberry32(13);
  const text = Array.from(
    { length: 200_000 },
    () => String.fromCodePoint(0x4e00 + Math.floor(random() * 20_000)),
  ).join("");
  const vector = gramsVector(text);
  assert.ok(vector.length <= 600_000, `${vector.length} characters`);
  assert.ok(vector.length > 599_990, `${vector.length} characters`);
  const [first, second] = [...text];
  assert.ok(vector.startsWith(`'${first}' '${second}' '${first}${second}' `));
  assert.match(vector, /^('[^']+' )+'[^']+'$/);
});

test("withoutContentFilter() drops a content: filter, keeps others, and makes -content: match nothing", () => {
  const cases: Array<[string, string | null | undefined]> = [
    ["content:docker", "'docker'"],
    ["CONTENT : dock*", "'dock':*"],
    ['"content":docker', "'docker'"],
    ["docker content:prune", "('docker' & 'prune')"],
    ["content:content", "'content'"],
    ['"say content: here"', "('say' <-> 'content' <-> 'here')"],
    ["-content:docker", null],
    ['- content : "a b"* OR zzz', "'zzz'"],
    ["tool_name:docker", undefined],
    ["content:", undefined],
    ["xcontent:y", undefined],
  ];
  for (const [query, expected] of cases) {
    assert.equal(wordsQuery(withoutContentFilter(query)), expected, query);
  }
});
