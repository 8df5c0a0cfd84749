/**
 * Detecting Chinese, Japanese and Korean text, and the other scripts written
 * without spaces between words (Thai, Lao, Myanmar, Khmer): queries in them
 * are searched by substring (the trigram index or LIKE), because the
 * default FTS5 tokenizer keeps a whole run of such characters as one word.
 *
 * @module
 */
import { describeValue } from "../shown_value.ts";

/**
 * True when the code point is one of the CJK characters the Python Hermes
 * routes to substring search: unified ideographs (U+4E00–9FFF) and their
 * extensions A (U+3400–4DBF) and B (U+20000–2A6DF), CJK symbols and
 * punctuation (U+3000–303F, including the ideographic space), hiragana
 * (U+3040–309F), katakana (U+30A0–30FF) and Hangul syllables (U+AC00–D7AF).
 *
 * @param cp A code point.
 * @returns Whether it counts as CJK.
 */
export function isCjkCodePoint(cp: number): boolean {
  return (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x3000 && cp <= 0x303f) ||
    (cp >= 0x3040 && cp <= 0x309f) ||
    (cp >= 0x30a0 && cp <= 0x30ff) ||
    (cp >= 0xac00 && cp <= 0xd7af);
}

/**
 * Whether `text` contains at least one CJK character (see
 * {@linkcode isCjkCodePoint} for the seven ranges). Half-width katakana,
 * Hangul jamo, compatibility ideographs and full-width Latin do not count.
 *
 * @param text Any text.
 * @returns `true` when one code point of `text` is CJK.
 * @throws {TypeError} When `text` is not a string, naming the value.
 *
 * @example Telling CJK text apart
 * ```ts
 * import { containsCjk } from "./cjk.ts";
 * console.assert(containsCjk("mixed 文字 text"));
 * console.assert(containsCjk("こんにちは"));
 * console.assert(!containsCjk("ｱｲｳ")); // half-width katakana
 * console.assert(!containsCjk("hello"));
 * ```
 */
export function containsCjk(text: string): boolean {
  if (typeof text !== "string") {
    throw new TypeError(
      `Cannot look for CJK text: text must be a string: current value is ${describeValue(text)}`,
    );
  }
  for (const ch of text) {
    if (isCjkCodePoint(ch.codePointAt(0)!)) return true;
  }
  return false;
}

/**
 * True for a character of a script written without spaces between words,
 * other than CJK: Thai (U+0E00–0E7F), Lao (U+0E80–0EFF), Myanmar
 * (U+1000–109F) and Khmer (U+1780–17FF). FTS5's `unicode61` tokenizer keeps
 * a whole run of them (a sentence, up to the next space) as one word, and
 * cuts Myanmar at its vowel signs, so a word inside such text is found only
 * by substring. Python Hermes routes only CJK there, and finds such a word
 * only when it stands alone between spaces: an improvement, listed in
 * docs/search_improvements.md.
 *
 * @param cp A code point.
 * @returns Whether it belongs to one of those four blocks.
 */
export function isUnspacedCodePoint(cp: number): boolean {
  return (cp >= 0x0e00 && cp <= 0x0eff) ||
    (cp >= 0x1000 && cp <= 0x109f) ||
    (cp >= 0x1780 && cp <= 0x17ff);
}

/**
 * The blocks of {@linkcode isUnspacedCodePoint} as a regular-expression
 * character class, for a test written in a pattern (PostgreSQL's `~`).
 */
export const UNSPACED_CLASS = "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]";

/**
 * A quick test before the exact one: false for a text that holds no code
 * point of {@linkcode isSubstringScriptCodePoint}, true for almost every text
 * that does (its ranges as UTF-16 units: CJK extension B as its lead
 * surrogates U+D840–D869, which also start U+2A6E0–2A7FF).
 */
export const MAY_HOLD_SUBSTRING_SCRIPT =
  /[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\ud840-\ud869]/;

/**
 * Whether a code point sends a query to substring search: CJK
 * ({@linkcode isCjkCodePoint}) or of a script written without spaces
 * ({@linkcode isUnspacedCodePoint}).
 *
 * @param cp A code point.
 * @returns Whether it is either.
 */
export function isSubstringScriptCodePoint(cp: number): boolean {
  return isCjkCodePoint(cp) || isUnspacedCodePoint(cp);
}

/**
 * How many code points of `text` send a query to substring search
 * ({@linkcode isSubstringScriptCodePoint}).
 *
 * @param text Any text.
 * @returns The count.
 *
 * @example
 * ```ts
 * import { countSubstringScript } from "./cjk.ts";
 * console.assert(countSubstringScript("ฐานข้อมูล docker") === 9);
 * console.assert(countSubstringScript("记忆") === 2);
 * console.assert(countSubstringScript("docker") === 0);
 * ```
 */
export function countSubstringScript(text: string): number {
  let n = 0;
  for (const ch of text) {
    if (isSubstringScriptCodePoint(ch.codePointAt(0)!)) n++;
  }
  return n;
}
