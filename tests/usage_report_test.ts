import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { parseSince } from "../lib/core/usage.ts";
import { copyFixture, tempDbPath } from "./_helpers.ts";

/** Two sessions a week apart, with known tokens and costs. */
async function twoWeeks(): Promise<SessionDB> {
  let now = Date.UTC(2026, 3, 19, 23, 30) / 1000; // a Sunday, 23:30 UTC
  const db = await SessionDB.open({ path: tempDbPath(), clock: () => now });
  db.createSession("a", "cli", { model: "m1" });
  db.updateTokenCounts("a", { inputTokens: 100, outputTokens: 10, estimatedCostUsd: 0.5 });
  now += 3600; // Monday 00:30
  db.createSession("b", "telegram", { model: "m2" });
  db.updateTokenCounts("b", {
    inputTokens: 1,
    outputTokens: 2,
    cacheReadTokens: 3,
    reasoningTokens: 4,
  });
  now += 8 * 86400;
  db.createSession("c", "cli");
  db.updateTokenCounts("c", { inputTokens: 5, actualCostUsd: 0.25 });
  return db;
}

test("usageReport() groups sessions by UTC day, Monday week and month", async () => {
  const db = await twoWeeks();
  try {
    assert.deepEqual(
      db.usageReport({ by: "day" }).map((r) => [r.key, r.sessions, r.input_tokens]),
      [
        ["2026-04-19", 1, 100],
        ["2026-04-20", 1, 1],
        ["2026-04-28", 1, 5],
      ],
    );
    assert.deepEqual(db.usageReport({ by: "week" }).map((r) => [r.key, r.sessions]), [
      ["2026-04-13", 1],
      ["2026-04-20", 1],
      ["2026-04-27", 1],
    ]);
    assert.deepEqual(db.usageReport({ by: "month" }).map((r) => [r.key, r.sessions]), [[
      "2026-04",
      3,
    ]]);
  } finally {
    db.close();
  }
});

test("usageReport() groups by model and source, sums every counter, and keeps unknown costs null", async () => {
  const db = await twoWeeks();
  try {
    const models = db.usageReport({ by: "model" });
    // By cost, then tokens: the model-less session (5 tokens) before m2 (3 tokens).
    assert.deepEqual(models.map((r) => r.key), ["m1", null, "m2"]);
    assert.deepEqual(models[2], {
      key: "m2",
      sessions: 1,
      input_tokens: 1,
      output_tokens: 2,
      cache_read_tokens: 3,
      cache_write_tokens: 0,
      reasoning_tokens: 4,
      estimated_cost_usd: 0,
      actual_cost_usd: null,
    });
    const sources = db.usageReport({ by: "source" });
    assert.deepEqual(sources.map((r) => [r.key, r.sessions, r.input_tokens]), [
      ["cli", 2, 105],
      ["telegram", 1, 1],
    ]);
    assert.equal(sources[0].actual_cost_usd, 0.25);
  } finally {
    db.close();
  }
});

test("usageReport() keeps only the period and source asked for", async () => {
  const db = await twoWeeks();
  try {
    const since = Date.UTC(2026, 3, 20) / 1000;
    assert.deepEqual(db.usageReport({ since }).map((r) => r.key), ["2026-04-20", "2026-04-28"]);
    assert.deepEqual(db.usageReport({ until: since }).map((r) => r.key), ["2026-04-19"]);
    assert.deepEqual(db.usageReport({ source: "telegram" }).map((r) => r.key), ["2026-04-20"]);
    assert.deepEqual(db.usageReport({ since: Date.UTC(2030, 0, 1) / 1000 }), []);
  } finally {
    db.close();
  }
});

test("usageReport() rejects a grouping or a time that is not one, naming the value", async () => {
  const db = await twoWeeks();
  try {
    assert.throws(() => db.usageReport({ by: "hour" as never }), {
      name: "RangeError",
      message:
        'Cannot report usage: by must be one of day, week, month, model, source, origin: current value is "hour"',
    });
    // A file records no origins (only sync does, on a PostgreSQL store).
    assert.throws(() => db.usageReport({ by: "origin" }), {
      name: "TypeError",
      message:
        /^Cannot report usage by origin on a SQLite store: origins are recorded only on a PostgreSQL store/,
    });
    assert.throws(() => db.usageReport({ since: Number.POSITIVE_INFINITY }), {
      name: "RangeError",
      message: /since must be a finite number of seconds: current value is Infinity/,
    });
  } finally {
    db.close();
  }
});

test("usageReport() totals match usageBySource() on the v11 fixture, through the async store too", async () => {
  await using store = await openStore(copyFixture("hermes-v11.db"));
  const rows = await store.usageReport({ by: "source" });
  const bySource = await store.usageBySource();
  for (const source of bySource) {
    const row = rows.find((r) => r.key === source.source)!;
    assert.equal(row.sessions, source.session_count);
    assert.equal(row.input_tokens, source.total_input);
    assert.equal(row.output_tokens, source.total_output);
  }
  const days = await store.usageReport({ by: "day" });
  assert.equal(days.reduce((n, r) => n + r.sessions, 0), await store.sessionCount());
});

test("usageReport() is read-only: it runs on a store opened read-only", async () => {
  const path = copyFixture("hermes-v11.db");
  await using store = await openStore(path, { readonly: true });
  assert.ok((await store.usageReport({ by: "month" })).length > 0);
});

test("parseSince() reads relative periods, dates and ISO times, and rejects anything else", () => {
  const now = Date.UTC(2026, 3, 30) / 1000;
  assert.equal(parseSince("30d", now), now - 30 * 86400);
  assert.equal(parseSince("12h", now), now - 12 * 3600);
  assert.equal(parseSince("2w", now), now - 14 * 86400);
  assert.equal(parseSince("6m", now), now - 180 * 86400);
  assert.equal(parseSince("6mo", now), now - 180 * 86400, "months are mo in every command");
  assert.equal(parseSince("1y", now), now - 365 * 86400);
  assert.equal(parseSince("90min", now), now - 90 * 60);
  assert.equal(parseSince("2026-04-01", now), Date.UTC(2026, 3, 1) / 1000);
  assert.equal(parseSince("2026-04-01T12:00:00Z", now), Date.UTC(2026, 3, 1, 12) / 1000);
  for (const bad of ["", "yesterday", "-3d", "3yr", "2026-13-45", "1e9d"]) {
    assert.throws(() => parseSince(bad, now), RangeError, JSON.stringify(bad));
  }
});

test("dataVersion() changes when another connection commits and stays put otherwise", async () => {
  const path = tempDbPath();
  const db = await SessionDB.open({ path });
  const other = await SessionDB.open({ path });
  try {
    const first = db.dataVersion();
    assert.equal(db.dataVersion(), first);
    db.getSession("nothing");
    assert.equal(db.dataVersion(), first, "a read changes nothing");
    other.createSession("s1", "cli");
    const second = db.dataVersion();
    assert.notEqual(second, first, "another connection's commit");
    db.createSession("s2", "cli");
    assert.notEqual(db.dataVersion(), second, "our own commit");
  } finally {
    other.close();
    db.close();
  }
});
