/**
 * Search cases shared by the tests of both engines: the generator of hostile
 * queries and options (the property tests) and the fixture queries whose
 * answers improve on Python's (the fixture and conformance tests).
 */
import type { SearchOptions } from "../lib/core/search/options.ts";
import type { NewMessage } from "../lib/core/types.ts";
import type { SessionStore } from "../lib/core/session_store.ts";

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
  "ΚΩΔΙΚΟΣ:",
  '"":',
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

/**
 * What a user and an agent wrote in one conversation, each message under a
 * label: code identifiers, paths, URLs, flags, error messages and stack
 * traces, versions, C++/C#/.NET, tags, mentions, e-mail addresses,
 * apostrophes, accents, German, Turkish, Greek, Cyrillic, Arabic, Hebrew,
 * Thai, Vietnamese, Chinese, Japanese (kana, full-width and half-width
 * forms), Korean, emoji, numbers with separators and tool calls.
 */
export const RECALL_MESSAGES: ReadonlyArray<readonly [label: string, message: NewMessage]> = [
  ["snake", {
    role: "assistant",
    content: "The bug is in parse_session_id when the prefix is empty.",
  }],
  ["camel", {
    role: "assistant",
    content: "Call getSessionById() and then searchMessages with a limit.",
  }],
  ["dotted", {
    role: "assistant",
    content: "Set os.path.join and config.search.limit in settings.",
  }],
  ["path", { role: "user", content: "Please edit lib/core/search/plan.ts and src/App.tsx" }],
  ["url", {
    role: "user",
    content: "See https://github.com/NousResearch/hermes-agent/issues/123 for details",
  }],
  ["flag", {
    role: "assistant",
    content: "Run it with --dry-run and --no-verify, or -v for verbose.",
  }],
  ["error", {
    role: "tool",
    content: `Error: Cannot find module 'lodash/merge' imported from "./index.js"`,
    toolName: "terminal",
  }],
  ["trace", {
    role: "tool",
    content:
      `Traceback (most recent call last):\n  File "app.py", line 42, in main\nKeyError: 'user_id'`,
    toolName: "terminal",
  }],
  ["version", {
    role: "assistant",
    content: "Upgrade to v1.2.3 and Python 3.11 before node 20.10.0",
  }],
  ["cpp", { role: "user", content: "I rewrote the parser in C++ and the GUI in C# on .NET 8" }],
  ["tags", { role: "user", content: "Tag it #release-notes and ping @alice_dev about it" }],
  ["email", { role: "user", content: "Send the report to bob.smith@example.com today" }],
  ["hyphens", { role: "assistant", content: "Use e-mail for state-of-the-art follow-up" }],
  ["apostrophes", {
    role: "user",
    content: "I don't know why it's failing; l'été dernier it worked",
  }],
  ["accents", { role: "user", content: "Meet at the Café tomorrow, the naïve approach failed" }],
  ["decomposed", { role: "user", content: "cafe\u0301 decomposed" }],
  ["german", { role: "user", content: "Die Hauptstraße ist gesperrt, Straße und Fußgängerzone" }],
  ["turkish", { role: "user", content: "İstanbul'da ılık bir gün, DİKKAT dosya silindi" }],
  ["greek", { role: "user", content: "Η βάση δεδομένων είναι ΑΡΓΗ σήμερα" }],
  ["greek-code", { role: "user", content: "Ο ΚΩΔΙΚΟΣ:abc123 δεν δουλεύει" }],
  ["cyrillic", { role: "user", content: "База данных не отвечает, ошибка подключения" }],
  ["arabic", { role: "user", content: "قاعدة البيانات لا تستجيب" }],
  ["hebrew", { role: "user", content: "מסד הנתונים לא מגיב" }],
  ["thai", { role: "user", content: "ฐานข้อมูลไม่ตอบสนองเลยวันนี้" }],
  ["vietnamese", { role: "user", content: "Cơ sở dữ liệu không phản hồi" }],
  ["chinese", { role: "user", content: "数据库连接失败了，请检查配置文件" }],
  ["japanese", { role: "user", content: "東京でデータベースのテストを実行しました" }],
  ["katakana", { role: "assistant", content: "コンピュータのメモリが足りません" }],
  ["half-width", { role: "user", content: "ｶﾀｶﾅ ﾃｽﾄ です" }],
  ["korean", { role: "user", content: "서울에서 회의를 했습니다" }],
  ["korean2", { role: "user", content: "데이터베이스가 응답하지 않습니다" }],
  ["emoji", { role: "user", content: "🚀" }],
  ["emoji-mixed", { role: "user", content: "deploy done 🎉 ship it🚀now" }],
  ["numbers", {
    role: "assistant",
    content: "We saw 1,000 requests and 1.000 errors, total 12,345.67",
  }],
  ["json", { role: "user", content: 'The API rejected {"": 1, "name": "x"}' }],
  ["tool-call", {
    role: "assistant",
    content: null,
    toolCalls: [{
      id: "c1",
      type: "function",
      function: {
        name: "web_search",
        arguments: JSON.stringify({ query: "kubernetes ingress", max_results: 5 }),
      },
    }],
  }],
  ["tool-result", { role: "tool", content: "Found 3 pages", toolName: "web_search" }],
  ["quotes", { role: "user", content: `He said "hello world" and 'goodbye'` }],
  ["ip", { role: "user", content: "Server at 192.168.1.10:8080 returned 502" }],
  // Latin written against CJK text, and inside a longer word: no word of the unicode61 index.
  ["glued-cjk", {
    role: "user",
    content: "请用Docker部署，deploy流程走完后看kubernetesのクラスタ",
  }],
  ["glued-korean", { role: "assistant", content: "Redis를 재시작했습니다" }],
  ["compound", { role: "user", content: "Die Datenbankverbindung ist unterbrochen" }],
];

/**
 * Queries a user types after such a conversation, with the labels of
 * {@linkcode RECALL_MESSAGES} each finds on every engine (the Python
 * Hermes's hits and the improvements of docs/search_improvements.md).
 */
export const RECALL_QUERIES: ReadonlyArray<readonly [query: string, labels: readonly string[]]> = [
  ["parse_session_id", ["snake"]],
  ["session_id", ["snake"]],
  ["parse_session_id()", ["snake"]],
  ["getSessionById()", ["camel"]],
  ["getsessionbyid", ["camel"]],
  ["`searchMessages`", ["camel"]],
  ["os.path.join", ["dotted"]],
  ["lib/core/search/plan.ts", ["path"]],
  ["App.tsx", ["path"]],
  ["https://github.com/NousResearch/hermes-agent/issues/123", ["url"]],
  ["issues/123", ["url"]],
  ["--dry-run", ["flag"]],
  ["--no-verify", ["flag"]],
  ["Cannot find module 'lodash/merge'", ["error"]],
  ['"./index.js"', ["error"]],
  ["KeyError: 'user_id'", ["trace"]],
  ['File "app.py", line 42', ["trace"]],
  ["v1.2.3", ["version"]],
  ["Python 3.11", ["version"]],
  ["3.11?", ["version"]],
  [".NET 8", ["cpp"]],
  ["#release-notes", ["tags"]],
  ["@alice_dev", ["tags"]],
  ["bob.smith@example.com", ["email"]],
  ["state-of-the-art", ["hyphens"]],
  ["don't", ["apostrophes"]],
  ["don’t", ["apostrophes"]],
  ["l'été", ["apostrophes"]],
  ["ete", ["apostrophes"]],
  ["cafe", ["accents", "decomposed"]],
  ["CAFÉ", ["accents", "decomposed"]],
  ["«Café»", ["accents", "decomposed"]],
  ["naive", ["accents"]],
  ["Straße", ["german"]],
  ["Fußgänger*", ["german"]],
  ["ISTANBUL", ["turkish"]],
  ["DİKKAT", ["turkish"]],
  ["ılık", ["turkish"]],
  ["ΑΡΓΗ", ["greek"]],
  ["βάση δεδομένων", ["greek"]],
  // FTS5 reads `ΚΩΔΙΚΟΣ:` as a column filter; lower-cased in context its Σ is σ, alone ς.
  ["ΚΩΔΙΚΟΣ:abc123", ["greek-code"]],
  ["база данных", ["cyrillic"]],
  ["البيانات", ["arabic"]],
  ["הנתונים", ["hebrew"]],
  ["ข้อมูล", ["thai"]],
  ["dữ liệu", ["vietnamese"]],
  ["数据库", ["chinese"]],
  ["连接失败", ["chinese"]],
  ["数据库 配置", ["chinese"]],
  ["東京 テスト", ["japanese"]],
  ["実行", ["japanese"]],
  ["メモリ", ["katakana"]],
  ["ﾃｽﾄ", ["half-width"]],
  ["서울", ["korean"]],
  ["데이터베이스 응답", ["korean2"]],
  ["데이터*", ["korean2"]],
  ["🚀", ["emoji", "emoji-mixed"]],
  ["deploy 🎉", ["emoji-mixed"]],
  ["1,000", ["numbers"]],
  ["12,345.67", ["numbers"]],
  // A pasted JSON object with an empty key: FTS5 reads `"":` as a column filter with no name.
  ['{"": 1}', ["json", "ip", "numbers"]],
  ['"": 1', ["json", "ip", "numbers"]],
  ["web_search", ["tool-call", "tool-result"]],
  ["max_results", ["tool-call"]],
  ["“hello world”", ["quotes"]],
  ["'goodbye'", ["quotes"]],
  ["192.168.1.10:8080", ["ip"]],
  // A word the index holds nowhere is searched by substring: against CJK text, inside a longer
  // word. Where the index holds it, its hits are Python's (not `deploy流程`, `kubernetesの`).
  ["docker", ["glued-cjk"]],
  ["Docker 部署", ["glued-cjk"]],
  ["kubernetes", ["tool-call"]],
  ["redis", ["glued-korean"]],
  ["Datenbank", ["compound"]],
  ["deploy", ["emoji-mixed"]],
];

/**
 * Writes {@linkcode RECALL_MESSAGES} to `store` as session `recall`.
 *
 * @returns The label of each message id.
 */
export async function writeRecallMessages(store: SessionStore): Promise<Map<number, string>> {
  await store.createSession("recall", "cli");
  const labels = new Map<number, string>();
  for (const [label, message] of RECALL_MESSAGES) {
    labels.set(await store.appendMessage("recall", message), label);
  }
  return labels;
}
