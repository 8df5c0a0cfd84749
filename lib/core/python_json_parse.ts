/**
 * JSON read as Python's `json.loads` reads it: also `NaN`, `Infinity` and
 * `-Infinity`, which Python's `json.dumps` writes for non-finite floats by
 * default (a tool's arguments, a score in a multimodal part) and which
 * `JSON.parse` refuses.
 *
 * @module
 */

/** A non-finite token outside strings, or a string (skipped whole). */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?Infinity|NaN/gs;

/** The three tokens, by the text they stand for in the marked copy. */
const VALUES: Record<string, number> = {
  "NaN": NaN,
  "Infinity": Infinity,
  "-Infinity": -Infinity,
};

/** A `JSON.parse` reviver; the runtimes give it the value's source text as a third argument. */
// deno-lint-ignore no-explicit-any -- JSON.parse's own reviver type
export type Reviver = (this: any, key: string, value: any, ...context: any[]) => any;

/** A marker no string of `text` holds. */
function markerFor(text: string): string {
  for (;;) {
    const marker = `\u0001nonfinite-${Math.random().toString(36).slice(2)}:`;
    if (!text.includes(marker.slice(1))) return marker;
  }
}

/**
 * Parses JSON text as `JSON.parse` does, also reading the bare tokens
 * `NaN`, `Infinity` and `-Infinity` as those numbers, as Python's
 * `json.loads` does. Text that `JSON.parse` reads is read by it alone.
 *
 * @param text The JSON text.
 * @param reviver Called as `JSON.parse` calls it, after the tokens are read
 *   (a token's source text is then its marked string's).
 * @returns The value.
 * @throws {SyntaxError} When the text is not JSON, even so.
 *
 * @example
 * ```ts
 * import { parsePythonJson } from "./python_json_parse.ts";
 * const value = parsePythonJson('{"v": [NaN, -Infinity], "s": "NaN"}') as { v: number[]; s: string };
 * console.assert(Number.isNaN(value.v[0]) && value.v[1] === -Infinity && value.s === "NaN");
 * ```
 */
export function parsePythonJson(text: string, reviver?: Reviver): unknown {
  try {
    return JSON.parse(text, reviver);
  } catch (error) {
    if (!/NaN|Infinity/.test(text)) throw error;
    const marker = markerFor(text);
    const marked = text.replace(
      TOKENS,
      (token) => token.startsWith('"') ? token : JSON.stringify(marker + token),
    );
    const tokens: Reviver = function (key, value, ...context) {
      // A token is a value, never a name (`{NaN: 1}` is no more JSON to Python than to JS).
      if (key.startsWith(marker)) throw error;
      const read = typeof value === "string" && value.startsWith(marker)
        ? VALUES[value.slice(marker.length)] ?? value
        : value;
      return reviver === undefined ? read : reviver.call(this, key, read, ...context);
    };
    try {
      return JSON.parse(marked, tokens);
    } catch {
      // Not JSON for another reason: said as JSON.parse said it of the text given (the marked
      // copy's positions are not the text's).
      throw error;
    }
  }
}
