// The usage report over a newer Hermes's per-model usage rows (`session_model_usage`): by model,
// each call under the model it used and the rest of a session's totals under its own; every
// grouping counts side work once; the CLI's total counts a session once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, openClocked, rawOpen } from "./_helpers.ts";
import { ARCHIVED, GPT, MINI, SONNET, spentFile } from "./_model_usage_spent.ts";
import type { UsageRow } from "../lib/core/usage.ts";
import { runCli } from "./_cli_io.ts";

function byKey(rows: UsageRow[]): Map<string | null, UsageRow> {
  return new Map(rows.map((row) => [row.key, row]));
}

test("usageReport by model on a newer Hermes's file counts each call under the model it used", async (t) => {
  const { db } = await spentFile(t);
  const rows = db.usageReport({ by: "model", since: 0 });
  assert.deepEqual(rows.map((row) => row.key), [SONNET, GPT, MINI]);
  const models = byKey(rows);
  // SONNET: LIVE's own calls, all of ARCHIVED (no rows), REWOUND's call and the rest of its
  // totals, and the fixture's fourth session (no tokens): four sessions.
  assert.deepEqual(models.get(SONNET), {
    key: SONNET,
    sessions: 4,
    input_tokens: 1000 + 5000 + 400,
    output_tokens: 100 + 500 + 40,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    estimated_cost_usd: 0.5 + 2 + 0.5,
    actual_cost_usd: null,
  });
  assert.equal(models.get(GPT)?.sessions, 1);
  assert.equal(models.get(GPT)?.input_tokens, 300);
  assert.equal(models.get(GPT)?.estimated_cost_usd, 0.25);
  assert.equal(models.get(MINI)?.sessions, 1);
  assert.equal(models.get(MINI)?.output_tokens, 5);
});

test("usageReport by day, source and month on a newer Hermes's file counts its side work once", async (t) => {
  const { db } = await spentFile(t);
  const byModel = db.usageReport({ by: "model", since: 0 });
  const total = (rows: UsageRow[], column: "input_tokens" | "output_tokens") =>
    rows.reduce((sum, row) => sum + row[column], 0);
  for (const by of ["day", "month", "source"] as const) {
    const rows = db.usageReport({ by, since: 0 });
    // LIVE's own 1,300 input tokens and its title's 50; nothing counted twice.
    assert.equal(total(rows, "input_tokens"), 1350 + 5000 + 400, by);
    assert.equal(total(rows, "input_tokens"), total(byModel, "input_tokens"), by);
    assert.equal(total(rows, "output_tokens"), total(byModel, "output_tokens"), by);
  }
  const sources = byKey(db.usageReport({ by: "source", since: 0 }));
  assert.equal(sources.get("cli")?.sessions, 2);
  assert.equal(sources.get("cli")?.input_tokens, 1350 + 400);
  assert.equal(sources.get("cli")?.estimated_cost_usd, 0.75 + 0.125 + 0.5);
  assert.equal(sources.get("telegram")?.estimated_cost_usd, 2);
  assert.equal(sources.get("discord")?.estimated_cost_usd, null);
});

test("usageReport on a newer Hermes's file without per-model rows reads as its sessions' totals", async (t) => {
  const { db } = await openClocked(t, 1_777_000_100, copyFixture("hermes-v21.db"));
  db.updateTokenCounts(ARCHIVED, { inputTokens: 5000, absolute: true });
  assert.deepEqual(
    db.usageReport({ by: "model", since: 0 }).map((
      row,
    ) => [row.key, row.sessions, row.input_tokens]),
    [[SONNET, 4, 5000]],
  );
});

test("usage --by model counts a session that used two models once in its total", async (t) => {
  const { db, path } = await spentFile(t);
  db.close();
  const run = await runCli(["--db", path, "usage", "--by", "model", "--since", "all"]);
  assert.equal(run.code, 0, run.err);
  const lines = run.out.trimEnd().split("\n");
  assert.match(lines[1], /^anthropic\/claude-sonnet-4\.6\s+4\s+6,400\s+640\s/);
  assert.match(lines[2], /^openai\/gpt-5\s+1\s+300\s/);
  // Six sessions in the rows above (LIVE under all three models); four in the file.
  assert.match(lines[lines.length - 1], /^total\s+4\s+6,750\s+675\s/);
});

test("usageReport over per-model rows past 2^63 in all answers, as over session totals", async (t) => {
  const { db, path } = await openClocked(t, 1_777_000_100, copyFixture("hermes-v21.db"));
  {
    using raw = await rawOpen(path);
    raw.exec(`INSERT INTO session_model_usage (session_id, model, input_tokens)
      VALUES ('${ARCHIVED}', 'a', 4611686018427387904), ('${ARCHIVED}', 'b', 4611686018427387904)`);
  }
  const [day] = db.usageReport({ by: "day", since: 0 });
  assert.equal(day.input_tokens, 2 ** 63);
  const models = byKey(db.usageReport({ by: "model", since: 0 }));
  assert.equal(models.get("a")?.input_tokens, 2 ** 62);
});

test("usageReport over per-model rows keeps its range and time zone apart (both bound)", async (t) => {
  const { db } = await spentFile(t);
  // 1_777_000_005 leaves LIVE out; the others started on 24 April, UTC: the 23rd in Los Angeles.
  const rows = db.usageReport({ by: "day", since: 1_777_000_005, timeZone: "America/Los_Angeles" });
  assert.deepEqual(
    rows.map((row) => [row.key, row.sessions, row.input_tokens]),
    [["2026-04-23", 3, 5000 + 400]],
  );
});
