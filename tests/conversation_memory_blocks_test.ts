/**
 * A replayed turn loses its recalled-memory blocks (`<memory-context>…
 * </memory-context>`) and the system notes that introduce them as Python's
 * `re.sub` of their patterns removes them, in one pass over the text, where
 * the patterns took time that grew as its square: the block pattern scanned
 * to the end of the text from each opening tag no closing tag follows, so a
 * message of 100,000 such tags (2 MB) took over 20 s to replay, and the note
 * pattern from each note of reference data to the next `]` (10,000 notes
 * without one, 1.1 MB: about 10 s).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { toConversationMessage } from "../lib/core/conversation_message.ts";
import { PYTHON_WHITESPACE as WS } from "../lib/core/python_text.ts";
import { mulberry32 } from "./_random.ts";

/** The rule as Python writes it, and as this library ran it before: the oracle. */
const BLOCK = new RegExp(
  `<[${WS}]*memory-context[${WS}]*>[\\s\\S]*?</[${WS}]*memory-context[${WS}]*>`,
  "giu",
);
const NOTE = new RegExp(
  `\\[System note:[${WS}]*The following is recalled memory context,[${WS}]*` +
    `NOT new user input\\.[${WS}]*Treat as (?:informational background data|` +
    `authoritative reference data[^\\]]*)\\.\\][${WS}]*`,
  "giu",
);
const TAG = new RegExp(`</?[${WS}]*memory-context[${WS}]*>`, "giu");

/** What the oracle leaves of a turn's text, before the strip. */
function oracle(text: string): string {
  return text.replace(BLOCK, "").replace(NOTE, "").replace(TAG, "");
}

/** Pieces that make and break fences, in every case and spacing the rule allows. */
const PIECES = [
  "<memory-context>",
  "</memory-context>",
  "< MEMORY-Context\t>",
  "</\u3000memory-context >",
  "<memory-conteXt",
  "</",
  "<",
  ">",
  "memory-context",
  "<MEMORY-CONTEXT>",
  "x",
  " ",
  "\n",
  "[System note: The following is recalled memory context, NOT new user input. " +
  "Treat as informational background data.] ",
  "[SYSTEM NOTE:\tthe following is recalled memory context,NOT new user input." +
  "Treat as Informational background data",
  "[System note: The following is recalled memory context, NOT new user input. " +
  "Treat as authoritative reference data",
  "[system note: The following is recalled memory context,\u00a0NOT new user input.  " +
  "treat as AUTHORITATIVE reference data",
  ".]",
  "]",
  ".",
  "日本",
];

/** A random text of `count` pieces. */
function randomText(random: () => number, count: number): string {
  let text = "";
  for (let i = 0; i < count; i++) text += PIECES[Math.floor(random() * PIECES.length)];
  return text;
}

describe("toConversationMessage() and recalled memory", () => {
  test("removes exactly what Python's patterns remove, on random fences and notes", () => {
    const random = mulberry32(20260501);
    for (let i = 0; i < 3000; i++) {
      const text = randomText(random, 1 + Math.floor(random() * 24));
      const { content } = toConversationMessage({ role: "user", content: `a${text}b` });
      assert.equal(content, oracle(`a${text}b`), JSON.stringify(text));
    }
  });

  // These two took 32–43 s and 10 s with the patterns themselves (a test run that hangs on them
  // says the one-pass removal regressed; speed itself is the benchmarks' to measure).
  test("replays a turn of 100,000 unclosed opening tags, each tag removed", () => {
    const text = "say <memory-context>".repeat(100_000) + "</memory-context";
    const { content } = toConversationMessage({ role: "assistant", content: text });
    assert.equal(content, "say ".repeat(100_000) + "</memory-context");
  });

  test("replays a turn of 10,000 notes of reference data with no `]` after them, only the closed one removed", () => {
    const note = "[System note: The following is recalled memory context, NOT new user input. " +
      "Treat as authoritative reference data";
    const text = `${note} from the wiki.] ` + `${note} `.repeat(10_000);
    const { content } = toConversationMessage({ role: "user", content: text });
    assert.equal(content, `${note} `.repeat(10_000).trim());
  });
});
