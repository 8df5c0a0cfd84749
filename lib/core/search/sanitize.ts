/**
 * Turning user text into a query FTS5 accepts, step for step as the Python
 * Hermes does it (its `_sanitize_fts5_query`).
 *
 * @module
 */
import { PYTHON_WHITESPACE, pythonStrip } from "../python_text.ts";
import { PY_BOUNDARY, PY_WORD } from "./_python_re.ts";
import { describeValue } from "../shown_value.ts";

/** A balanced `"…"` phrase (pairs form greedily from the left). */
const QUOTED_PHRASE = /"[^"]*"/g;
/** FTS5 syntax characters that never survive outside a quoted phrase. */
const SPECIAL = /[+{}()"^]/g;
/** A run of asterisks. */
const STAR_RUN = /\*+/g;
/** An asterisk at the start or right after whitespace (a prefix needs a term). */
const LEADING_STAR = new RegExp(`(^|[${PYTHON_WHITESPACE}])\\*`, "gu");
/** One boolean operator at the start. */
const LEADING_OPERATOR = new RegExp(`^(?:AND|OR|NOT)${PY_BOUNDARY}[${PYTHON_WHITESPACE}]*`, "iu");
/** A boolean operator as a whole word. */
const OPERATOR = /^(?:AND|OR|NOT)$/iu;
/** One whitespace character. */
const SPACE = new RegExp(`[${PYTHON_WHITESPACE}]`, "u");
/** Words joined by `.`, `_` or `-` (`chat-send`, `P2.2`, `sp_new`). */
const COMPOUND = new RegExp(
  `${PY_BOUNDARY}([${PY_WORD}]+(?:[._-][${PY_WORD}]+)+)${PY_BOUNDARY}`,
  "gu",
);

/**
 * Drops one `AND`/`OR`/`NOT` that ends a stripped text after whitespace,
 * with that whitespace: Python's `re.sub(r"\s+(AND|OR|NOT)\s*$", "", …)`,
 * written as a scan because that regex is quadratic on a long whitespace run.
 */
function withoutTrailingOperator(text: string): string {
  let wordStart = text.length;
  while (wordStart > 0 && !SPACE.test(text[wordStart - 1])) wordStart--;
  if (wordStart === 0 || !OPERATOR.test(text.slice(wordStart))) return text;
  let end = wordStart;
  while (end > 0 && SPACE.test(text[end - 1])) end--;
  return text.slice(0, end);
}

function placeholder(index: number): string {
  return `\u0000Q${index}\u0000`;
}

/**
 * Makes user text safe for an FTS5 `MATCH`, exactly as the Python Hermes
 * does:
 *
 * 1. balanced `"…"` phrases are set aside untouched;
 * 2. `+ { } ( ) " ^` become spaces;
 * 3. runs of `*` become one `*`, and a `*` that starts a word is dropped;
 * 4. one `AND`/`OR`/`NOT` (any case) is dropped at the start and one at the end;
 * 5. words joined by `.`, `_` or `-` are quoted (`chat-send` → `"chat-send"`);
 * 6. the phrases of step 1 are put back, and the result is trimmed.
 *
 * Word characters and whitespace are Unicode-aware, as in Python's `re`. The
 * result may be empty, and FTS5 may still reject it (`foo:bar` reads as a
 * column filter); `searchMessages` handles both.
 *
 * @param query What the user typed.
 * @returns The sanitized query; `""` when nothing searchable is left.
 * @throws {TypeError} When `query` is not a string, naming the value
 *   (`searchMessages` itself answers `[]` for such a query).
 *
 * @example Quoting compounds and dropping dangling operators
 * ```ts
 * import { sanitizeFts5Query } from "./sanitize.ts";
 * console.assert(sanitizeFts5Query("fix chat-send bug") === 'fix "chat-send" bug');
 * console.assert(sanitizeFts5Query("hello AND") === "hello");
 * console.assert(sanitizeFts5Query('"docker compose" (up') === '"docker compose"  up');
 * console.assert(sanitizeFts5Query("***") === "");
 * ```
 */
export function sanitizeFts5Query(query: string): string {
  if (typeof query !== "string") {
    throw new TypeError(
      `Cannot sanitize an FTS5 query: query must be a string: current value is ${
        describeValue(query)
      }`,
    );
  }
  const phrases: string[] = [];
  let text = query.replace(QUOTED_PHRASE, (phrase) => {
    phrases.push(phrase);
    return placeholder(phrases.length - 1);
  });
  text = text.replace(SPECIAL, " ");
  text = text.replace(STAR_RUN, "*").replace(LEADING_STAR, "$1");
  text = pythonStrip(text).replace(LEADING_OPERATOR, "");
  text = withoutTrailingOperator(pythonStrip(text));
  text = text.replace(COMPOUND, '"$1"');
  phrases.forEach((phrase, i) => {
    text = text.replaceAll(placeholder(i), () => phrase);
  });
  return pythonStrip(text);
}
