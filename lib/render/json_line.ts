/**
 * One JSON Lines record, as the CLI's streams and the web's export write it.
 *
 * @module
 */

/**
 * One JSON Lines record: compact JSON (non-ASCII kept, as
 * `json.dumps(…, ensure_ascii=False)` writes it) and a newline.
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
  return `${JSON.stringify(value)}\n`;
}
