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
import { pythonJson } from "./python_json.ts";
import type { JsonValue, MessageContent } from "./types.ts";

/** The serializer of every JSON text we store (Python's `json.dumps` with its defaults). */
export { pythonJson };

/** The prefix that marks JSON-encoded multimodal content. */
export const MULTIMODAL_PREFIX = "\u0000json:";

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
