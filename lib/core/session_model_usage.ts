/**
 * A session's per-model usage rows, as a newer Hermes keeps them in
 * `session_model_usage` (each call's tokens and cost under the model and
 * billing route it used, side work under a `task`), as both engines read
 * and write them (`getModelUsage`, `importSession`'s `modelUsage`) and
 * `copy` carries them.
 *
 * @module
 */
import { describeValue } from "./shown_value.ts";

/**
 * The key under which an export record carries its session's per-model
 * usage rows (as {@linkcode SessionModelUsage}s), when it has any: a JSON
 * Lines export → import keeps them, as `copy` does. Python's export carries
 * none, and its import reads none (it takes the keys it knows).
 */
export const MODEL_USAGE_KEY = "hermes_state_model_usage";

/**
 * An export's session row with its per-model usage rows under
 * {@linkcode MODEL_USAGE_KEY}; the row as it is when there are none.
 *
 * @param row The session row.
 * @param usage Its rows.
 * @returns The row to export.
 */
export function withModelUsage<Row extends object>(
  row: Row,
  usage: readonly SessionModelUsage[],
): Row {
  return usage.length === 0 ? row : { ...row, [MODEL_USAGE_KEY]: usage };
}

/**
 * The per-model usage rows an import writes, checked: those of the
 * `modelUsage` option when given, else those the record carries under
 * {@linkcode MODEL_USAGE_KEY}, else `undefined` (the session's rows are
 * left as they are).
 *
 * @param record The record as given.
 * @param option The `modelUsage` option.
 * @returns The rows, or `undefined`.
 * @throws {TypeError} As {@linkcode checkModelUsage}, naming the field.
 * @throws {RangeError} As {@linkcode checkModelUsage}.
 */
export function importedModelUsage(
  record: unknown,
  option: unknown,
): SessionModelUsage[] | undefined {
  if (option !== undefined) return checkModelUsage("import session", option);
  const carried = typeof record === "object" && record !== null
    ? (record as Record<string, unknown>)[MODEL_USAGE_KEY]
    : undefined;
  return carried === undefined || carried === null
    ? undefined
    : checkModelUsage("import session", carried, MODEL_USAGE_KEY);
}

/** One row of a session's per-model usage: its key (model, route, task) and what it counts. */
export interface SessionModelUsage {
  /** The model the calls named (`unknown` when none). */
  model: string;
  /** Their billing provider (`''` when none). */
  billing_provider: string;
  /** Their provider's base URL (`''` when none). */
  billing_base_url: string;
  /** Their billing mode (`''` when none). */
  billing_mode: string;
  /** The kind of work: `''` for the agent's own loop, else side work (`title`, `compression`…). */
  task: string;
  /** API calls counted. */
  api_call_count: number;
  /** Input tokens. */
  input_tokens: number;
  /** Output tokens. */
  output_tokens: number;
  /** Cache read tokens. */
  cache_read_tokens: number;
  /** Cache write tokens. */
  cache_write_tokens: number;
  /** Reasoning tokens. */
  reasoning_tokens: number;
  /** Estimated cost in US dollars (`0` when none known). */
  estimated_cost_usd: number;
  /** Actual cost in US dollars (`0` when none known). */
  actual_cost_usd: number;
  /** The latest cost status given, or `null`. */
  cost_status: string | null;
  /** The latest cost source given, or `null`. */
  cost_source: string | null;
  /** When the first call was counted (Unix seconds), or `null`. */
  first_seen: number | null;
  /** When the last call was counted (Unix seconds), or `null`. */
  last_seen: number | null;
}

/** What a column of {@linkcode SessionModelUsage} holds. */
export type UsageColumnKind = "key" | "count" | "cost" | "text" | "time";

/** Every column of {@linkcode SessionModelUsage}, in the table's order, with what it holds. */
export const MODEL_USAGE_COLUMNS: readonly {
  readonly name: keyof SessionModelUsage;
  readonly kind: UsageColumnKind;
}[] = [
  { name: "model", kind: "key" },
  { name: "billing_provider", kind: "key" },
  { name: "billing_base_url", kind: "key" },
  { name: "billing_mode", kind: "key" },
  { name: "task", kind: "key" },
  { name: "api_call_count", kind: "count" },
  { name: "input_tokens", kind: "count" },
  { name: "output_tokens", kind: "count" },
  { name: "cache_read_tokens", kind: "count" },
  { name: "cache_write_tokens", kind: "count" },
  { name: "reasoning_tokens", kind: "count" },
  { name: "estimated_cost_usd", kind: "cost" },
  { name: "actual_cost_usd", kind: "cost" },
  { name: "cost_status", kind: "text" },
  { name: "cost_source", kind: "text" },
  { name: "first_seen", kind: "time" },
  { name: "last_seen", kind: "time" },
];

/** The key of a row: no two rows of a session share it. */
function usageKey(row: SessionModelUsage): string {
  return JSON.stringify([
    row.model,
    row.billing_provider,
    row.billing_base_url,
    row.billing_mode,
    row.task,
  ]);
}

/** What a column of each kind must hold, as an error says it. */
const EXPECTED: Readonly<Record<UsageColumnKind, string>> = {
  key: "a string",
  count: "an integer",
  cost: "a finite number",
  text: "a string or null",
  time: "a finite number or null",
};

/**
 * A given value of a column, or its default when missing (`''` for a key
 * but `model`, `0` for a count or a cost, `null` otherwise); `undefined`
 * when it is not of the column's kind.
 */
function columnValue(
  name: string,
  kind: UsageColumnKind,
  value: unknown,
): string | number | null | undefined {
  const finite = typeof value === "number" && Number.isFinite(value);
  switch (kind) {
    case "key":
      return typeof value === "string"
        ? value
        : value === undefined && name !== "model"
        ? ""
        : undefined;
    case "count":
      return value === undefined ? 0 : Number.isSafeInteger(value) ? value as number : undefined;
    case "cost":
      return value === undefined ? 0 : finite ? value as number : undefined;
    case "text":
      return value == null ? null : typeof value === "string" ? value : undefined;
    case "time":
      return value == null ? null : finite ? value as number : undefined;
  }
}

/**
 * Checks the rows given to a write and completes them: every key column a
 * string (`model` required; the others `''` when missing), every count an
 * integer and every cost a finite number (`0` when missing), the text and
 * time columns `null` when missing; no two rows with the same key.
 *
 * @param action What the caller does (`import session`), for the error.
 * @param rows The rows.
 * @returns The rows, complete.
 * @throws {TypeError} When `rows` is not an array of objects, or a value is
 *   not of its column's kind (naming the column and the value).
 * @throws {RangeError} When two rows have the same key.
 */
export function checkModelUsage(
  action: string,
  rows: unknown,
  field = "modelUsage",
): SessionModelUsage[] {
  const fail = (what: string, value: unknown) =>
    new TypeError(`Cannot ${action}: ${what}: current value is ${describeValue(value)}`);
  if (!Array.isArray(rows)) throw fail(`${field} must be an array`, rows);
  const keys = new Set<string>();
  return rows.map((row, index) => {
    if (row === null || typeof row !== "object" || Array.isArray(row)) {
      throw fail(`${field}[${index}] must be an object`, row);
    }
    const complete: Record<string, string | number | null> = {};
    for (const { name, kind } of MODEL_USAGE_COLUMNS) {
      const given = (row as Record<string, unknown>)[name];
      const value = columnValue(name, kind, given);
      if (value === undefined) {
        throw fail(`${field}[${index}].${name} must be ${EXPECTED[kind]}`, given);
      }
      complete[name] = value;
    }
    const checked = complete as unknown as SessionModelUsage;
    const key = usageKey(checked);
    if (keys.has(key)) {
      throw new RangeError(
        `Cannot ${action}: ${field}[${index}] repeats the key of an earlier row (model, billing route and task): ${key}`,
      );
    }
    keys.add(key);
    return checked;
  });
}
