/**
 * Message content and JSON columns as stored in the file.
 *
 * Multimodal content (a list of parts, or one part object) is stored as the
 * TEXT `"\u0000json:" + JSON`, as the Python Hermes does; plain strings are
 * stored as they are.
 *
 * @module
 */
import type { JsonValue, MessageContent } from "./types.ts";

/** The prefix that marks JSON-encoded multimodal content. */
export const MULTIMODAL_PREFIX = "\u0000json:";

/**
 * The stored form of message content.
 *
 * @param content Text, parts, or nothing.
 * @returns The TEXT to store, or `null`.
 */
export function encodeContent(content: MessageContent | null | undefined): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === "string") return content;
  return MULTIMODAL_PREFIX + JSON.stringify(content);
}

/**
 * Message content as stored, back in its original shape. A prefixed value
 * whose JSON is bad comes back as the raw string.
 *
 * @param stored The stored TEXT.
 * @returns Text or parts, or `null`.
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
 * The stored form of a JSON column: JSON text when the value is non-empty,
 * else `null` (an empty list, object or string is stored as NULL).
 *
 * @param value The value.
 * @returns JSON text or `null`.
 */
export function encodeJson(value: unknown): string | null {
  if (value === undefined || value === null || value === "" || value === false || value === 0) {
    return null;
  }
  if (Array.isArray(value) && value.length === 0) return null;
  if (typeof value === "object" && Object.keys(value as object).length === 0) return null;
  return JSON.stringify(value);
}

/**
 * A JSON column parsed; bad JSON degrades to `fallback` instead of throwing.
 *
 * @param stored The stored TEXT.
 * @param fallback What bad JSON becomes.
 * @returns The value, or `null` for NULL.
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
