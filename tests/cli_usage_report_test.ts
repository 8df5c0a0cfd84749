// `hermes-state usage`: the table, --json and --csv on the v11 fixture, and its usage errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runCli, v11Copy } from "./_cli_io.ts";

test("usage --since all prints a row per day and a total", async () => {
  const run = await runCli(["--db", v11Copy(), "usage", "--since", "all"]);
  assert.equal(run.code, 0, run.err);
  const lines = run.out.trimEnd().split("\n");
  assert.match(
    lines[0],
    /^day \(UTC\)\s+sessions\s+input\s+output\s+cache read\s+reasoning\s+cost$/,
  );
  assert.match(lines[1], /^2025-12-21\s+6\s+139,068\s+/);
  assert.match(lines[lines.length - 1], /^total\s+42\s+1,128,736\s+18,547\s+/);
});

test("usage --tz groups the days of that zone, and reads a --since date as its midnight", async () => {
  const file = v11Copy();
  const run = await runCli(["--db", file, "usage", "--tz", "asia/shanghai", "--since", "all"]);
  assert.equal(run.code, 0, run.err);
  const lines = run.out.trimEnd().split("\n");
  assert.match(lines[0], /^day \(Asia\/Shanghai\)\s+sessions\s/);
  // Four of the six sessions of 2025-12-21 (UTC) started after 16:00 UTC: midnight in Shanghai.
  assert.match(lines[1], /^2025-12-21\s+2\s/);
  assert.match(lines[2], /^2025-12-22\s+4\s/);
  assert.match(lines[lines.length - 1], /^total\s+42\s/);
  const since = await runCli([
    "--db",
    file,
    "usage",
    "--tz",
    "Asia/Shanghai",
    "--since",
    "2026-04-27",
    "--json",
  ]);
  assert.equal(since.code, 0, since.err);
  const body = JSON.parse(since.out);
  assert.equal(body.since, Date.UTC(2026, 3, 26, 16) / 1000);
  assert.equal(body.time_zone, "Asia/Shanghai");
});

test("usage --tz with an unknown zone is a usage error naming it", async () => {
  const run = await runCli(["--db", v11Copy(), "usage", "--tz", "Mars/Olympus_Mons"]);
  assert.equal(run.code, 2);
  assert.match(
    run.err,
    /--tz must be a time zone like UTC, Asia\/Shanghai, America\/New_York or \+05:30, got "Mars\/Olympus_Mons"/,
  );
  assert.equal(run.out, "");
});

test("usage --since takes Unix seconds as list does, and names every form when it cannot read one", async () => {
  const run = await runCli(["--db", v11Copy(), "usage", "--since", "1777000000", "--json"]);
  assert.equal(run.code, 0, run.err);
  assert.equal(JSON.parse(run.out).since, 1777000000);
  const later = await runCli(["--db", v11Copy(), "usage", "--since", "1900000000"]);
  assert.equal(
    later.out,
    "No sessions started since 2030-03-17T17:46:40.000Z (--since all for any age).\n",
  );
  // Milliseconds are no seconds: refused, not read as a time thousands of years ahead.
  assert.equal((await runCli(["--db", v11Copy(), "usage", "--since", "1700000000000"])).code, 2);
  const bad = await runCli(["--db", v11Copy(), "usage", "--since", "bogus"]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.err,
    /^hermes-state usage: --since must be an age \(30d, 12h, 2w, 6mo, 1y\), a date like 2026-04-01, Unix seconds or "all", got "bogus"\n/,
  );
});

test("usage --by model --json prints the rows of usageReport", async () => {
  const run = await runCli([
    "--db",
    v11Copy(),
    "usage",
    "--by",
    "model",
    "--since",
    "all",
    "--json",
  ]);
  assert.equal(run.code, 0, run.err);
  const body = JSON.parse(run.out);
  assert.equal(body.by, "model");
  assert.equal(body.since, null);
  assert.equal(body.rows[0].key, "anthropic/claude-sonnet-4.5");
  assert.equal(body.rows.reduce((n: number, r: { sessions: number }) => n + r.sessions, 0), 42);
});

test("usage --by week --csv prints a header and one line per week", async () => {
  const run = await runCli(["--db", v11Copy(), "usage", "--by", "week", "--since", "all", "--csv"]);
  assert.equal(run.code, 0, run.err);
  const lines = run.out.trimEnd().split("\n");
  assert.equal(
    lines[0],
    "week,sessions,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,estimated_cost_usd,actual_cost_usd",
  );
  assert.deepEqual(lines.slice(1).map((line) => line.split(",")[0]), [
    "2025-12-15",
    "2026-04-20",
    "2026-04-27",
  ]);
});

test("usage --since 3d counts only sessions started in the last 3 days of the clock", async () => {
  const run = await runCli(["--db", v11Copy(), "usage", "--since", "3d", "--json"]);
  assert.equal(run.code, 0, run.err);
  const keys = JSON.parse(run.out).rows.map((r: { key: string }) => r.key);
  // The clock is 2026-04-29 10:05 UTC; the 2026-04-26 sessions started before 10:05.
  assert.deepEqual(keys, ["2026-04-27", "2026-04-28", "2026-04-29"]);
});

test("usage with no session in the period says which period, and how to count them all", async () => {
  const file = v11Copy();
  const recent = await runCli(["--db", file, "usage", "--since", "1h"]);
  assert.equal(recent.code, 0, recent.err);
  assert.equal(
    recent.out,
    "No sessions started in the last 1h (--since all for any age).\n",
  );
  const dated = await runCli(["--db", file, "usage", "--since", "2026-05-01"]);
  assert.equal(
    dated.out,
    "No sessions started since 2026-05-01 (--since all for any age).\n",
  );
  const none = await runCli(["--db", file, "usage", "--since", "all", "--source", "nowhere"]);
  assert.equal(none.out, "No sessions started yet.\n");
});

test("usage exits 2 on a bad --by or --since, and on --csv with --json", async () => {
  const path = v11Copy();
  for (const args of [["--by", "hour"], ["--since", "yesterday"], ["--csv", "--json"]]) {
    const run = await runCli(["--db", path, "usage", ...args]);
    assert.equal(run.code, 2, args.join(" "));
    assert.match(run.err, /^hermes-state usage: /);
  }
});
