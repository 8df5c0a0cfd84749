import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { sanitizeFts5Query } from "../lib/core/search/sanitize.ts";
import {
  containsCjk,
  countSubstringScript,
  isCjkCodePoint,
  isSubstringScriptCodePoint,
  isUnspacedCodePoint,
  MAY_HOLD_SUBSTRING_SCRIPT,
  UNSPACED_CLASS,
} from "../lib/core/search/cjk.ts";
import { pythonSplit, pythonStrip } from "../lib/core/python_text.ts";
import { expected } from "./_helpers.ts";

interface Entry {
  ts_call: string;
  ts_args: [string];
  result: unknown;
}

const functions = await expected<{ entries: Entry[] }>("functions.json");

describe("sanitizeFts5Query() matches Python on every fixture entry", () => {
  const entries = functions.entries.filter((e) => e.ts_call === "sanitizeFts5Query");
  test("the fixture has sanitizer entries", () => assert.ok(entries.length >= 30));
  for (const entry of entries) {
    test(`sanitizeFts5Query() returns Python's answer for ${JSON.stringify(entry.ts_args[0])}`, () => {
      assert.equal(sanitizeFts5Query(entry.ts_args[0]), entry.result);
    });
  }
});

describe("containsCjk() matches Python on every fixture entry", () => {
  const entries = functions.entries.filter((e) => e.ts_call === "containsCjk");
  test("the fixture has CJK entries", () => assert.ok(entries.length >= 10));
  for (const entry of entries) {
    test(`containsCjk() returns Python's answer for ${JSON.stringify(entry.ts_args[0])}`, () => {
      assert.equal(containsCjk(entry.ts_args[0]), entry.result);
    });
  }
});

describe("sanitizeFts5Query() follows Python's re semantics", () => {
  const cases: Array<[string, string, string]> = [
    ["a dangling operator is dropped only once at each end", "AND OR x", "OR x"],
    ["lower-case operators are dropped too", "not docker or", "docker"],
    ["an operator glued to a word is a word", "ANDROID tips", "ANDROID tips"],
    ["an operator followed by an underscore is a word", "AND_x y", '"AND_x" y'],
    ["a star after punctuation stays", "a.*b", "a.*b"],
    ["a star after a space goes", "a *b", "a b"],
    ["several stars collapse then a leading one goes", "** x***", "x*"],
    ["a trailing prefix star stays outside the quotes", "chat-send*", '"chat-send"*'],
    ["an unmatched quote becomes a space", 'say "hi', "say  hi"],
    ["an empty phrase is kept", '""', '""'],
    ["a phrase keeps its special characters", '"(a+b)^2"', '"(a+b)^2"'],
    ["U+001F counts as whitespace when stripping", "\u001fhello\u001f", "hello"],
    ["U+0085 separates an operator", "x\u0085AND", "x"],
    ["U+FEFF is not whitespace", "\ufeffx", "\ufeffx"],
    ["the ideographic space is whitespace", "\u3000OR 记忆", "记忆"],
    ["accented letters are word characters", "naïve-bayes", '"naïve-bayes"'],
    ["a combining mark is not a word character", "e\u0301-x", "e\u0301-x"],
    ["digits of any script are word characters", "٣-٤", '"٣-٤"'],
    ["a dollar sign in a phrase is restored literally", '"$1 $& $$" x', '"$1 $& $$" x'],
    ["a placeholder typed by the user is restored like Python", '\u0000Q0\u0000 "q"', '"q" "q"'],
    ["lone surrogates pass through", "\ud800-x", "\ud800-x"],
    ["NUL characters pass through", "a\u0000b", "a\u0000b"],
  ];
  for (const [what, input, output] of cases) {
    test(`sanitizeFts5Query() handles the case where ${what}`, () => {
      assert.equal(sanitizeFts5Query(input), output);
    });
  }
});

describe("CJK helpers", () => {
  test("isCjkCodePoint() accepts the seven ranges inclusive and nothing around them", () => {
    const ranges = [
      [0x4e00, 0x9fff],
      [0x3400, 0x4dbf],
      [0x20000, 0x2a6df],
      [0x3000, 0x303f],
      [0x3040, 0x309f],
      [0x30a0, 0x30ff],
      [0xac00, 0xd7af],
    ];
    for (const [lo, hi] of ranges) {
      assert.ok(isCjkCodePoint(lo) && isCjkCodePoint(hi), `${lo.toString(16)}`);
    }
    for (const cp of [0x2fff, 0x3100, 0x33ff, 0x4dc0, 0xa000, 0xabff, 0xd7b0, 0x1ffff, 0x2a6e0]) {
      assert.ok(!isCjkCodePoint(cp), cp.toString(16));
    }
  });

  test("countSubstringScript() counts CJK (astral ideographs once) and Thai, Lao, Myanmar, Khmer", () => {
    assert.equal(countSubstringScript("a𠀀b记忆。"), 4);
    assert.equal(countSubstringScript("hello"), 0);
    // Thai with its vowel and tone marks, Lao, Myanmar, Khmer: every code point counts.
    assert.equal(countSubstringScript("ข้อมูล"), 6);
    assert.equal(countSubstringScript("ພາສາ"), 4);
    assert.equal(countSubstringScript("ဒေတာ"), 4);
    assert.equal(countSubstringScript("ភាសា"), 4);
    // Scripts that put spaces between words stay with the word index.
    assert.equal(countSubstringScript("данных البيانات डेटाबेस"), 0);
    // containsCjk() stays Python's: CJK only.
    assert.equal(containsCjk("ข้อมูล"), false);
  });

  test("UNSPACED_CLASS matches exactly the code points isUnspacedCodePoint() names", () => {
    const pattern = new RegExp(UNSPACED_CLASS, "u");
    const differ: string[] = [];
    for (let cp = 0; cp <= 0x2ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (pattern.test(String.fromCodePoint(cp)) !== isUnspacedCodePoint(cp)) {
        differ.push(cp.toString(16));
      }
    }
    assert.deepEqual(differ, []);
  });

  test("MAY_HOLD_SUBSTRING_SCRIPT passes every code point isSubstringScriptCodePoint() names", () => {
    const missed: string[] = [];
    let extra = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const passes = MAY_HOLD_SUBSTRING_SCRIPT.test(String.fromCodePoint(cp));
      if (isSubstringScriptCodePoint(cp) && !passes) missed.push(cp.toString(16));
      if (passes && !isSubstringScriptCodePoint(cp)) extra++;
    }
    assert.deepEqual(missed, [], "a quick no is never wrong");
    assert.equal(extra, 0x2a7ff - 0x2a6df, "only the rest of extension B's last lead surrogate");
  });

  test("pythonStrip() and pythonSplit() use Python's whitespace", () => {
    assert.equal(pythonStrip("\u001c x \u0085"), "x");
    assert.deepEqual(pythonSplit(" a\u3000b\u001fc  "), ["a", "b", "c"]);
    assert.deepEqual(pythonSplit(" \u2028 "), []);
    assert.deepEqual(pythonSplit("\ufeff"), ["\ufeff"]);
  });
});

describe("sanitizeFts5Query() on long whitespace runs", () => {
  // Regression: a trailing-operator regex retried at every position of the
  // run (quadratic: 400,000 spaces took over a minute).
  const run = " ".repeat(400_000);
  test("sanitizeFts5Query() keeps both words around a 400,000-space run", () => {
    assert.equal(sanitizeFts5Query(`a${run}b`), `a${run}b`);
  });
  test("sanitizeFts5Query() drops a trailing operator after a 400,000-space run", () => {
    assert.equal(sanitizeFts5Query(`docker${run}AND${run}`), "docker");
    assert.equal(sanitizeFts5Query(`docker${run}notes`), `docker${run}notes`);
  });
});
