import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture } from "./_helpers.ts";
import { dbWith, rawAll } from "./_raw_rows.ts";

test("usageByModel() matches a per-model sum of every session of the fixture", async () => {
  using db = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
  const sessions = await rawAll(
    db.path,
    "SELECT model, input_tokens, output_tokens, estimated_cost_usd FROM sessions WHERE model IS NOT NULL",
  );
  const byModel = new Map<string, { n: number; input: number; output: number; cost: number }>();
  for (const s of sessions) {
    const sum = byModel.get(s.model as string) ?? { n: 0, input: 0, output: 0, cost: 0 };
    sum.n++;
    sum.input += Number(s.input_tokens);
    sum.output += Number(s.output_tokens);
    sum.cost += Number(s.estimated_cost_usd ?? 0);
    byModel.set(s.model as string, sum);
  }
  const rows = db.usageByModel();
  assert.ok(rows.length >= 2);
  assert.equal(rows.length, byModel.size);
  for (const row of rows) {
    const sum = byModel.get(row.model)!;
    assert.equal(row.session_count, sum.n);
    assert.equal(row.total_input, sum.input);
    assert.equal(row.total_output, sum.output);
    assert.ok(Math.abs((row.total_cost ?? 0) - sum.cost) < 1e-9);
  }
  for (let i = 1; i < rows.length; i++) {
    assert.ok((rows[i - 1].total_cost ?? -1) >= (rows[i].total_cost ?? -1));
  }
});

test("usageByModel() leaves out sessions without a model and puts costless models last", async () => {
  using db = await dbWith([
    {
      id: "a",
      started_at: 1,
      model: "cheap",
      input_tokens: 10,
      output_tokens: 1,
      estimated_cost_usd: 0.5,
    },
    {
      id: "b",
      started_at: 2,
      model: "dear",
      input_tokens: 5,
      output_tokens: 5,
      estimated_cost_usd: 2,
    },
    {
      id: "c",
      started_at: 3,
      model: "cheap",
      input_tokens: 1,
      output_tokens: 1,
      estimated_cost_usd: 0.25,
    },
    { id: "d", started_at: 4, model: "free", input_tokens: 7, output_tokens: 0 },
    { id: "e", started_at: 5, input_tokens: 99, output_tokens: 99, estimated_cost_usd: 9 },
  ]);
  assert.deepEqual(db.usageByModel(), [
    { model: "dear", session_count: 1, total_input: 5, total_output: 5, total_cost: 2 },
    { model: "cheap", session_count: 2, total_input: 11, total_output: 2, total_cost: 0.75 },
    { model: "free", session_count: 1, total_input: 7, total_output: 0, total_cost: null },
  ]);
});

test("topSessionsByTokens() ranks sessions by input plus output tokens", async () => {
  using db = await dbWith([
    { id: "a", started_at: 1, title: "small", model: "m", input_tokens: 10, output_tokens: 1 },
    { id: "b", started_at: 2, input_tokens: 500, output_tokens: 20, estimated_cost_usd: 0.1 },
    { id: "c", started_at: 3, input_tokens: 100, output_tokens: 100 },
    { id: "d", started_at: 4, input_tokens: 200, output_tokens: 0 },
  ]);
  assert.deepEqual(db.topSessionsByTokens(3), [
    { id: "b", title: null, model: null, total_tokens: 520, estimated_cost_usd: 0.1 },
    { id: "c", title: null, model: null, total_tokens: 200, estimated_cost_usd: null },
    { id: "d", title: null, model: null, total_tokens: 200, estimated_cost_usd: null },
  ]);
  assert.equal(db.topSessionsByTokens().length, 4);
  assert.deepEqual(db.topSessionsByTokens(0), []);
});

test("topSessionsByTokens() on the fixture returns at most 10 rows, most tokens first", async () => {
  using db = await SessionDB.open({ path: copyFixture("hermes-v11.db") });
  const rows = db.topSessionsByTokens();
  assert.equal(rows.length, 10);
  const [best] = await rawAll(
    db.path,
    "SELECT max(input_tokens + output_tokens) AS n FROM sessions",
  );
  assert.equal(rows[0].total_tokens, Number(best.n));
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].total_tokens >= rows[i].total_tokens);
});

test("topSessionsByTokens() rejects a bad limit, naming the value", async () => {
  using db = await dbWith([]);
  assert.throws(() => db.topSessionsByTokens(-1), {
    name: "RangeError",
    message: "Cannot rank sessions: limit must be a non-negative integer: current value is -1",
  });
  assert.throws(() => db.topSessionsByTokens(2.5), RangeError);
});
