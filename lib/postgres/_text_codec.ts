/**
 * The text codec of the PostgreSQL engine: PostgreSQL text cannot hold
 * U+0000, SQLite's can (multimodal content starts with it). Every string
 * bound is encoded, every string read is decoded: NUL → U+E000 "0",
 * U+E000 → U+E000 U+E000. Text without either character (nearly all of
 * it) passes unchanged.
 *
 * @module
 */
const ESCAPE = "\uE000";
// deno-lint-ignore no-control-regex -- NUL is the character this codec exists for
const NEEDS_ENCODING = /[\u0000\uE000]/;

/** Encodes `text` for a PostgreSQL text column. */
export function encodeText(text: string): string {
  if (!NEEDS_ENCODING.test(text)) return text;
  return text.replaceAll(ESCAPE, ESCAPE + ESCAPE).replaceAll("\u0000", ESCAPE + "0");
}

/** Decodes what {@linkcode encodeText} wrote. */
export function decodeText(text: string): string {
  if (!text.includes(ESCAPE)) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === ESCAPE && i + 1 < text.length) {
      out += text[i + 1] === "0" ? "\u0000" : text[i + 1];
      i++;
    } else {
      out += ch;
    }
  }
  return out;
}

/** A `\u0000` escape of JSON text (after an even run of backslashes: not itself escaped). */
const ESCAPED_NUL = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * `value` as JSON text for a `$n::text::json` (or `jsonb`) parameter whose
 * strings the server compares with text columns: PostgreSQL's JSON refuses
 * the `\u0000` escape, so each NUL is written raw and the text codec then
 * encodes it (and every U+E000) as it encodes a column's text; strings are
 * made well formed, as a text column makes them.
 *
 * @param value An array or object of JSON values.
 * @returns The JSON text, to be bound as a string (encoded by the client).
 */
export function jsonParam(value: unknown): string {
  const json = JSON.stringify(
    value,
    (_key, v: unknown) => typeof v === "string" ? v.toWellFormed() : v,
  );
  return json.replace(ESCAPED_NUL, "$1\u0000");
}
