/**
 * JSON text as Python's `json.dumps(value, ensure_ascii=False)` writes it:
 * `", "` and `": "` separators, floats as Python prints them (`1e-05`),
 * `NaN`/`Infinity` allowed, non-ASCII kept.
 *
 * @module
 */
import { pythonFloatRepr } from "./_python_float.ts";

function number(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
}

function skipped(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

function dump(value: unknown, parents: unknown[]): string {
  if (value !== null && typeof value === "object" && "toJSON" in value) {
    const toJSON = (value as { toJSON: unknown }).toJSON;
    if (typeof toJSON === "function") value = toJSON.call(value);
  }
  if (value === null || skipped(value)) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return number(value);
    case "bigint":
      return value.toString();
    case "string":
      return JSON.stringify(value);
  }
  if (parents.includes(value)) {
    throw new TypeError("Cannot write JSON: the value contains a circular reference");
  }
  parents.push(value);
  let text: string;
  if (Array.isArray(value)) {
    text = `[${value.map((item) => dump(item, parents)).join(", ")}]`;
  } else {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => !skipped(item))
      .map(([key, item]) => `${JSON.stringify(key)}: ${dump(item, parents)}`);
    text = `{${members.join(", ")}}`;
  }
  parents.pop();
  return text;
}

/**
 * Serializes `value` as Python's `json.dumps(value, ensure_ascii=False)` does.
 *
 * @param value A JSON-like value.
 * @returns The JSON text.
 * @throws {TypeError} When the value contains a circular reference.
 *
 * @example
 * ```ts
 * import { pythonJsonDumps } from "./_python_json.ts";
 * console.assert(pythonJsonDumps({ a: [1, 0.5], b: "é" }) === '{"a": [1, 0.5], "b": "é"}');
 * ```
 */
export function pythonJsonDumps(value: unknown): string {
  return dump(value, []);
}
