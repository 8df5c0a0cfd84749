/**
 * The stored text an export carries for a message's parsed columns
 * (`content` behind the multimodal prefix, `tool_calls`) where an import
 * would not write it again from the value read: the same on every engine,
 * so an export or a `copy` from either keeps the bytes the store held.
 *
 * @module
 */
import { MULTIMODAL_PREFIX } from "./content.ts";
import {
  MAX_VALUE_DEPTH,
  mayHoldLongInteger,
  nestedDeeperThan,
  parseJsonExact,
} from "./exact_json.ts";
import { messageImportValue } from "./import_record.ts";
import { keepStoredText, storedTextOf } from "./stored_text.ts";
import { STORED_BYTES_KEY, storedBytesValue } from "./stored_bytes.ts";
import type { MessageRow } from "./types.ts";

/** The columns a read parses (`content` behind the multimodal prefix, `tool_calls`). */
const PARSED_COLUMNS = ["content", "tool_calls"] as const;

/**
 * What an import writes for `column` from the value an export carries, the
 * integers of `stored` read exactly; `undefined` when the value is not to
 * be carried (JSON nested deeper than {@linkcode MAX_VALUE_DEPTH}) or an
 * import writes nothing for it (a number it refuses).
 */
function importedText(column: string, value: unknown, stored: string): unknown {
  const json = column === "content" ? stored.slice(MULTIMODAL_PREFIX.length) : stored;
  if (nestedDeeperThan(json, MAX_VALUE_DEPTH)) return undefined;
  let exact = value;
  try {
    if (mayHoldLongInteger(json)) exact = parseJsonExact(json);
  } catch {
    // Bad JSON, or too deep for a reviver: the value read stands.
  }
  try {
    return messageImportValue(column, exact, `messages.${column}`);
  } catch {
    return undefined;
  }
}

/** Whether `value` holds a number JSON cannot write (`NaN`, `Infinity`), at any depth. */
function holdsNonFinite(value: unknown): boolean {
  if (typeof value === "number") return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(holdsNonFinite);
  if (value !== null && typeof value === "object") return Object.values(value).some(holdsNonFinite);
  return false;
}

/**
 * The message, with the stored text of each parsed column that an import
 * would not write again from the value (bad JSON, which reads as `[]`,
 * duplicate keys, `1.0`, `1e400`, JSON without Python's spacing, an empty
 * list, a `NaN` or `Infinity`, which a JSON line writes as `null`) carried under `hermes_state_bytes` as `{"text": BASE64}`, which
 * an import stores byte for byte. A value not carried as such (JSON nested
 * deeper than {@linkcode MAX_VALUE_DEPTH}, which the runtimes' JSON readers
 * and writers give up on at different depths) is exported as a reader of
 * bad JSON gives it: `[]` for `tool_calls`, the stored text for `content`.
 */
export function withTextImportKeeps(message: MessageRow): MessageRow {
  const row = message as unknown as Record<string, unknown>;
  const given = row[STORED_BYTES_KEY] as Record<string, unknown> | undefined;
  const carried = new Map<string, { kind: "text"; bytes: Uint8Array }>();
  const unwritable: Record<string, unknown> = {};
  for (const column of PARSED_COLUMNS) {
    const stored = storedTextOf(message, column);
    if (stored === undefined || given?.[column] !== undefined) continue;
    const written = importedText(column, row[column], stored);
    // NaN and Infinity, which Python writes and reads, become null in a JSON line.
    if (written === stored && !holdsNonFinite(row[column])) continue;
    carried.set(column, { kind: "text", bytes: new TextEncoder().encode(stored) });
    if (written === undefined) unwritable[column] = column === "content" ? stored : [];
  }
  if (carried.size === 0) return message;
  const bytes = { ...given, ...storedBytesValue(carried) };
  if (Object.keys(unwritable).length === 0) {
    row[STORED_BYTES_KEY] = bytes;
    return message;
  }
  // A new object: the stored text of an unwritable column must not be parsed again.
  const out = { ...row, ...unwritable, [STORED_BYTES_KEY]: bytes };
  for (const column of PARSED_COLUMNS) {
    const stored = storedTextOf(message, column);
    if (stored !== undefined && !(column in unwritable)) keepStoredText(out, column, stored);
  }
  return out as unknown as MessageRow;
}
