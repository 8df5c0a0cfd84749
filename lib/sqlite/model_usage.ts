/**
 * A newer Hermes's per-model usage rows (`session_model_usage`, since its
 * schema 20; schema 22 adds `task` to the key), kept by token updates here as
 * that Hermes keeps them: the `sessions` row holds one model and provider for
 * the whole session, so each call's usage is also added to the row of the
 * model and billing route it was made with. Tools that report spend by model
 * read these rows; a file without the table is left as it is.
 *
 * @module
 */
import type { Store } from "./store.ts";
import type { TokenCountsUpdate } from "../core/session_options.ts";

const TABLE = "session_model_usage";

/** The row's key columns. */
const KEY_COLUMNS = [
  "session_id",
  "model",
  "billing_provider",
  "billing_base_url",
  "billing_mode",
  "task",
] as const;

type KeyColumn = typeof KEY_COLUMNS[number];

/**
 * How each key column is filled: the call's value (`?`; an empty one counts
 * as missing), else the session's, else a default. `task` is the newer
 * Hermes's kind of work; `''` is the agent's own loop, the only work a token
 * update records.
 */
const KEY_SQL: Readonly<Record<KeyColumn, string>> = {
  session_id: "s.id",
  model: "COALESCE(NULLIF(?, ''), NULLIF(s.model, ''), 'unknown')",
  billing_provider: "COALESCE(NULLIF(?, ''), NULLIF(s.billing_provider, ''), '')",
  billing_base_url: "COALESCE(NULLIF(?, ''), NULLIF(s.billing_base_url, ''), '')",
  billing_mode: "COALESCE(NULLIF(?, ''), NULLIF(s.billing_mode, ''), '')",
  task: "''",
};

/** The columns a call adds to. */
const SUMMED_COLUMNS = [
  "api_call_count",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "estimated_cost_usd",
  "actual_cost_usd",
] as const;

type SummedColumn = typeof SUMMED_COLUMNS[number];

/** The columns a call sets, and how a later call to the same row sets them (never: the first). */
const SET_COLUMNS = {
  cost_status: "COALESCE(excluded.cost_status, cost_status)",
  cost_source: "COALESCE(excluded.cost_source, cost_source)",
  first_seen: undefined,
  last_seen: "excluded.last_seen",
} as const;

type SetColumn = keyof typeof SET_COLUMNS;

/** The call's value for a key column filled by a parameter. */
function keyValue(column: KeyColumn, update: TokenCountsUpdate): string | null {
  switch (column) {
    case "model":
      return update.model ?? null;
    case "billing_provider":
      return update.billingProvider ?? null;
    case "billing_base_url":
      return update.billingBaseUrl ?? null;
    case "billing_mode":
      return update.billingMode ?? null;
    default:
      return null;
  }
}

/** What a call adds to a summed column (a missing count or cost adds 0). */
function summedValue(column: SummedColumn, update: TokenCountsUpdate): number {
  const values: Record<SummedColumn, number | null | undefined> = {
    api_call_count: update.apiCallCount,
    input_tokens: update.inputTokens,
    output_tokens: update.outputTokens,
    cache_read_tokens: update.cacheReadTokens,
    cache_write_tokens: update.cacheWriteTokens,
    reasoning_tokens: update.reasoningTokens,
    estimated_cost_usd: update.estimatedCostUsd,
    actual_cost_usd: update.actualCostUsd,
  };
  return values[column] ?? 0;
}

/** What a call gives a set column: both times are `now`, the row's first and latest call. */
function setValue(
  column: SetColumn,
  update: TokenCountsUpdate,
  now: number,
): string | number | null {
  if (column === "cost_status") return update.costStatus ?? null;
  if (column === "cost_source") return update.costSource ?? null;
  return now;
}

interface ColumnInfo {
  name: string;
  notnull: number;
  dflt_value: unknown;
  pk: number;
}

/** The statement that adds a call to this file's table, with the columns its parameters fill. */
interface Upsert {
  sql: string;
  keyed: KeyColumn[];
  summed: SummedColumn[];
  set: SetColumn[];
}

function isKeyColumn(name: string): name is KeyColumn {
  return (KEY_COLUMNS as readonly string[]).includes(name);
}

/**
 * The upsert for the table this file has, or undefined for a layout this
 * module does not know: a key of other columns, or a required column (`NOT
 * NULL` without a default) it would not fill.
 */
function upsertFor(store: Store): Upsert | undefined {
  const info = store.statement(
    `SELECT name, "notnull", dflt_value, pk FROM pragma_table_info('${TABLE}')`,
  ).all() as unknown as ColumnInfo[];
  const has = (name: string) => info.some((column) => column.name === name);
  const key = info.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
  const filled = new Set<string>([...KEY_COLUMNS, ...SUMMED_COLUMNS, ...Object.keys(SET_COLUMNS)]);
  const unfilled = info.some((column) =>
    column.notnull !== 0 && column.dflt_value === null && !filled.has(column.name)
  );
  if (
    !key.includes("session_id") || !key.includes("model") || !key.every(isKeyColumn) || unfilled
  ) {
    return undefined;
  }
  const keyed = KEY_COLUMNS.filter(has);
  const summed = SUMMED_COLUMNS.filter(has);
  const set = (Object.keys(SET_COLUMNS) as SetColumn[]).filter(has);
  const updates = [
    ...summed.map((name) => `${name} = ${name} + excluded.${name}`),
    ...set.flatMap((name) => {
      const value = SET_COLUMNS[name];
      return value === undefined ? [] : [`${name} = ${value}`];
    }),
  ];
  const values = [
    ...keyed.map((name) => KEY_SQL[name]),
    ...summed.map(() => "?"),
    ...set.map(() => "?"),
  ];
  const sql = `INSERT INTO ${TABLE} (${[...keyed, ...summed, ...set].join(", ")})
    SELECT ${values.join(", ")} FROM sessions AS s WHERE s.id = ?
    ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${updates.join(", ")}`;
  return { sql, keyed: keyed.filter((name) => KEY_SQL[name].includes("?")), summed, set };
}

/**
 * Whether the newer Hermes records `update` as a call's usage: only what is
 * added (cumulative totals cannot be split by model), and only when it
 * counts something (tokens, calls or an estimated cost).
 */
function recordsUsage(update: TokenCountsUpdate): boolean {
  if (update.absolute) return false;
  return [
    update.inputTokens,
    update.outputTokens,
    update.cacheReadTokens,
    update.cacheWriteTokens,
    update.reasoningTokens,
    update.apiCallCount,
    update.estimatedCostUsd,
  ].some((value) => (value ?? 0) !== 0);
}

/**
 * Adds `update` to its model's row of `session_model_usage`, inside the
 * caller's write and after the `sessions` row took it (so a model the
 * session just received names the row). Does nothing on a file without the
 * table, for cumulative totals, for an update that counts nothing, and on a
 * table whose key or required columns are not the ones this module knows.
 *
 * @param store The store, inside a write.
 * @param id The session, which exists.
 * @param update The token update just applied to the session.
 */
export function recordModelUsage(store: Store, id: string, update: TokenCountsUpdate): void {
  if (!recordsUsage(update) || !store.hasTable(TABLE)) return;
  const upsert = upsertFor(store);
  if (upsert === undefined) return;
  const now = store.now();
  store.statement(upsert.sql).run(
    ...upsert.keyed.map((column) => keyValue(column, update)),
    ...upsert.summed.map((column) => summedValue(column, update)),
    ...upsert.set.map((column) => setValue(column, update, now)),
    id,
  );
}
