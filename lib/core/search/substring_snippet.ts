/**
 * The snippet of a substring hit without content, found by its tool name
 * or tool calls.
 *
 * A substring search finds a message by its content, tool name or tool
 * calls (LIKE: ASCII case-insensitive, reading each value up to its first
 * NUL), and both engines cut the snippet from the content: 120 characters
 * from 40 before the first word's first occurrence, or from the start. A
 * hit without content (an assistant's tool call: NULL, or empty) would
 * have a null or empty snippet, so its snippet is cut the same way from
 * the first of tool name and tool calls that holds a word, at the
 * earliest occurrence of any word. Every hit with content keeps the
 * content's snippet, as Python's (whose recorded answers hold no hit
 * without content).
 *
 * @module
 */

/** Characters shown before the match. */
const BEFORE = 40;
/** Characters a snippet holds. */
const LENGTH = 120;

/** What a substring hit's snippet is chosen from. */
export interface SnippetFields<T> {
  /** The snippet cut from the content (`null` for NULL content). */
  readonly contentSnippet: T;
  /** The message's tool name. */
  readonly toolName: unknown;
  /** The message's tool calls (JSON text). */
  readonly toolCalls: unknown;
}

/** ASCII letters lowered, as SQLite's LIKE folds them. */
function foldAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** What LIKE reads of a value: the text up to its first NUL, folded. */
function likeText(value: string): string {
  return foldAscii(value.split("\u0000")[0]);
}

/** The UTF-16 index of the earliest occurrence of any word in `value`, or -1. */
function firstMatch(value: string, words: readonly string[]): number {
  const seen = likeText(value);
  let first = -1;
  for (const word of words) {
    const at = seen.indexOf(likeText(word));
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first;
}

/**
 * A substring hit's snippet: the one cut from its content, unless that
 * shows nothing (NULL or empty content); then 120 characters (code points,
 * as SQLite's `substr`) of the first of tool name and tool calls that
 * holds a word, from 40 before the word's earliest occurrence.
 *
 * @param fields The content's snippet, the tool name and the tool calls.
 * @param words The words the hit may be found by (`positiveWords`).
 * @returns The snippet (the content's when no tool field holds a word).
 */
export function substringSnippet<T>(
  fields: SnippetFields<T>,
  words: readonly string[],
): T | string {
  const { contentSnippet, toolName, toolCalls } = fields;
  if (contentSnippet !== null && contentSnippet !== "") return contentSnippet;
  for (const value of [toolName, toolCalls]) {
    if (typeof value !== "string") continue;
    const at = firstMatch(value, words);
    if (at < 0) continue;
    const start = Math.max(0, [...value.slice(0, at)].length - BEFORE);
    return [...value].slice(start, start + LENGTH).join("");
  }
  return contentSnippet;
}
