/**
 * The PostgreSQL store's change marker (`dataVersion`) on a large store, on
 * the server in `$HERMES_TEST_PG_URL`: every live page and `show --follow`
 * reads it each second, and the session browser once per request, so it
 * must cost nothing however many sessions the store holds.
 *
 * Times, each as p50 and p90 of 40 calls after 3 untimed ones: `SELECT 1`
 * (the round trip, the baseline), the marker the store read up to stop 32
 * (newest message id, session count, row statistics), and
 * `store.dataVersion()` now, on a schema of N sessions (one message per 10
 * sessions) written with `generate_series`, dropped at the end.
 *
 * `deno run -A bench/pg_marker.ts [--sessions N]` (default 1,000,000; 20 s
 * to fill on two cores).
 *
 * @module
 */
import process from "node:process";
import { openStore } from "../lib/open_store.ts";
import { connectPg } from "../lib/postgres/_client.ts";

const url = process.env.HERMES_TEST_PG_URL;
if (!url) throw new Error("Set HERMES_TEST_PG_URL (scripts/pg.sh start prints one)");
const at = process.argv.indexOf("--sessions");
const sessions = at === -1 ? 1_000_000 : Number(process.argv[at + 1]);
if (!Number.isSafeInteger(sessions) || sessions < 1) {
  throw new RangeError(`--sessions must be a positive integer: current value is ${sessions}`);
}
const schema = `bench_marker_${Date.now().toString(36)}`;

/** The marker up to stop 32: exact for inserts, lagging for updates, a count of every session. */
const COUNTING_MARKER = `SELECT (SELECT COALESCE(MAX(id), 0) FROM messages) AS newest,
  (SELECT COUNT(*) FROM sessions) AS sessions,
  (SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND relname IN ('sessions', 'messages', 'state_meta'))
  AS changes`;

/** Milliseconds of 40 calls of `run` after 3 untimed ones: p50 and p90. */
async function timed(run: () => Promise<unknown>): Promise<{ p50: number; p90: number }> {
  for (let i = 0; i < 3; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < 40; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: times[20], p90: times[36] };
}

const store = await openStore(`${url}${url.includes("?") ? "&" : "?"}schema=${schema}`);
const client = await connectPg(url, schema, { max: 1 });
try {
  const fill = performance.now();
  await client.query(
    `INSERT INTO sessions (id, source, started_at, message_count)
     SELECT 's' || g, 'cli', 1700000000 + g, (g % 10 = 0)::int FROM generate_series(1, $1::int) g`,
    [sessions],
  );
  await client.query(
    `INSERT INTO messages (session_id, role, content, timestamp)
     SELECT 's' || g, 'user', 'hello ' || g, 1700000000 + g
     FROM generate_series(10, $1::int, 10) g`,
    [sessions],
  );
  await client.query("VACUUM ANALYZE sessions");
  await client.query("VACUUM ANALYZE messages");
  process.stdout.write(
    `${sessions.toLocaleString("en")} sessions written in ${
      ((performance.now() - fill) / 1000).toFixed(1)
    } s\n`,
  );
  const baseline = await timed(() => client.query("SELECT 1"));
  const rows: [string, { p50: number; p90: number }][] = [
    ["SELECT 1 (baseline)", baseline],
    ["marker up to stop 32 (count)", await timed(() => client.query(COUNTING_MARKER))],
    ["store.dataVersion() (snapshot)", await timed(() => store.dataVersion())],
  ];
  for (const [name, { p50, p90 }] of rows) {
    process.stdout.write(
      `${name.padEnd(32)} p50 ${p50.toFixed(3).padStart(8)} ms  p90 ${
        p90.toFixed(3).padStart(8)
      } ms  ${(p50 / baseline.p50).toFixed(1).padStart(6)}× baseline\n`,
    );
  }
} finally {
  await client.query(`DROP SCHEMA "${schema}" CASCADE`);
  await client.close();
  await store.close();
}
