import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, openClocked, rawOpen } from "./_helpers.ts";
import { openStore } from "../lib/open_store.ts";
import type { SessionModelUsage } from "../lib/core/session_model_usage.ts";

/** The live session of `hermes-v21.db`: model set, no billing route yet. */
const LIVE = "20260501_090000_live01";
const SONNET = "anthropic/claude-sonnet-4.6";

/** A raw row of the table: its session's id, and `task` only in a schema-22 table. */
interface UsageRow extends Omit<SessionModelUsage, "task"> {
  session_id: string;
  task?: string;
}

async function usageRows(path: string, id?: string): Promise<UsageRow[]> {
  using raw = await rawOpen(path, true);
  const rows = id === undefined
    ? raw.prepare("SELECT * FROM session_model_usage ORDER BY session_id, first_seen, model").all()
    : raw.prepare(
      "SELECT * FROM session_model_usage WHERE session_id = ? ORDER BY first_seen, model",
    )
      .all(id);
  return rows as unknown as UsageRow[];
}

/** The schema-22 table: `task` joins the key (rebuilt as that Hermes's migration does). */
const V22_TABLE = `
ALTER TABLE session_model_usage RENAME TO session_model_usage_v21;
CREATE TABLE session_model_usage (
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  billing_provider TEXT NOT NULL DEFAULT '',
  billing_base_url TEXT NOT NULL DEFAULT '',
  billing_mode TEXT NOT NULL DEFAULT '',
  task TEXT NOT NULL DEFAULT '',
  api_call_count INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  estimated_cost_usd REAL NOT NULL DEFAULT 0,
  actual_cost_usd REAL NOT NULL DEFAULT 0,
  cost_status TEXT,
  cost_source TEXT,
  first_seen REAL,
  last_seen REAL,
  PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task)
);
INSERT INTO session_model_usage (session_id, model, task, api_call_count, input_tokens)
  VALUES ('${LIVE}', '${SONNET}', 'vision', 1, 7);
DROP TABLE session_model_usage_v21;`;

test("updateTokenCounts() adds each call to its model's row of a schema-21 file's session_model_usage", async (t) => {
  const { db, path, at } = await openClocked(t, 1_800_000_000, copyFixture("hermes-v21.db"));
  db.updateTokenCounts(LIVE, {
    inputTokens: 1000,
    outputTokens: 200,
    cacheReadTokens: 50,
    cacheWriteTokens: 10,
    reasoningTokens: 5,
    estimatedCostUsd: 0.25,
    costStatus: "estimated",
    costSource: "pricing-table",
    billingProvider: "anthropic",
    billingBaseUrl: "https://api.anthropic.com",
    billingMode: "messages",
    apiCallCount: 1,
  });
  at[0] += 60;
  // A /model switch: the session keeps its first model and route, the call names its own;
  // a later call that names none is the session's.
  db.updateTokenCounts(LIVE, {
    inputTokens: 300,
    outputTokens: 30,
    model: "openai/gpt-5",
    billingProvider: "openrouter",
    billingBaseUrl: "https://openrouter.ai/api/v1",
    billingMode: "chat",
    estimatedCostUsd: 0.5,
    actualCostUsd: 0.4,
    apiCallCount: 1,
  });
  at[0] += 60;
  db.updateTokenCounts(LIVE, {
    inputTokens: 1,
    outputTokens: 2,
    estimatedCostUsd: 0.125,
    apiCallCount: 1,
  });

  const rows = await usageRows(path);
  assert.deepEqual(rows.map((row) => [row.model, row.billing_provider]), [
    [SONNET, "anthropic"],
    ["openai/gpt-5", "openrouter"],
  ]);
  const [sonnet, gpt] = rows;
  assert.deepEqual(
    [sonnet.api_call_count, sonnet.input_tokens, sonnet.output_tokens, sonnet.cache_read_tokens],
    [2, 1001, 202, 50],
  );
  assert.deepEqual([sonnet.cache_write_tokens, sonnet.reasoning_tokens], [10, 5]);
  assert.equal(sonnet.estimated_cost_usd, 0.375);
  assert.equal(sonnet.actual_cost_usd, 0);
  assert.deepEqual(
    [sonnet.cost_status, sonnet.cost_source],
    ["estimated", "pricing-table"],
    "kept when a call gives none",
  );
  assert.deepEqual([sonnet.first_seen, sonnet.last_seen], [1_800_000_000, 1_800_000_120]);
  assert.deepEqual(
    [
      gpt.billing_base_url,
      gpt.billing_mode,
      gpt.api_call_count,
      gpt.input_tokens,
      gpt.actual_cost_usd,
    ],
    ["https://openrouter.ai/api/v1", "chat", 1, 300, 0.4],
  );
  assert.deepEqual([gpt.first_seen, gpt.last_seen], [1_800_000_060, 1_800_000_060]);

  const session = db.getSession(LIVE)!;
  assert.equal(session.model, SONNET, "the session's own model stays the first");
  assert.equal(session.billing_provider, "anthropic", "the first route stays, as before");
  assert.equal(session.input_tokens, rows.reduce((sum, row) => sum + row.input_tokens, 0));
  assert.equal(session.api_call_count, rows.reduce((sum, row) => sum + row.api_call_count, 0));
});

test("a session's route fills a missing or empty model and provider of its usage row", async (t) => {
  const { db, path } = await openClocked(t, 1_800_000_000, copyFixture("hermes-v21.db"));
  db.updateTokenCounts(LIVE, { outputTokens: 5, billingProvider: "anthropic", apiCallCount: 1 });
  db.updateTokenCounts(LIVE, { outputTokens: 7, model: "", billingProvider: "", apiCallCount: 1 });
  db.updateTokenCounts("never-created", { outputTokens: 9 });
  const rows = await usageRows(path);
  assert.deepEqual(
    rows.map((row) => [row.session_id, row.model, row.billing_provider, row.output_tokens]),
    [
      [LIVE, SONNET, "anthropic", 12],
      ["never-created", "unknown", "", 9],
    ],
  );
});

test("cumulative totals, and updates that count nothing, add no usage row", async (t) => {
  const { db, path } = await openClocked(t, 1_800_000_000, copyFixture("hermes-v21.db"));
  db.updateTokenCounts(LIVE, {
    inputTokens: 5000,
    outputTokens: 900,
    apiCallCount: 3,
    absolute: true,
  });
  db.updateTokenCounts(LIVE, { billingProvider: "openrouter", costStatus: "estimated" });
  db.updateTokenCounts(LIVE, { actualCostUsd: 0.2 });
  db.updateTokenCounts(LIVE, { inputTokens: 0, estimatedCostUsd: 0 });
  assert.deepEqual(await usageRows(path), []);
  assert.equal(db.getSession(LIVE)!.input_tokens, 5000, "the session row took them as before");
});

test("a schema-22 table gets the agent's own rows under task '' beside a newer Hermes's vision row", async (t) => {
  const path = copyFixture("hermes-v21.db");
  {
    using raw = await rawOpen(path);
    raw.exec(V22_TABLE);
  }
  const { db } = await openClocked(t, 1_800_000_000, path);
  db.updateTokenCounts(LIVE, { inputTokens: 40, apiCallCount: 1 });
  db.updateTokenCounts(LIVE, { inputTokens: 2, apiCallCount: 1 });
  const rows = await usageRows(path, LIVE);
  assert.deepEqual(
    rows.map((row) => [row.task, row.model, row.api_call_count, row.input_tokens]).sort(),
    [["", SONNET, 2, 42], ["vision", SONNET, 1, 7]],
  );
});

test("a usage table of a layout this version does not know is left alone; the session still counts", async (t) => {
  const path = copyFixture("hermes-v21.db");
  {
    using raw = await rawOpen(path);
    raw.exec(`DROP TABLE session_model_usage;
      CREATE TABLE session_model_usage (
        session_id TEXT NOT NULL, model TEXT NOT NULL, day TEXT NOT NULL, input_tokens INTEGER,
        PRIMARY KEY (session_id, model, day))`);
  }
  const { db } = await openClocked(t, 1_800_000_000, path);
  db.updateTokenCounts(LIVE, { inputTokens: 40, apiCallCount: 1 });
  assert.equal(db.getSession(LIVE)!.input_tokens, 40);
  using raw = await rawOpen(path, true);
  assert.deepEqual(raw.prepare("SELECT count(*) AS n FROM session_model_usage").get(), { n: 0 });
});

test("a schema-11 file gets no usage table from token updates", async (t) => {
  const { db, path } = await openClocked(t, 1_800_000_000, copyFixture("hermes-v11.db"));
  db.updateTokenCounts("20251221_090000_9738df", { inputTokens: 40, apiCallCount: 1 });
  using raw = await rawOpen(path, true);
  const table = raw.prepare("SELECT name FROM sqlite_master WHERE name = 'session_model_usage'")
    .get();
  assert.equal(table, undefined);
});

test("the store's updateTokenCounts records usage rows, and deleting the session takes them too", async () => {
  const path = copyFixture("hermes-v21.db");
  {
    await using store = await openStore(path);
    await store.updateTokenCounts(LIVE, { inputTokens: 11, apiCallCount: 1 });
    assert.equal((await usageRows(path, LIVE)).length, 1);
    assert.equal(await store.deleteSession(LIVE), true);
  }
  assert.deepEqual(await usageRows(path, LIVE), []);
});
