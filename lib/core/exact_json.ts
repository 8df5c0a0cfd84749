/**
 * JSON read with its integers exact: `JSON.parse` rounds an integer beyond
 * 2^53 to the nearest number (two message ids `9007199254740993` and
 * `9007199254740992` become one). JSON itself has no limit on digits, and
 * Python's `json` reads them exactly.
 *
 * @module
 */
import { parsePythonJson, type Reviver } from "./python_json_parse.ts";
import { PythonFloat } from "./python_json.ts";

/**
 * A number of sixteen digits or more where JSON puts a value (after `:`,
 * `,` or `[`, with or without Python's spaces): the shortest integer that
 * may lie beyond 2^53 - 1. Anchored on those characters, the scan of a line
 * costs half of a plain `\d{16}`'s.
 */
const LONG_NUMBER = /[:,[][ \t\r\n]*-?[0-9]{16}/;

/**
 * Whether `value` is a number standing for an integer beyond ±(2^53 - 1),
 * which may have lost digits on its way to JavaScript (read it again
 * exactly). A fraction is not one: it is the number it is.
 *
 * @param value A value as a driver or `JSON.parse` gave it.
 * @returns `true` for such an integer.
 *
 * @example
 * ```ts
 * import { isRoundedInteger } from "./exact_json.ts";
 * console.assert(isRoundedInteger(2 ** 60));
 * console.assert(!isRoundedInteger(42) && !isRoundedInteger(0.5) && !isRoundedInteger("9"));
 * ```
 */
export function isRoundedInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value);
}

/** An integer's JSON text: no fraction, no exponent. */
const INTEGER_TEXT = /^-?\d+$/;

/** The context `JSON.parse` gives a reviver (Deno, Node 22, Bun 1.2): the value's source text. */
type ReviverContext = { source?: string } | undefined;

function exactInteger(_key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value !== "number" || Number.isSafeInteger(value)) return value;
  const source = context?.source;
  if (source === undefined) {
    if (!Number.isInteger(value)) return value;
    throw new SyntaxError(
      `Cannot read the integer near ${value} exactly: this runtime gives JSON.parse no source text`,
    );
  }
  return INTEGER_TEXT.test(source) ? BigInt(source) : value;
}

/**
 * Whether JSON text may hold an integer `JSON.parse` rounds: a number of
 * sixteen digits or more. `false` means `JSON.parse` reads it exactly.
 *
 * @param text JSON text.
 * @returns `true` when {@linkcode parseJsonExact} may read it otherwise than `JSON.parse`.
 */
export function mayHoldLongInteger(text: string): boolean {
  return LONG_NUMBER.test(text);
}

/**
 * Parses JSON text as Python's `json.loads` does (`NaN` and `Infinity`
 * included, `python_json_parse.ts`): an integer beyond ±(2^53 - 1) becomes
 * a `bigint` with its exact value. Text without a
 * number of sixteen digits or more (nearly every line) is parsed by
 * `JSON.parse` alone; only the rest pays for the reviver. On a 100,000
 * message export (1,000 lines, 30 MB) the check adds about half of what
 * `JSON.parse` takes (24 ms to 52 ms), under 0.3% of the import.
 *
 * @param text The JSON text.
 * @returns The value.
 * @throws {SyntaxError} For text that is not JSON.
 *
 * @example
 * ```ts
 * import { parseJsonExact } from "./exact_json.ts";
 * const { id } = parseJsonExact('{"id": 9007199254740993}') as { id: bigint };
 * console.assert(id === BigInt("9007199254740993"));
 * ```
 */
export function parseJsonExact(text: string): unknown {
  return parsePythonJson(text, mayHoldLongInteger(text) ? exactInteger as Reviver : undefined);
}

/**
 * A float written with a fraction of zeros or an exponent (`1.0`, `1e+16`):
 * one JavaScript reads as a whole number. Strings may hold such text too,
 * which only costs the reviver.
 */
const WHOLE_FLOAT = /[0-9]\.0+(?![0-9])|[0-9][eE][+-]?[0-9]/;

/** The columns of a message whose JSON an import writes back as Python wrote it. */
const JSON_COLUMNS = new Set(["content", "tool_calls"]);

/** `value` with every {@linkcode PythonFloat} in it its number again (in place). */
function plainNumbers(value: unknown): unknown {
  if (value instanceof PythonFloat) return value.value;
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) object[key] = plainNumbers(object[key]);
  }
  return value;
}

/**
 * Parses one line of an export as {@linkcode parseJsonExact} does, and
 * keeps, inside each message's `content` and `tool_calls`, a float Python
 * wrote whose value is whole (`1.0`, `-0.0`, `1e+16`) as a
 * {@linkcode PythonFloat}, which the import writes back as Python wrote it:
 * read as numbers, `[{"n": 1.0}]` was stored `[{"n": 1}]`, an int to
 * Python. Every other number of the record is a number.
 *
 * @param text One line of an export.
 * @returns The record.
 * @throws {SyntaxError} For text that is not JSON.
 *
 * @example
 * ```ts
 * import { parseExportLine } from "./exact_json.ts";
 * import { pythonJson } from "./python_json.ts";
 * const record = parseExportLine('{"started_at": 1.0, "messages": [{"tool_calls": [{"n": 1.0}]}]}');
 * const { started_at, messages } = record as { started_at: number; messages: { tool_calls: unknown }[] };
 * console.assert(started_at === 1 && pythonJson(messages[0].tool_calls) === '[{"n": 1.0}]');
 * ```
 */
export function parseExportLine(text: string): unknown {
  if (!WHOLE_FLOAT.test(text)) return parseJsonExact(text);
  const record = parsePythonJson(text, function (key, value, context?: ReviverContext) {
    const source = context?.source;
    if (
      typeof value === "number" && Number.isInteger(value) && source !== undefined &&
      /[.eE]/.test(source)
    ) {
      return new PythonFloat(value);
    }
    return exactInteger(key, value, context);
  } as Reviver);
  if (record === null || typeof record !== "object" || Array.isArray(record)) {
    return plainNumbers(record);
  }
  const row = record as Record<string, unknown>;
  for (const key of Object.keys(row)) {
    if (key !== "messages" || !Array.isArray(row.messages)) row[key] = plainNumbers(row[key]);
  }
  const messages = Array.isArray(row.messages) ? row.messages : [];
  for (const message of messages) {
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      plainNumbers(message);
      continue;
    }
    const fields = message as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      // A column that is a number itself (no JSON of Python's): that number.
      if (!JSON_COLUMNS.has(key) || fields[key] instanceof PythonFloat) {
        fields[key] = plainNumbers(fields[key]);
      }
    }
  }
  return record;
}

/**
 * The deepest nesting of JSON text that an export carries as a value. The
 * runtimes' JSON readers and writers recurse and give up at different
 * depths (a reviver near 3,000 levels, `JSON.stringify` near 5,000 on
 * Node; Python's `json` near 1,000), so deeper text is carried as text.
 */
export const MAX_VALUE_DEPTH = 512;

/**
 * Whether JSON text nests arrays and objects deeper than `limit` (brackets
 * inside strings do not count). Text shorter than twice the limit cannot,
 * and is not scanned.
 *
 * @param text JSON text (or any text: only brackets outside strings count).
 * @param limit The deepest nesting allowed.
 * @returns `true` when some value lies deeper.
 *
 * @example
 * ```ts
 * import { nestedDeeperThan } from "./exact_json.ts";
 * console.assert(nestedDeeperThan("[[[]]]", 2) && !nestedDeeperThan('["[[["]', 2));
 * ```
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++; // a backslash escapes the next character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) {
      if (++depth > limit) return true;
    } else if (char === 0x5d || char === 0x7d) depth--;
  }
  return false;
}
