/**
 * Cleaning a session title as the Python Hermes does: the engine-neutral
 * half of titles (the uniqueness and numbering queries are each engine's).
 *
 * @module
 */
import { codePointLength, PYTHON_WHITESPACE, pythonStrip } from "./python_text.ts";
import { TitleError } from "./errors.ts";

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
 * @throws {TypeError} When `title` is neither a string nor empty.
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
      `Cannot sanitize title: title must be a string: current value is ${typeof title}`,
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
