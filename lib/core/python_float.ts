/**
 * Floats written as text the way Python does: `float(text)` and
 * `str(number)`. Used for `state_meta` values shared with the Python Hermes
 * (the `last_auto_prune` marker is `str(time.time())`).
 *
 * @module
 */
import { pythonStrip } from "./python_text.ts";

const DIGITS = String.raw`\d(?:_?\d)*`;
const DECIMAL = new RegExp(
  String.raw`^[+-]?(?:${DIGITS}\.?(?:${DIGITS})?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`,
);
const SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;

/**
 * Python's `float(text)`.
 *
 * @param text The text.
 * @returns The number, or `undefined` where Python raises `ValueError`.
 *
 * @example
 * ```ts
 * import { parsePythonFloat } from "./python_float.ts";
 * console.assert(parsePythonFloat(" 1_715_000_000.5 ") === 1715000000.5);
 * console.assert(parsePythonFloat("soon") === undefined);
 * ```
 */
export function parsePythonFloat(text: string): number | undefined {
  const s = pythonStrip(text);
  const special = SPECIAL.exec(s);
  if (special) {
    if (special[2].toLowerCase() === "nan") return NaN;
    return special[1] === "-" ? -Infinity : Infinity;
  }
  if (!DECIMAL.test(s)) return undefined;
  return Number(s.replaceAll("_", ""));
}

/**
 * Python's `str(x)` (and `repr(x)`) of a float: the shortest text that reads
 * back as `x`, with `.0` on whole numbers and an exponent below 1e-4 and from
 * 1e16 on (`1777454434.567891`, `1715000000.0`, `1e-05`, `1e+16`).
 *
 * @param x The number.
 * @returns Its Python text.
 *
 * @example
 * ```ts
 * import { pythonFloatRepr } from "./python_float.ts";
 * console.assert(pythonFloatRepr(1715000000) === "1715000000.0");
 * console.assert(pythonFloatRepr(0.00001) === "1e-05");
 * ```
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mantissa, exponent] = Math.abs(x).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exp = Number(exponent);
  if (exp < -4 || exp >= 16) {
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const expText = String(Math.abs(exp)).padStart(2, "0");
    return `${sign}${body}e${exp < 0 ? "-" : "+"}${expText}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const fraction = digits.slice(exp + 1) || "0";
  return `${sign}${whole}.${fraction}`;
}
