/**
 * JSON text as Python's `json.dumps` writes it: `", "` and `": "`
 * separators and floats as Python prints them (`1e-05`). Two forms are in
 * use: the default `ensure_ascii=True` one for what we store in the file
 * (multimodal content and the JSON columns), and `ensure_ascii=False` with
 * `NaN`/`Infinity` allowed for trajectory samples.
 *
 * @module
 */
import { pythonFloatRepr } from "./python_float.ts";

/** Options of `pythonJson`. */
export interface PythonJsonOptions {
  /**
   * Escape DEL and everything non-ASCII as `\uXXXX` (lower-case hex,
   * surrogate pairs for astral characters), as Python's `ensure_ascii=True`
   * does. When false, such text is kept as it is.
   * @default {true}
   */
  ensureAscii?: boolean;
  /**
   * Write non-finite numbers as Python does (`NaN`, `Infinity`,
   * `-Infinity`). When false they become `null`, as with `JSON.stringify`
   * (no strict JSON reader accepts Python's form).
   * @default {false}
   */
  allowNan?: boolean;
}

/** Characters a JSON string must escape, or that Python's `ensure_ascii` escapes. */
// deno-lint-ignore no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\u007f-\uffff]/;
/** What `JSON.stringify` leaves raw but Python's `ensure_ascii` escapes (per UTF-16 unit). */
const NON_ASCII = /[\u007f-\uffff]/g;

function escapeUnit(unit: string): string {
  return "\\u" + unit.charCodeAt(0).toString(16).padStart(4, "0");
}

function asciiString(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  // JSON.stringify already writes \" \\ \b \f \n \r \t and \u00XX (lower case),
  // like Python; only DEL and non-ASCII remain to escape.
  return JSON.stringify(text).replace(NON_ASCII, escapeUnit);
}

function number(value: number, allowNan: boolean): string {
  if (!Number.isFinite(value)) {
    if (!allowNan) return "null";
    if (Number.isNaN(value)) return "NaN";
    return value > 0 ? "Infinity" : "-Infinity";
  }
  if (Number.isInteger(value)) {
    // A JS integer may have been a Python int: write every digit, no exponent.
    return Math.abs(value) < 1e21 ? String(value === 0 ? 0 : value) : BigInt(value).toString();
  }
  return pythonFloatRepr(value);
}

interface Writer {
  string(text: string): string;
  allowNan: boolean;
  stack: object[];
}

/**
 * A float Python wrote whose value is a whole number (`1.0`, `-0.0`,
 * `1e+16`): JavaScript reads it as the integer, which would be written
 * back as one (`1`). Read so from an export line, it is written back as
 * Python writes the float ({@linkcode pythonJson}); elsewhere (`toJSON`) it
 * is the number.
 */
export class PythonFloat {
  /** The number. */
  readonly value: number;
  /** @param value The number. */
  constructor(value: number) {
    this.value = value;
  }
  /** @returns The number, for a writer that knows no Python floats. */
  toJSON(): number {
    return this.value;
  }
}

function dump(value: unknown, key: string, w: Writer): string | undefined {
  if (value instanceof PythonFloat) return pythonFloatRepr(value.value);
  if (value !== null && typeof value === "object" && "toJSON" in value) {
    const toJSON = (value as { toJSON: unknown }).toJSON;
    if (typeof toJSON === "function") value = toJSON.call(value, key);
  }
  switch (typeof value) {
    case "string":
      return w.string(value);
    case "number":
      return number(value, w.allowNan);
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
  if (w.stack.includes(object)) {
    throw new TypeError("Cannot serialize JSON: the value contains a circular reference");
  }
  w.stack.push(object);
  let text: string;
  if (Array.isArray(object)) {
    // By index, not map(): map() skips an array's holes (`[a, , b]`), which are null in JSON.
    const items: string[] = [];
    for (let i = 0; i < object.length; i++) items.push(dump(object[i], String(i), w) ?? "null");
    text = `[${items.join(", ")}]`;
  } else {
    const entries: string[] = [];
    for (const [name, item] of Object.entries(object)) {
      const encoded = dump(item, name, w);
      if (encoded !== undefined) entries.push(`${w.string(name)}: ${encoded}`);
    }
    text = `{${entries.join(", ")}}`;
  }
  w.stack.pop();
  return text;
}

/**
 * Serializes a value as Python's `json.dumps(value)` does: `", "` and
 * `": "` separators, floats in Python's `repr` form (`1e-05`, `1e+16`),
 * and, by default, `\uXXXX` escapes for DEL and everything non-ASCII.
 * Integers are written with every digit. Otherwise it follows
 * `JSON.stringify`: `toJSON()` is honoured, `undefined`/functions/symbols
 * are skipped in objects and become `null` in arrays (so do an array's holes), and non-finite numbers
 * become `null` unless `allowNan` is set. A `bigint` is written as its
 * digits.
 *
 * @param value The value to serialize.
 * @param options `ensureAscii` (Python's `ensure_ascii`) and `allowNan`.
 * @returns The JSON text (`"null"` when the value itself is `undefined`).
 * @throws {TypeError} When the value contains a circular reference.
 *
 * @example Python's separators and escapes
 * ```ts
 * import { pythonJson } from "./python_json.ts";
 * const text = pythonJson([{ type: "text", text: "狗 🐕" }, { ratio: 0.00001 }]);
 * console.assert(
 *   text === '[{"type": "text", "text": "\\u72d7 \\ud83d\\udc15"}, {"ratio": 1e-05}]',
 * );
 * ```
 *
 * @example ensure_ascii=False, NaN allowed
 * ```ts
 * import { pythonJson } from "./python_json.ts";
 * const text = pythonJson({ a: [1, 0.5, NaN], b: "é" }, { ensureAscii: false, allowNan: true });
 * console.assert(text === '{"a": [1, 0.5, NaN], "b": "é"}');
 * ```
 */
export function pythonJson(value: unknown, options: PythonJsonOptions = {}): string {
  const writer: Writer = {
    string: options.ensureAscii === false ? (text) => JSON.stringify(text) : asciiString,
    allowNan: options.allowNan ?? false,
    stack: [],
  };
  return dump(value, "", writer) ?? "null";
}
