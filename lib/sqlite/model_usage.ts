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
import { MODEL_USAGE_COLUMNS } from "../core/session_model_usage.ts";
import type { Store } from "./store.ts";
import type { TokenCountsUpdate } from "../core/session_options.ts";
import type { SqlValue } from "./driver/types.ts";

const TABLE = "session_model_usage";

/** How a call fills one column of its row. */
interface UsageColumn {
  /** The value inserted: SQL over the session's row `s`, with at most one `?`. */
  readonly insert: string;
  /** The value of its `?`, from the call (`now`: its time). */
  readonly param?: (update: TokenCountsUpdate, now: number) => SqlValue;
  /** How a later call to the same row sets it; none: kept as the first call set it (a key, first_seen). */
  readonly later?: string;
}

/**
 * A key column filled by the call's value (an empty one counts as missing),
 * else the session's, else `otherwise`.
 */
function route(
  column: string,
  param: (update: TokenCountsUpdate) => string | null | undefined,
  otherwise: string,
): UsageColumn {
  return {
    insert: `COALESCE(NULLIF(?, ''), NULLIF(s.${column}, ''), ${otherwise})`,
    param: (update) => param(update) ?? null,
  };
}

/** A column the call adds to (a missing count or cost adds 0). */
function summed(
  column: string,
  param: (update: TokenCountsUpdate) => number | null | undefined,
): UsageColumn {
  return {
    insert: "?",
    param: (update) => param(update) ?? 0,
    later: `${column} + excluded.${column}`,
  };
}

/**
 * Every column a call fills, in order. `task` is the newer Hermes's kind of
 * work; `''` is the agent's own loop, the only work a token update records.
 */
const USAGE_COLUMNS: Readonly<Record<string, UsageColumn>> = {
  session_id: { insert: "s.id" },
  model: route("model", (update) => update.model, "'unknown'"),
  billing_provider: route("billing_provider", (update) => update.billingProvider, "''"),
  billing_base_url: route("billing_base_url", (update) => update.billingBaseUrl, "''"),
  billing_mode: route("billing_mode", (update) => update.billingMode, "''"),
  task: { insert: "''" },
  api_call_count: summed("api_call_count", (update) => update.apiCallCount),
  input_tokens: summed("input_tokens", (update) => update.inputTokens),
  output_tokens: summed("output_tokens", (update) => update.outputTokens),
  cache_read_tokens: summed("cache_read_tokens", (update) => update.cacheReadTokens),
  cache_write_tokens: summed("cache_write_tokens", (update) => update.cacheWriteTokens),
  reasoning_tokens: summed("reasoning_tokens", (update) => update.reasoningTokens),
  estimated_cost_usd: summed("estimated_cost_usd", (update) => update.estimatedCostUsd),
  actual_cost_usd: summed("actual_cost_usd", (update) => update.actualCostUsd),
  cost_status: {
    insert: "?",
    param: (update) => update.costStatus ?? null,
    later: "COALESCE(excluded.cost_status, cost_status)",
  },
  cost_source: {
    insert: "?",
    param: (update) => update.costSource ?? null,
    later: "COALESCE(excluded.cost_source, cost_source)",
  },
  first_seen: { insert: "?", param: (_, now) => now },
  last_seen: { insert: "?", param: (_, now) => now, later: "excluded.last_seen" },
};

/** The columns that may name a row. */
const KEY_COLUMNS = new Set([
  "session_id",
  ...MODEL_USAGE_COLUMNS.filter((column) => column.kind === "key").map((column) => column.name),
]);

interface ColumnInfo {
  name: string;
  notnull: number;
  dflt_value: unknown;
  pk: number;
}

/** The statement that adds a call to this file's table, and the columns it names, in order. */
interface Upsert {
  sql: string;
  columns: UsageColumn[];
}

/**
 * The upsert for the table this file has, or undefined for a layout this
 * module does not know: a key of other columns, or a required column (`NOT
 * NULL` without a default) it would not fill.
 */
function upsertFor(store: Store): Upsert | undefined {
  const layout = knownUsageLayout(store);
  if (layout === undefined) return undefined;
  const { key, columns: present } = layout;
  const names = Object.keys(USAGE_COLUMNS).filter((name) => present.has(name));
  const columns = names.map((name) => USAGE_COLUMNS[name]);
  const updates = names.flatMap((name) => {
    const later = USAGE_COLUMNS[name].later;
    return later === undefined ? [] : [`${name} = ${later}`];
  });
  const sql = `INSERT INTO ${TABLE} (${names.join(", ")})
    SELECT ${columns.map((column) => column.insert).join(", ")} FROM sessions AS s WHERE s.id = ?
    ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${updates.join(", ")}`;
  return { sql, columns };
}

/** A per-model usage table this module can write to: its key, and its columns. */
export interface UsageLayout {
  /** The columns of its primary key, in order. */
  readonly key: readonly string[];
  /** Every column it has. */
  readonly columns: ReadonlySet<string>;
}

/**
 * The file's per-model usage table, when it has one of a layout this module
 * knows: a key of `session_id`, `model` and route columns, and no required
 * column (`NOT NULL` without a default) it would not fill. `undefined`
 * otherwise (no table, another key, another required column).
 *
 * @param store The file.
 * @returns Its key and columns, or `undefined`.
 */
export function knownUsageLayout(store: Store): UsageLayout | undefined {
  if (!store.hasTable(TABLE)) return undefined;
  const info = store.statement(
    `SELECT name, "notnull", dflt_value, pk FROM pragma_table_info('${TABLE}')`,
  ).all() as unknown as ColumnInfo[];
  const key = info.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
  const unfilled = info.some((column) =>
    column.notnull !== 0 && column.dflt_value === null && !(column.name in USAGE_COLUMNS)
  );
  if (
    !key.includes("session_id") || !key.includes("model") ||
    !key.every((name) => KEY_COLUMNS.has(name)) || unfilled
  ) {
    return undefined;
  }
  return { key, columns: new Set(info.map((column) => column.name)) };
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
  if (!recordsUsage(update)) return;
  const upsert = upsertFor(store);
  if (upsert === undefined) return;
  const now = store.now();
  const params = upsert.columns.flatMap((column) =>
    column.param === undefined ? [] : [column.param(update, now)]
  );
  store.statement(upsert.sql).run(...params, id);
}
