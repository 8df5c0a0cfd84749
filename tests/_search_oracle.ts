/**
 * A brute-force search oracle: which messages a query must find, decided by
 * scanning every row in JavaScript, for the generated queries of the
 * property test (words, phrases, prefixes, AND/OR/NOT, any mix of CJK,
 * Latin and emoji).
 *
 * The meaning it encodes (docs/search_improvements.md): operators bind as in
 * FTS5 (side by side, then NOT, then AND, then OR, each left to right); a
 * query with no CJK character and no emoji matches whole words as the
 * unicode61 index does (`deploy*` is a prefix, a phrase is consecutive
 * words); any other query matches every word as a substring, ASCII
 * case-insensitive (a trailing `*` adds nothing), and so does a word query
 * that matches nothing as words, when each alternative has a word of three
 * or more characters.
 */
import type { MessageSeed } from "./_search_data.ts";
import type { Random } from "./_random.ts";

/** One generated query, word by word. */
export type QueryPart =
  | {
    readonly kind: "word";
    readonly text: string;
    readonly quoted: boolean;
    readonly prefix: boolean;
  }
  | { readonly kind: "op"; readonly op: "AND" | "OR" | "NOT" | "" };

const LATIN = ["docker", "Docker", "compose", "deploy", "deployment", "go", "k8s", "api", "log"];
const COMPOUND = ["chat-send"];
const CJK = ["记忆", "断裂", "记忆断裂", "数据", "数据库", "テスト", "회의록", "정리", "通信"];
const EMOJI = ["🚀", "🎉"];
const VOCABULARY = [...LATIN, ...LATIN, ...COMPOUND, ...CJK, ...EMOJI];

function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

/**
 * Messages made of the vocabulary: words joined by spaces, and sometimes
 * CJK words run together (`记忆数据`).
 *
 * @param rnd The generator.
 * @param count How many.
 * @returns The messages of session `o`, one second apart.
 */
export function oracleCorpus(rnd: Random, count: number): MessageSeed[] {
  return Array.from({ length: count }, (_, i) => {
    const words = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick(rnd, VOCABULARY));
    let content = "";
    for (const [j, word] of words.entries()) {
      const glue = j === 0 ? "" : rnd() < 0.15 ? "" : rnd() < 0.1 ? ", " : " ";
      content += glue + word;
    }
    return { session_id: "o", role: i % 2 === 0 ? "user" : "assistant", content, timestamp: i };
  });
}

/**
 * A well-formed query: one to four words (some quoted phrases of two words,
 * some prefixes), joined by nothing or by AND, OR or NOT.
 *
 * @param rnd The generator.
 * @returns Its parts.
 */
export function oracleQuery(rnd: Random): QueryPart[] {
  const parts: QueryPart[] = [];
  const count = 1 + Math.floor(rnd() * 4);
  for (let i = 0; i < count; i++) {
    if (i > 0) parts.push({ kind: "op", op: pick(rnd, ["", "", "AND", "OR", "OR", "NOT"]) });
    const r = rnd();
    if (r < 0.15) {
      const text = `${pick(rnd, VOCABULARY)} ${pick(rnd, VOCABULARY)}`;
      parts.push({ kind: "word", text, quoted: true, prefix: false });
    } else {
      const text = pick(rnd, VOCABULARY);
      const prefix = r > 0.85 && !EMOJI.includes(text) && !COMPOUND.includes(text);
      parts.push({ kind: "word", text, quoted: false, prefix });
    }
  }
  return parts;
}

/**
 * The query as a user types it.
 *
 * @param parts The parts.
 * @returns The text.
 */
export function queryText(parts: readonly QueryPart[]): string {
  return parts.map((p) => {
    if (p.kind === "op") return p.op;
    const text = p.quoted ? `"${p.text}"` : p.text;
    return p.prefix ? `${text}*` : text;
  }).filter((t) => t !== "").join(" ");
}

// deno-lint-ignore no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;
const CJK_CHAR =
  /[\u4e00-\u9fff\u3400-\u4dbf\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af]/u;
const WORD_CHAR = /[\p{L}\p{N}\p{Co}\u0300-\u036f\u{1AB0}-\u{1AFF}]/u;
const TOKEN = /[\p{L}\p{N}\p{Co}\p{Mn}]+/gu;

/**
 * Whether the query is matched by substring (it holds CJK text or a word
 * that is only symbols) rather than word by word.
 *
 * @param parts The parts.
 * @returns `true` for substring matching.
 */
export function bySubstring(parts: readonly QueryPart[]): boolean {
  return parts.some((p) =>
    p.kind === "word" &&
    (CJK_CHAR.test(p.text) ||
      p.text.split(" ").some((w) => NON_ASCII.test(w) && !WORD_CHAR.test(w)))
  );
}

function tokens(text: string): string[] {
  return (text.toLowerCase().match(TOKEN) ?? []);
}

function wordMatches(
  part: Extract<QueryPart, { kind: "word" }>,
  content: string,
  substring: boolean,
): boolean {
  if (substring) return content.toLowerCase().includes(part.text.toLowerCase());
  const want = tokens(part.text);
  const have = tokens(content);
  for (let i = 0; i + want.length <= have.length; i++) {
    if (
      want.every((w, j) =>
        part.prefix && j === want.length - 1 ? have[i + j].startsWith(w) : have[i + j] === w
      )
    ) return true;
  }
  return false;
}

const isOp = (op: string) => (p: QueryPart) => p.kind === "op" && p.op === op;

function split<T>(items: readonly T[], at: (item: T) => boolean): T[][] {
  const out: T[][] = [[]];
  for (const item of items) {
    if (at(item)) out.push([]);
    else out[out.length - 1].push(item);
  }
  return out;
}

/**
 * Whether a message with this content matches the query.
 *
 * @param parts The query.
 * @param content The message content.
 * @returns The oracle's answer.
 */
export function oracleMatches(
  parts: readonly QueryPart[],
  content: string,
  substring = bySubstring(parts),
): boolean {
  const sequence = (seq: QueryPart[]) =>
    seq.filter((p) => p.kind === "word").every((p) => wordMatches(p, content, substring));
  const negation = (group: QueryPart[]) => {
    const [first, ...rest] = split(group, isOp("NOT"));
    return sequence(first) && rest.every((r) => !sequence(r));
  };
  return split(parts, isOp("OR")).some((alternative) =>
    split(alternative, isOp("AND")).every(negation)
  );
}

/**
 * Whether a word query that matches no message is searched again by
 * substring (`wordsFallback` of plan.ts): every alternative has a word
 * outside `NOT` of three or more characters.
 *
 * @param parts The query.
 * @returns `true` when an empty answer of the words is replaced by the substring one.
 */
export function fallsBackToSubstring(parts: readonly QueryPart[]): boolean {
  if (bySubstring(parts)) return false;
  return split(parts, isOp("OR")).every((alternative) =>
    split(alternative, isOp("AND")).some((factor) =>
      split(factor, isOp("NOT"))[0].some((p) => p.kind === "word" && [...p.text].length >= 3)
    )
  );
}
