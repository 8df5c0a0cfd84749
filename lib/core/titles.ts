/**
 * Session titles as the Python Hermes handles them, for every engine:
 * cleaning a title, and numbering the titles of a lineage (`"my project #3"`);
 * the queries that find the titles are each engine's.
 *
 * @module
 */
import { codePointLength, PYTHON_WHITESPACE, pythonStrip } from "./python_text.ts";
import { TitleError } from "./errors.ts";
import { describeValue } from "./shown_value.ts";

/** The longest title accepted, in code points. */
const MAX_TITLE_LENGTH = 100;

/** ASCII control characters except tab, LF and CR (those become spaces). */
// deno-lint-ignore no-control-regex
const ASCII_CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** Zero-width, bidirectional-override and object-replacement characters. */
const INVISIBLES = /[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffc\ufff9-\ufffb]/g;

/** A run of Unicode whitespace, as Python's `\s+` sees it. */
const WHITESPACE_RUN = new RegExp(`[${PYTHON_WHITESPACE}]+`, "gu");

/**
 * Cleans a session title as the Python Hermes does: removes ASCII control
 * characters (except tab, LF and CR), zero-width and bidirectional-override
 * characters (U+200B–200F, U+2028–202E, U+2060–2069, U+FEFF, U+FFFC,
 * U+FFF9–FFFB), collapses every whitespace run to one space and trims.
 *
 * @param title The title as typed.
 * @returns The clean title, or `null` when nothing is left (which clears a title).
 * @throws {TitleError} `Title too long (N chars, max 100)` when the clean title
 *   has more than 100 code points.
 * @throws {TypeError} When `title` is not a string, naming the value (`null`,
 *   `undefined` and the other values Python reads as false, such as `0`,
 *   give `null`, as Python's `if not title` does).
 *
 * @example Cleaning a title
 * ```ts
 * import { sanitizeTitle } from "./titles.ts";
 * console.assert(sanitizeTitle("  Weekly \u200b sync\t notes ") === "Weekly sync notes");
 * console.assert(sanitizeTitle(" \u200b ") === null);
 * ```
 */
export function sanitizeTitle(title: string | null | undefined): string | null {
  if (!title) return null;
  if (typeof title !== "string") {
    throw new TypeError(
      `Cannot sanitize title: title must be a string: current value is ${describeValue(title)}`,
    );
  }
  const cleaned = title
    .replace(ASCII_CONTROLS, "")
    .replace(INVISIBLES, "")
    .replace(WHITESPACE_RUN, " ");
  const trimmed = pythonStrip(cleaned);
  if (trimmed === "") return null;
  const length = codePointLength(trimmed);
  if (length > MAX_TITLE_LENGTH) {
    throw new TitleError(`Title too long (${length} chars, max ${MAX_TITLE_LENGTH})`);
  }
  return trimmed;
}

/** `"<base> #<digits>"`, with Python's `^(.*?) #(\d+)$` semantics (`$` may precede a final LF). */
const NUMBERED_TITLE = /^([^\n]*?) #(\p{Nd}+)\n?$/u;
/** The number of a numbered title. */
const TITLE_NUMBER = /^[^\n]* #(\p{Nd}+)\n?$/u;
const DECIMAL_DIGIT = /\p{Nd}/u;

/**
 * The value of a run of Unicode decimal digits (any script, as Python's
 * `int()` reads them). Every Unicode digit block is a run of whole decades
 * starting at a zero, so a digit's value is its offset in its block, mod 10.
 */
function digitsValue(digits: string): bigint {
  let value = 0n;
  for (const ch of digits) {
    const cp = ch.codePointAt(0)!;
    let start = cp;
    while (DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
    value = value * 10n + BigInt((cp - start) % 10);
  }
  return value;
}

/**
 * The title a lineage's titles are numbered after: `base` without its
 * `" #N"` ending (`"notes #2"` → `"notes"`).
 *
 * @param base A title of the lineage.
 * @returns Its stem.
 *
 * @example
 * ```ts
 * import { titleStem } from "./titles.ts";
 * console.assert(titleStem("notes #2") === "notes" && titleStem("notes") === "notes");
 * ```
 */
export function titleStem(base: string): string {
  return NUMBERED_TITLE.exec(base)?.[1] ?? base;
}

/**
 * The next title of a lineage, as Python numbers it: the stem itself when
 * no session has it yet, else the stem with one more than the highest number
 * in use (at least `#2`).
 *
 * @param stem The {@linkcode titleStem}.
 * @param taken The titles equal to the stem or starting `"<stem> #"`.
 * @returns The next free title.
 *
 * @example
 * ```ts
 * import { nextLineageTitle } from "./titles.ts";
 * console.assert(nextLineageTitle("notes", []) === "notes");
 * console.assert(nextLineageTitle("notes", ["notes", "notes #3"]) === "notes #4");
 * ```
 */
export function nextLineageTitle(stem: string, taken: readonly unknown[]): string {
  if (taken.length === 0) return stem;
  let highest = 1n;
  for (const title of taken) {
    const match = typeof title === "string" ? TITLE_NUMBER.exec(title) : null;
    if (match) {
      const n = digitsValue(match[1]);
      if (n > highest) highest = n;
    }
  }
  return `${stem} #${highest + 1n}`;
}

/**
 * A lineage title that fits the limit: `title` (from {@linkcode nextLineageTitle}
 * of `stem`) when it has at most 100 code points, else the stem cut so that
 * the same number fits (`undefined` then: number the cut stem's lineage
 * anew). Python's `set_session_title` refuses a longer title, so a session
 * imported under one could never be renamed there, nor continued.
 *
 * @param stem The stem the title was numbered from.
 * @param title The numbered title.
 * @returns `undefined` when `title` fits, else the shorter stem to number.
 */
export function stemToFit(stem: string, title: string): string | undefined {
  const length = codePointLength(title);
  if (length <= MAX_TITLE_LENGTH) return undefined;
  const keep = codePointLength(stem) - (length - MAX_TITLE_LENGTH);
  return pythonStrip([...stem].slice(0, Math.max(keep, 1)).join(""));
}
