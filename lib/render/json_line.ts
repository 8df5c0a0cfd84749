/**
 * One JSON Lines record, as the CLI's streams and the web's export write it.
 *
 * @module
 */

/** `JSON.rawJSON` (Deno, Node 22, Bun 1.2): a value `JSON.stringify` writes as the text given. */
const rawJson = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON;

/** Writes a `bigint` as its digits, as Python's `json.dumps` writes an int. */
function exactInteger(_key: string, value: unknown): unknown {
  if (typeof value !== "bigint") return value;
  if (rawJson === undefined) {
    throw new TypeError(
      `Cannot write the integer ${value} exactly: this runtime has no JSON.rawJSON`,
    );
  }
  return rawJson(value.toString());
}

/**
 * One JSON Lines record: compact JSON (non-ASCII kept, as
 * `json.dumps(…, ensure_ascii=False)` writes it) and a newline. A `bigint`
 * (an integer beyond 2^53, as an export reads it) is written as its
 * digits; a record without one is written by `JSON.stringify` alone.
 *
 * @param value The value.
 * @returns The line.
 *
 * @example
 * ```ts
 * import { jsonLine } from "./json_line.ts";
 * console.assert(jsonLine({ a: "记" }) === '{"a":"记"}\n');
 * ```
 */
export function jsonLine(value: unknown): string {
  return `${jsonText(value)}\n`;
}

/**
 * `JSON.stringify(value, null, indent)`, but a `bigint` (an integer beyond
 * 2^53, as an export reads it) is written as its digits: the text of one
 * `--json` document. A value without one is written by `JSON.stringify`
 * alone.
 *
 * @param value The value.
 * @param indent Spaces of indent; none (compact) by default.
 * @returns The JSON text, without a newline.
 *
 * @example
 * ```ts
 * import { jsonText } from "./json_line.ts";
 * console.assert(jsonText({ n: 2n ** 60n + 1n }) === '{"n":1152921504606846977}');
 * ```
 */
export function jsonText(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent);
  } catch (error) {
    // JSON.stringify refuses a bigint (a TypeError); write it again, the bigints as digits.
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, exactInteger, indent);
  }
}
