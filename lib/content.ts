/**
 * Message content and JSON columns as stored in the file.
 *
 * Multimodal content (a list of parts, or one part object) is stored as the
 * TEXT `"\u0000json:" + JSON`, as the Python Hermes does; plain strings are
 * stored as they are.
 *
 * Every JSON text we write (multimodal content, `model_config`, `tool_calls`,
 * `reasoning_details`, `codex_reasoning_items`, `codex_message_items`) is
 * produced by {@linkcode pythonJson}, byte for byte what Python's
 * `json.dumps(value)` writes: `", "` and `": "` separators and `\uXXXX`
 * escapes for everything outside printable ASCII. A file we write therefore
 * looks like one Python writes, and the FTS index (which indexes the raw
 * `tool_calls` text) tokenizes our rows exactly as it tokenizes Python's.
 * Readers accept both Python's form and compact `JSON.stringify` output.
 *
 * @module
 */
import type { JsonValue, MessageContent } from "./types.ts";

/** The prefix that marks JSON-encoded multimodal content. */
export const MULTIMODAL_PREFIX = "\u0000json:";

/** Characters a JSON string must escape, or that Python's `ensure_ascii` escapes. */
// deno-lint-ignore no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\u007f-\uffff]/;
/** What `JSON.stringify` leaves raw but Python's `ensure_ascii` escapes (per UTF-16 unit). */
const NON_ASCII = /[\u007f-\uffff]/g;

function escapeUnit(unit: string): string {
  return "\\u" + unit.charCodeAt(0).toString(16).padStart(4, "0");
}

function pythonString(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  // JSON.stringify already writes \" \\ \b \f \n \r \t and \u00XX (lower case),
  // like Python; only DEL and non-ASCII remain to escape.
  return JSON.stringify(text).replace(NON_ASCII, escapeUnit);
}

/** Python's `repr(float)` (also what `json.dumps` writes for a float). */
function pythonNumber(value: number): string {
  if (Number.isInteger(value)) {
    // A JS integer may have been a Python int: write every digit, no exponent.
    return Math.abs(value) < 1e21 ? String(value === 0 ? 0 : value) : BigInt(value).toString();
  }
  const [mantissa, exponentText] = value.toExponential().split("e");
  const exponent = Number(exponentText);
  // Python switches to exponent notation below 1e-4 and from 1e16 up.
  if (exponent >= -4 && exponent < 16) return String(value);
  const sign = exponent < 0 ? "-" : "+";
  return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

function pythonJsonOf(value: unknown, key: string, stack: object[]): string | undefined {
  if (value !== null && typeof value === "object" && "toJSON" in value) {
    const toJSON = (value as { toJSON: unknown }).toJSON;
    if (typeof toJSON === "function") value = toJSON.call(value, key);
  }
  switch (typeof value) {
    case "string":
      return pythonString(value);
    case "number":
      return Number.isFinite(value) ? pythonNumber(value) : "null";
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return "null";
  const object = value as object;
  if (stack.includes(object)) {
    throw new TypeError("Cannot serialize JSON: the value contains a circular reference");
  }
  stack.push(object);
  let text: string;
  if (Array.isArray(object)) {
    const items = object.map((item, i) => pythonJsonOf(item, String(i), stack) ?? "null");
    text = `[${items.join(", ")}]`;
  } else {
    const entries: string[] = [];
    for (const [name, item] of Object.entries(object)) {
      const encoded = pythonJsonOf(item, name, stack);
      if (encoded !== undefined) entries.push(`${pythonString(name)}: ${encoded}`);
    }
    text = `{${entries.join(", ")}}`;
  }
  stack.pop();
  return text;
}

/**
 * Serializes a value exactly as Python's `json.dumps(value)` does with its
 * defaults: `", "` and `": "` separators, `\uXXXX` escapes (lower-case hex,
 * surrogate pairs for astral characters) for DEL and everything non-ASCII,
 * and floats in Python's `repr` form (`1e-05`, `1e+16`). Integers are written
 * with every digit. Otherwise it follows `JSON.stringify`: `toJSON()` is
 * honoured, `undefined`/functions/symbols are skipped in objects and become
 * `null` in arrays, and non-finite numbers become `null` (Python would write
 * `NaN`, which no strict JSON reader accepts). A `bigint` is written as its
 * digits.
 *
 * @param value The value to serialize.
 * @returns The JSON text (`"null"` when the value itself is `undefined`).
 * @throws {TypeError} When the value contains a circular reference.
 *
 * @example Python's separators and escapes
 * ```ts
 * import { pythonJson } from "./content.ts";
 * const text = pythonJson([{ type: "text", text: "狗 🐕" }, { ratio: 0.00001 }]);
 * console.assert(
 *   text === '[{"type": "text", "text": "\\u72d7 \\ud83d\\udc15"}, {"ratio": 1e-05}]',
 * );
 * ```
 */
export function pythonJson(value: unknown): string {
  return pythonJsonOf(value, "", []) ?? "null";
}

/**
 * The stored form of message content: a string as it is; parts (a list or
 * one object) as `"\u0000json:"` followed by {@linkcode pythonJson}.
 *
 * @param content Text, parts, or nothing.
 * @returns The TEXT to store, or `null`.
 * @throws {TypeError} When the parts contain a circular reference.
 *
 * @example Encoding multimodal parts
 * ```ts
 * import { encodeContent, MULTIMODAL_PREFIX } from "./content.ts";
 * const stored = encodeContent([{ type: "text", text: "hi" }]);
 * console.assert(stored === MULTIMODAL_PREFIX + '[{"type": "text", "text": "hi"}]');
 * console.assert(encodeContent("plain") === "plain");
 * ```
 */
export function encodeContent(content: MessageContent | null | undefined): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === "string") return content;
  return MULTIMODAL_PREFIX + pythonJson(content);
}

/**
 * Message content as stored, back in its original shape. A prefixed value
 * whose JSON is bad comes back as the raw string, prefix included (as
 * Python does).
 *
 * @param stored The stored TEXT.
 * @returns Text or parts, or `null`.
 *
 * @example Decoding what Python wrote
 * ```ts
 * import { decodeContent } from "./content.ts";
 * const parts = decodeContent('\u0000json:[{"type": "text", "text": "\\u72d7"}]');
 * console.assert(JSON.stringify(parts) === '[{"type":"text","text":"狗"}]');
 * console.assert(decodeContent("\u0000json:[oops") === "\u0000json:[oops");
 * ```
 */
export function decodeContent(stored: unknown): MessageContent | null {
  if (stored === null || stored === undefined) return null;
  if (typeof stored !== "string") return String(stored);
  if (!stored.startsWith(MULTIMODAL_PREFIX)) return stored;
  try {
    return JSON.parse(stored.slice(MULTIMODAL_PREFIX.length)) as MessageContent;
  } catch {
    return stored;
  }
}

/**
 * True for the values Python treats as false: `null`, `undefined`, `false`,
 * `0`, `""`, an empty array and an empty plain object.
 *
 * @param value Any value.
 * @returns Whether Python's `bool(value)` would be `False`.
 *
 * @example
 * ```ts
 * import { isFalsyLikePython } from "./content.ts";
 * console.assert(isFalsyLikePython([]) && isFalsyLikePython({}) && !isFalsyLikePython("0"));
 * ```
 */
export function isFalsyLikePython(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === "") {
    return true;
  }
  if (typeof value === "bigint") return value === 0n;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.keys(value as object).length === 0;
  }
  return false;
}

/**
 * The stored form of a JSON column: {@linkcode pythonJson} text when the
 * value is truthy in Python's sense, else `null` (an empty list, object or
 * string is stored as NULL).
 *
 * @param value The value.
 * @returns JSON text or `null`.
 * @throws {TypeError} When the value contains a circular reference.
 *
 * @example Empty values are stored as NULL
 * ```ts
 * import { encodeJson } from "./content.ts";
 * console.assert(encodeJson([]) === null);
 * console.assert(encodeJson({ effort: "high" }) === '{"effort": "high"}');
 * ```
 */
export function encodeJson(value: unknown): string | null {
  return isFalsyLikePython(value) ? null : pythonJson(value);
}

/**
 * A JSON column parsed; bad JSON degrades to `fallback` instead of throwing.
 *
 * @param stored The stored TEXT.
 * @param fallback What bad JSON becomes.
 * @returns The value, or `null` for NULL (and for an empty string).
 *
 * @example
 * ```ts
 * import { decodeJson } from "./content.ts";
 * console.assert(JSON.stringify(decodeJson('{"a": [1, 2]}', null)) === '{"a":[1,2]}');
 * console.assert(JSON.stringify(decodeJson("not json", [])) === "[]");
 * ```
 */
export function decodeJson(stored: unknown, fallback: JsonValue | null): JsonValue | null {
  if (stored === null || stored === undefined || stored === "") return null;
  if (typeof stored !== "string") return stored as JsonValue;
  try {
    return JSON.parse(stored) as JsonValue;
  } catch {
    return fallback;
  }
}

/**
 * The text of message content: a string as is; for parts, their `text`
 * fields joined by spaces (what search context and previews show).
 *
 * @param content Decoded content.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { contentText } from "./content.ts";
 * const text = contentText([{ type: "text", text: "a" }, { type: "image_url" }, { text: "b" }]);
 * console.assert(text === "a b");
 * ```
 */
export function contentText(content: MessageContent | null): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  const parts = Array.isArray(content) ? content : [content];
  return parts
    .map((part) =>
      part && typeof part === "object" && !Array.isArray(part) && typeof part.text === "string"
        ? part.text
        : ""
    )
    .filter((text) => text !== "")
    .join(" ");
}
