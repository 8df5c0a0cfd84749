/**
 * JSON output: one indented document for `--json`, or one compact line per
 * record for streams (JSON Lines).
 *
 * @module
 */
import type { Io } from "./io.ts";

/**
 * Prints one JSON document (two-space indent) and a newline.
 *
 * @param io Where to print.
 * @param value The value.
 *
 * @example
 * ```ts ignore
 * printJson(io, { sessions: 3 });
 * ```
 */
export function printJson(io: Io, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * One JSON Lines record: compact JSON (non-ASCII kept, as
 * `json.dumps(…, ensure_ascii=False)` writes it) and a newline.
 *
 * @param value The value.
 * @returns The line.
 *
 * @example
 * ```ts
 * import { jsonLine } from "./json.ts";
 * console.assert(jsonLine({ a: "记" }) === '{"a":"记"}\n');
 * ```
 */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
