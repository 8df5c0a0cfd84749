/**
 * The usage report over a newer Hermes's per-model usage rows
 * (`session_model_usage`), by model, day and source: the library's report
 * against the statement that sums the sessions' own totals (what the report
 * ran before it read those rows, and still runs on a file without them),
 * and against the report's own statement run raw (the floor). All three
 * read the same file in the same run.
 *
 * `deno run -A bench/usage_by_model.ts [--sessions N]` (default 10,000
 * sessions of 7 models, each with two rows of usage for two models, and
 * every other one a row of side work: 25,000 rows).
 *
 * @module
 */
import process from "node:process";
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import { modelUsagePartsSql, sessionsWithModelUsageSql } from "../lib/core/usage_by_model.ts";

const argv = process.argv.slice(2);
const at = argv.indexOf("--sessions");
const sessions = at === -1 ? 10_000 : Number(argv[at + 1]);
const dir = mkdtempSync(join(tmpdir(), "hermes-usage-by-model-"));

function p50(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/** The layout of a newer Hermes's schema 22. */
const TABLE = `CREATE TABLE session_model_usage (
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  model TEXT NOT NULL, billing_provider TEXT NOT NULL DEFAULT '',
  billing_base_url TEXT NOT NULL DEFAULT '', billing_mode TEXT NOT NULL DEFAULT '',
  task TEXT NOT NULL DEFAULT '', api_call_count INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0, estimated_cost_usd REAL NOT NULL DEFAULT 0,
  actual_cost_usd REAL NOT NULL DEFAULT 0, cost_status TEXT, cost_source TEXT,
  first_seen REAL, last_seen REAL,
  PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task));
CREATE INDEX idx_session_model_usage_session ON session_model_usage(session_id)`;

/** The groupings timed, with the key the session-totals statement groups by. */
const GROUPINGS = [
  { by: "model", key: "model" },
  { by: "day", key: "strftime('%Y-%m-%d', started_at, 'unixepoch')" },
  { by: "source", key: "source" },
] as const;

const SUMS = `TOTAL(input_tokens), TOTAL(output_tokens), TOTAL(cache_read_tokens),
  TOTAL(cache_write_tokens), TOTAL(reasoning_tokens), SUM(estimated_cost_usd), SUM(actual_cost_usd)`;

try {
  const path = join(dir, "state.db");
  {
    using db = await SessionDB.open({ path, synchronous: "normal" });
    db.createSession("warm", "cli");
  }
  const raw = (await loadDriver())(path);
  raw.exec(TABLE);
  raw.exec("BEGIN");
  const session = raw.prepare(
    `INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens,
       estimated_cost_usd, message_count) VALUES (?, ?, ?, ?, ?, ?, ?, 10)`,
  );
  const usage = raw.prepare(
    `INSERT INTO session_model_usage (session_id, model, task, api_call_count, input_tokens,
       output_tokens, estimated_cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  for (let i = 1; i <= sessions; i++) {
    const id = `s${i}`;
    const n = i % 50;
    const source = ["cli", "telegram", "discord"][i % 3];
    session.run(id, source, `model-${i % 7}`, 1_777_000_000 + i * 60, 1000 * n, 100 * n, 0.01 * n);
    usage.run(id, `model-${i % 7}`, "", 3, 600 * n, 60 * n, 0.006 * n);
    usage.run(id, `model-${(i + 1) % 7}`, "", 2, 400 * n, 40 * n, 0.004 * n);
    if (i % 2 === 0) usage.run(id, "mini", "title", 1, 50, 5, 0.0001);
  }
  raw.exec("COMMIT");
  using db = await SessionDB.open({ path, readonly: true });
  const dialect = {
    greatest: (a: string, b: string) => `MAX(${a}, ${b})`,
    sum: (c: string) => `TOTAL(${c})`,
  };
  const out: Record<string, unknown> = {
    sessions,
    usage_rows: sessions * 2 + Math.floor(sessions / 2),
  };
  for (const { by, key } of GROUPINGS) {
    const totals = raw.prepare(
      `SELECT ${key} AS key, COUNT(*) AS sessions, ${SUMS} FROM sessions WHERE started_at >= ?
       GROUP BY 1 ORDER BY key`,
    );
    const parts = by === "model"
      ? modelUsagePartsSql("chosen", dialect)
      : sessionsWithModelUsageSql("chosen", dialect);
    const floor = raw.prepare(
      `WITH chosen AS (SELECT * FROM sessions WHERE started_at >= ?)
       SELECT ${key} AS key, COUNT(DISTINCT id) AS sessions, ${SUMS}
       FROM ${parts} AS sessions GROUP BY 1 ORDER BY key`,
    );
    const times = { library: [] as number[], floor: [] as number[], totals: [] as number[] };
    for (let round = 0; round < 15; round++) {
      let t = performance.now();
      db.usageReport({ by, since: 0 });
      times.library.push(performance.now() - t);
      t = performance.now();
      floor.all(0);
      times.floor.push(performance.now() - t);
      t = performance.now();
      totals.all(0);
      times.totals.push(performance.now() - t);
    }
    out[by] = {
      library_p50_ms: +p50(times.library).toFixed(1),
      same_sql_raw_p50_ms: +p50(times.floor).toFixed(1),
      session_totals_p50_ms: +p50(times.totals).toFixed(1),
      library_vs_raw: +(p50(times.library) / p50(times.floor)).toFixed(2),
      library_vs_session_totals: +(p50(times.library) / p50(times.totals)).toFixed(2),
    };
  }
  raw.close();
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
