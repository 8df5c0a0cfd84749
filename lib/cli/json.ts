/**
 * JSON output: one indented document for `--json`, or one compact line per
 * record for streams (JSON Lines).
 *
 * @module
 */
import type { Io } from "./io.ts";
import { jsonText } from "../render/json_line.ts";

/**
 * Prints one JSON document (two-space indent) and a newline; an integer
 * beyond 2^53 (a `bigint` of an exact read, as `show --json` gets from
 * `exportSession`) with every digit. A long array is written a thousand
 * rows at a time, the same text.
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
  if (!Array.isArray(value) || value.length <= ROWS_PER_WRITE) {
    io.stdout(`${jsonText(value, 2)}\n`);
    return;
  }
  // The same text, written a slice of rows at a time: `list --json --limit 1000000` made one
  // string past what a JavaScript string may hold.
  io.stdout("[\n");
  for (let at = 0; at < value.length; at += ROWS_PER_WRITE) {
    const rows = Array.from(value.slice(at, at + ROWS_PER_WRITE), arrayItemText);
    io.stdout(`${rows.join(",\n")}${at + ROWS_PER_WRITE < value.length ? "," : ""}\n`);
  }
  io.stdout("]\n");
}

/** Rows of a long array {@linkcode printJson} writes at once. */
const ROWS_PER_WRITE = 1000;

/** One item of an array as `JSON.stringify(array, null, 2)` writes it (`undefined` as `null`). */
function arrayItemText(item: unknown): string {
  return `  ${(jsonText(item, 2) ?? "null").replaceAll("\n", "\n  ")}`;
}

/**
 * A copy of `value` whose object keys are snake_case (`longestLockMs` →
 * `longest_lock_ms`), as every `--json` of the CLI writes them; arrays and
 * values are kept.
 *
 * @param value A JSON value of the library (camelCase keys).
 * @returns The same value with snake_case keys.
 *
 * @example
 * ```ts
 * import { snakeKeys } from "./json.ts";
 * const out = snakeKeys({ sqliteVersion: "3", checks: [{ fixable: true }] });
 * console.assert(JSON.stringify(out) === '{"sqlite_version":"3","checks":[{"fixable":true}]}');
 * ```
 */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
      snakeKeys(inner),
    ]),
  );
}
