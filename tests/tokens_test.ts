import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { ReadonlyError } from "../lib/core/errors.ts";
import type { SessionRow } from "../lib/core/types.ts";
import { tempDbPath } from "./_helpers.ts";

async function open(): Promise<SessionDB> {
  return await SessionDB.open({ path: tempDbPath(), clock: () => 1776675600.5 });
}

function pick(row: SessionRow, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, row[key]]));
}

const COUNTERS = [
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "api_call_count",
];

test("updateTokenCounts() adds counts and costs by default", async () => {
  using db = await open();
  db.createSession("s", "cli");
  const one = {
    inputTokens: 100,
    outputTokens: 20,
    cacheReadTokens: 5,
    cacheWriteTokens: 3,
    reasoningTokens: 7,
    estimatedCostUsd: 0.1,
    apiCallCount: 1,
  };
  db.updateTokenCounts("s", one);
  db.updateTokenCounts("s", { ...one, estimatedCostUsd: 0.2 });
  const row = db.getSession("s")!;
  assert.deepEqual(pick(row, COUNTERS), {
    input_tokens: 200,
    output_tokens: 40,
    cache_read_tokens: 10,
    cache_write_tokens: 6,
    reasoning_tokens: 14,
    api_call_count: 2,
  });
  // Same float sum as Python's SQLite: 0 + 0.1 + 0.2.
  assert.equal(row.estimated_cost_usd, 0.30000000000000004);
});

test("updateTokenCounts() makes the estimated cost 0.0 on any call and leaves the actual cost NULL until given", async () => {
  using db = await open();
  db.createSession("s", "cli");
  assert.equal(db.getSession("s")!.estimated_cost_usd, null);
  db.updateTokenCounts("s", { inputTokens: 1 });
  let row = db.getSession("s")!;
  assert.equal(row.estimated_cost_usd, 0);
  assert.equal(row.actual_cost_usd, null);
  db.updateTokenCounts("s", { actualCostUsd: 0.25 });
  db.updateTokenCounts("s", { actualCostUsd: 0.5 });
  db.updateTokenCounts("s", { actualCostUsd: null });
  row = db.getSession("s")!;
  assert.equal(row.actual_cost_usd, 0.75);
});

test("updateTokenCounts() with absolute sets the values and resets an omitted call count and estimate to 0", async () => {
  using db = await open();
  db.createSession("s", "telegram");
  db.updateTokenCounts("s", {
    inputTokens: 10,
    outputTokens: 10,
    estimatedCostUsd: 0.5,
    actualCostUsd: 0.4,
    apiCallCount: 3,
  });
  db.updateTokenCounts("s", {
    inputTokens: 5000,
    outputTokens: 900,
    cacheReadTokens: 40,
    estimatedCostUsd: 0.0421,
    apiCallCount: 7,
    absolute: true,
  });
  let row = db.getSession("s")!;
  assert.deepEqual(pick(row, [...COUNTERS, "estimated_cost_usd", "actual_cost_usd"]), {
    input_tokens: 5000,
    output_tokens: 900,
    cache_read_tokens: 40,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    api_call_count: 7,
    estimated_cost_usd: 0.0421,
    actual_cost_usd: 0.4,
  });
  db.updateTokenCounts("s", { inputTokens: 6000, absolute: true });
  row = db.getSession("s")!;
  assert.equal(row.input_tokens, 6000);
  assert.equal(row.output_tokens, 0);
  assert.equal(row.api_call_count, 0);
  assert.equal(row.estimated_cost_usd, 0);
  assert.equal(row.actual_cost_usd, 0.4);
  db.updateTokenCounts("s", { actualCostUsd: 0.9, absolute: true });
  assert.equal(db.getSession("s")!.actual_cost_usd, 0.9);
});

test("updateTokenCounts() keeps the first billing provider, URL, mode and model", async () => {
  using db = await open();
  db.createSession("s", "cli");
  db.updateTokenCounts("s", { billingProvider: null, model: "first-model" });
  db.updateTokenCounts("s", {
    billingProvider: "openrouter",
    billingBaseUrl: "https://openrouter.ai/api/v1",
    billingMode: "api",
  });
  db.updateTokenCounts("s", {
    billingProvider: "anthropic",
    billingBaseUrl: "https://api.anthropic.com",
    billingMode: "subscription",
    model: "second-model",
    absolute: true,
  });
  const row = db.getSession("s")!;
  assert.deepEqual(pick(row, ["billing_provider", "billing_base_url", "billing_mode", "model"]), {
    billing_provider: "openrouter",
    billing_base_url: "https://openrouter.ai/api/v1",
    billing_mode: "api",
    model: "first-model",
  });
});

test("updateTokenCounts() keeps the latest non-null cost status, source and pricing version", async () => {
  using db = await open();
  db.createSession("s", "cli");
  db.updateTokenCounts("s", {
    costStatus: "estimated",
    costSource: "pricing_table",
    pricingVersion: "2026-04",
  });
  db.updateTokenCounts("s", { costStatus: "actual", actualCostUsd: 0.4215 });
  db.updateTokenCounts("s", { costStatus: null, pricingVersion: "2026-05" });
  const row = db.getSession("s")!;
  assert.deepEqual(pick(row, ["cost_status", "cost_source", "pricing_version"]), {
    cost_status: "actual",
    cost_source: "pricing_table",
    pricing_version: "2026-05",
  });
});

test("updateTokenCounts() creates a missing session with source unknown and the model", async () => {
  using db = await open();
  db.updateTokenCounts("late", { inputTokens: 12, model: "gpt-5", apiCallCount: 1 });
  const row = db.getSession("late")!;
  assert.equal(row.source, "unknown");
  assert.equal(row.model, "gpt-5");
  assert.equal(row.input_tokens, 12);
  assert.equal(row.api_call_count, 1);
  assert.equal(row.started_at, 1776675600.5);
});

test("updateTokenCounts() throws ReadonlyError on a read-only database", async () => {
  const path = tempDbPath();
  using writer = await SessionDB.open({ path });
  writer.createSession("s", "cli");
  writer.close();
  using db = await SessionDB.open({ path, readonly: true });
  assert.throws(() => db.updateTokenCounts("s", { inputTokens: 1 }), ReadonlyError);
  assert.equal(db.getSession("s")!.input_tokens, 0);
});
