/**
 * Search cases shared by the tests of both engines: the generator of hostile
 * queries and options (the property tests) and the fixture queries whose
 * answers improve on Python's (the fixture and conformance tests).
 */
import type { SearchOptions } from "../lib/core/search/options.ts";

/** Words the fixture holds, or that stress the planner (CJK, emoji, punctuation inside). */
const WORDS = [
  "docker",
  "kubernetes",
  "chat-send",
  "P2.2",
  "sp_new",
  "simulate.p2.test.ts",
  "C++",
  "terminal",
  "vision_analyze",
  "ZEBRAFISH42",
  "canary",
  "e.g.",
  "foo:bar",
  "记忆",
  "断裂",
  "记忆断裂",
  "数据",
  "通信",
  "Agent通信",
  "100%完成",
  "こんにちは",
  "テスト",
  "週次レポート",
  "안녕",
  "회의록",
  "🚀",
  "👩🏽‍💻",
  "🧑‍🚀",
  "café",
];
const OPERATORS = [
  "AND",
  "OR",
  "NOT",
  "NEAR",
  "NEAR(",
  "NEAR/2",
  "and",
  "Or",
  "nOt",
  "aNd",
  "near",
];
const PUNCTUATION = Array.from("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
const SPACES = [" ", "  ", "\t", "\n", "\u3000", "\u0085", "\u001f", "\u00a0", "\u2028", ""];
const ODD = [
  "\u0000",
  "\ud800",
  "\udfff",
  "\udc00x",
  "\ufeff",
  "\u200b",
  "\u0301",
  "\u007f",
  "\u0007",
];

/** A source of numbers in [0, 1). */
export type Random = () => number;

function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

/** A code point from one of the CJK ranges, Hangul jamo, half-width kana or emoji. */
function randomChar(rnd: Random): string {
  const ranges: Array<[number, number]> = [
    [0x4e00, 0x9fff],
    [0x3040, 0x30ff],
    [0xac00, 0xd7af],
    [0x3000, 0x303f],
    [0x20000, 0x2a6df],
    [0x1100, 0x11ff],
    [0xff61, 0xff9f],
    [0x1f300, 0x1faff],
    [0x20, 0x7e],
  ];
  const [lo, hi] = pick(rnd, ranges);
  return String.fromCodePoint(lo + Math.floor(rnd() * (hi - lo + 1)));
}

function fragment(rnd: Random): string {
  const r = rnd();
  if (r < 0.3) return pick(rnd, WORDS);
  if (r < 0.45) return pick(rnd, OPERATORS);
  if (r < 0.65) {
    return Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(rnd, PUNCTUATION)).join("");
  }
  if (r < 0.85) {
    return Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => randomChar(rnd)).join("");
  }
  return pick(rnd, ODD);
}

/**
 * One generated hostile query: words, operators, punctuation, random CJK
 * and emoji characters and odd code points, with assorted spaces; every
 * 200th is 5,000 characters long.
 */
export function hostileQuery(rnd: Random, i: number): string {
  const parts: string[] = [];
  const count = 1 + Math.floor(rnd() * 7);
  for (let j = 0; j < count; j++) parts.push(fragment(rnd), pick(rnd, SPACES));
  let text = parts.join("");
  if (i % 200 === 0) {
    // Some 5,000-character queries.
    while (text.length < 5000) text += pick(rnd, SPACES) + fragment(rnd);
    text = text.slice(0, 5000);
  }
  return text;
}

/** Generated search options: source, role, limit and offset filters, each sometimes. */
export function searchOptions(rnd: Random): SearchOptions {
  const sources = ["cli", "telegram", "discord", "tool", "cron", "acp", "tui", "nope"];
  const subset = () => sources.filter(() => rnd() < 0.3);
  const o: SearchOptions = {};
  if (rnd() < 0.2) o.sourceFilter = subset();
  if (rnd() < 0.2) o.excludeSources = subset();
  if (rnd() < 0.2) o.roleFilter = ["user", "assistant", "tool", "system"].filter(() => rnd() < 0.5);
  if (rnd() < 0.3) o.limit = Math.floor(rnd() * 40);
  if (rnd() < 0.2) o.offset = Math.floor(rnd() * 10);
  return o;
}

/** The keys of a search hit, in order. */
export const HIT_KEYS =
  "id,session_id,role,snippet,timestamp,tool_name,source,model,session_started,context";

/**
 * Fixture queries where both engines deliberately answer what Python v11
 * cannot (docs/search_improvements.md): their expected answers are not Python's.
 */
export const IMPROVED_QUERIES: ReadonlySet<string> = new Set([
  "记忆 OR 断裂",
  '"chat-send" 負荷テスト',
  "負荷テスト chat-send",
  "🚀",
  "foo:bar",
  "e.g.",
]);
