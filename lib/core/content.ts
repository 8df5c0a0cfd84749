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
import { parsePythonJson } from "./python_json_parse.ts";
import { codePointLength, codePointSlice, pythonStrip } from "./python_text.ts";
import type { JsonValue, MessageContent } from "./types.ts";
import { blobAsText } from "./blob_text.ts";

/** The serializer of every JSON text we store (Python's `json.dumps` with its defaults). */
export { pythonJson };

/** The prefix that marks JSON-encoded multimodal content. */
export const MULTIMODAL_PREFIX = "\u0000json:";

/** How stored JSON is written: as Python's `json.dumps` defaults, non-finite numbers included. */
const STORED_JSON = { allowNan: true } as const;

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
  return MULTIMODAL_PREFIX + pythonJson(content, STORED_JSON);
}

/**
 * Message content as stored, back in its original shape. A prefixed value
 * whose JSON is bad comes back as the raw string, prefix included (as
 * Python does). A BLOB (Python's sqlite3 stores `bytes` so) comes back as
 * its bytes read as UTF-8, each byte that is not valid UTF-8 as U+FFFD:
 * text, never parts (the prefix marks what Python wrote as TEXT).
 *
 * @param stored The stored TEXT (or BLOB).
 * @returns Text or parts, or `null`.
 *
 * @example Decoding what Python wrote
 * ```ts
 * import { decodeContent } from "./content.ts";
 * const parts = decodeContent('\u0000json:[{"type": "text", "text": "\\u72d7"}]');
 * console.assert(JSON.stringify(parts) === '[{"type":"text","text":"狗"}]');
 * console.assert(decodeContent("\u0000json:[oops") === "\u0000json:[oops");
 * console.assert(decodeContent(new Uint8Array([0x68, 0x69, 0xff])) === "hi\ufffd");
 * ```
 */
export function decodeContent(stored: unknown): MessageContent | null {
  if (stored === null || stored === undefined) return null;
  if (stored instanceof Uint8Array) return blobAsText(stored);
  if (typeof stored !== "string") return String(stored);
  if (!stored.startsWith(MULTIMODAL_PREFIX)) return stored;
  try {
    return parsePythonJson(stored.slice(MULTIMODAL_PREFIX.length)) as MessageContent;
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
 * string is stored as NULL). A non-finite number is written `NaN`,
 * `Infinity` or `-Infinity`, as Python's `json.dumps` writes it (and both
 * read it back: {@linkcode decodeJson}).
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
  return isFalsyLikePython(value) ? null : pythonJson(value, STORED_JSON);
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
    return parsePythonJson(stored) as JsonValue;
  } catch {
    return fallback;
  }
}

/**
 * How {@linkcode contentText} shows multimodal content. The two differ on
 * purpose: a search context must read exactly as the Python Hermes renders
 * it (agents compare the two), while a transcript is read by a person, who
 * must see that an image or an audio part was there.
 */
export interface ContentTextOptions {
  /**
   * `"search"`: as Python's search context: the text of the `type: "text"`
   * parts joined by spaces and trimmed, `[multimodal content]` when none has
   * text, `""` for a value that is neither text nor a list of parts.
   * `"transcript"`: every part on its own line: a text part's text, a
   * string part as it is, an image as `[image_url: URL]` (the URL cut at 60
   * characters), any other part as `[its type]`.
   *
   * @default {"search"}
   */
  readonly parts?: "search" | "transcript";
}

/**
 * Thrown by {@linkcode contentText} for a text part whose text is truthy but
 * not a string, where Python's `" ".join` raises (its search then shows no
 * context for that hit).
 */
export class NotTextError extends TypeError {
  /**
   * Creates the error.
   *
   * @param text The part's text.
   */
  constructor(text: unknown) {
    super(`Cannot read a text part: its text must be a string: current value is ${typeof text}`);
    this.name = "NotTextError";
  }
}

/** Python's search rendering of parts (see {@linkcode ContentTextOptions}). */
function searchText(content: MessageContent): string {
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content) {
    if (part === null || typeof part !== "object" || Array.isArray(part)) continue;
    if (part.type !== "text") continue;
    const text = part.text;
    if (isFalsyLikePython(text)) continue;
    if (typeof text !== "string") throw new NotTextError(text);
    texts.push(text);
  }
  return pythonStrip(texts.join(" ")) || "[multimodal content]";
}

/** The longest image URL a transcript shows, in code points (with the ellipsis). */
const PART_URL_LENGTH = 60;

/**
 * The type of a part that is not text (`"part"` when it names none) and its
 * image URL (`image_url` as a string or as `{ url }`), for a transcript in
 * text or in HTML.
 *
 * @param part One multimodal part.
 * @returns Its type and URL (`undefined` when it has none).
 */
export function partKind(
  part: { readonly [key: string]: JsonValue },
): { type: string; url: string | undefined } {
  const type = typeof part.type === "string" ? part.type : "part";
  const image = part.image_url;
  const url = typeof image === "string"
    ? image
    : image && typeof image === "object" && !Array.isArray(image) && typeof image.url === "string"
    ? image.url
    : undefined;
  return { type, url };
}

/** One part as a transcript shows it (see {@linkcode ContentTextOptions}). */
function partText(part: JsonValue): string {
  if (typeof part === "string") return part;
  if (part === null || typeof part !== "object" || Array.isArray(part)) return JSON.stringify(part);
  if (typeof part.text === "string") return part.text;
  const { type, url } = partKind(part);
  if (url === undefined) return `[${type}]`;
  const shown = codePointLength(url) <= PART_URL_LENGTH
    ? url
    : `${codePointSlice(url, PART_URL_LENGTH - 1)}…`;
  return `[${type}: ${shown}]`;
}

/**
 * Message content as text: a string as it is; multimodal parts as the
 * chosen rendering shows them (every place that turns content into text
 * calls this: search contexts of both engines, the CLI transcript and the
 * Markdown export).
 *
 * @param content Decoded content ({@linkcode decodeContent}).
 * @param options Which rendering.
 * @returns The text; `""` for no content.
 * @throws {NotTextError} In `"search"` rendering, for a text part whose text
 *   is truthy and not a string (where Python fails).
 *
 * @example The two renderings
 * ```ts
 * import { contentText } from "./content.ts";
 * import type { MessageContent } from "./types.ts";
 * const parts: MessageContent = [{ type: "text", text: "a" }, { type: "image_url", image_url: "x.png" }];
 * console.assert(contentText(parts) === "a");
 * console.assert(contentText(parts, { parts: "transcript" }) === "a\n[image_url: x.png]");
 * console.assert(contentText("plain") === "plain");
 * ```
 */
export function contentText(
  content: MessageContent | null | undefined,
  options: ContentTextOptions = {},
): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (options.parts === "transcript") {
    return (Array.isArray(content) ? content : [content]).map(partText).join("\n");
  }
  return searchText(content);
}

/**
 * What a search context entry shows for a stored content value, as Python
 * renders it: {@linkcode contentText} of the decoded value (a prefixed value
 * whose JSON is bad shown as stored), a BLOB as {@linkcode decodeContent}
 * reads it (its text, not lost), `""` for another stored value that is not
 * text.
 *
 * @param stored The stored `content` column.
 * @param length The most code points shown.
 * @returns The text, at most `length` code points.
 * @throws {NotTextError} Where Python's rendering fails.
 *
 * @example
 * ```ts
 * import { contextText } from "./content.ts";
 * console.assert(contextText(new Uint8Array([0x61, 0x62, 0x63]), 2) === "ab");
 * console.assert(contextText(7, 10) === "");
 * ```
 */
export function contextText(stored: unknown, length: number): string {
  if (typeof stored !== "string" && !(stored instanceof Uint8Array)) return "";
  return codePointSlice(contentText(decodeContent(stored)), length);
}
