/**
 * A copy of `hermes-v21.db` with a newer Hermes's per-model usage rows
 * (`session_model_usage`) and session totals that differ from them, for the
 * tests of the usage report on a file and on a server `sync` filled.
 *
 * @module
 */
import type { TestContext } from "node:test";
import { copyFixture, openClocked, rawOpen } from "./_helpers.ts";
import type { SessionDB } from "../lib/sqlite/session_db.ts";

/** Sessions of `hermes-v21.db`, each with the model below and no tokens yet. */
export const LIVE = "20260501_090000_live01";
export const ARCHIVED = "20260501_100000_arch01";
export const REWOUND = "20260501_110000_rew01";
export const SONNET = "anthropic/claude-sonnet-4.6";
export const GPT = "openai/gpt-5";
export const MINI = "openai/gpt-5-mini";

/**
 * A newer Hermes's usage: LIVE switched from SONNET to GPT (`/model`), and
 * a title was written for it by MINI (side work, in the per-model rows
 * only); ARCHIVED was given cumulative totals (never split by model); and
 * REWOUND got one call, then cumulative totals beyond it.
 */
export async function spentFile(
  t: TestContext,
): Promise<{ db: SessionDB; path: string }> {
  const { db, path } = await openClocked(t, 1_777_000_100, copyFixture("hermes-v21.db"));
  db.updateTokenCounts(LIVE, {
    model: SONNET,
    inputTokens: 1000,
    outputTokens: 100,
    estimatedCostUsd: 0.5,
  });
  db.updateTokenCounts(LIVE, {
    model: GPT,
    inputTokens: 300,
    outputTokens: 30,
    estimatedCostUsd: 0.25,
  });
  db.updateTokenCounts(ARCHIVED, {
    inputTokens: 5000,
    outputTokens: 500,
    estimatedCostUsd: 2,
    absolute: true,
  });
  db.updateTokenCounts(REWOUND, { inputTokens: 100, outputTokens: 10, estimatedCostUsd: 0.125 });
  db.updateTokenCounts(REWOUND, {
    inputTokens: 400,
    outputTokens: 40,
    estimatedCostUsd: 0.5,
    absolute: true,
  });
  {
    using raw = await rawOpen(path);
    raw.exec(
      `INSERT INTO session_model_usage (session_id, model, api_call_count, input_tokens, output_tokens, estimated_cost_usd)
      VALUES ('${LIVE}', '${MINI}', 1, 50, 5, 0.125)`,
    );
  }
  return { db, path };
}
