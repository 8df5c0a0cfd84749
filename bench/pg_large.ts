/**
 * The PostgreSQL store at a million sessions, on the server in
 * `$HERMES_TEST_PG_URL`: what every open page of the session browser asks
 * of it, each against raw SQL doing the same work.
 *
 * - The change marker (`dataVersion`), which every live page and
 *   `show --follow` reads each second, and the browser before each answer,
 *   against `SELECT 1` (the round trip) and the marker the store read up to
 *   stop 32 (newest message id, session count, row statistics).
 * - The listing's first page (51 rows, "tool" sessions left out), by start
 *   and by last activity (the browser's default), against a plain query of
 *   each order (by last activity: every session's newest message, read one
 *   index probe a session, as the store did up to stop 33).
 *
 * Each timing is the p50 and p90 of 40 calls after 3 untimed ones, on a
 * schema of N sessions (one message per 10 sessions) written with
 * `generate_series`, dropped at the end.
 *
 * `deno run -A bench/pg_large.ts [--sessions N]` (default 1,000,000; 20 s
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
const schema = `bench_large_${Date.now().toString(36)}`;

/** The marker up to stop 32: exact for inserts, lagging for updates, a count of every session. */
const COUNTING_MARKER = `SELECT (SELECT COALESCE(MAX(id), 0) FROM messages) AS newest,
  (SELECT COUNT(*) FROM sessions) AS sessions,
  (SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND relname IN ('sessions', 'messages', 'state_meta'))
  AS changes`;

/** The first page by last activity, in plain SQL: each session's newest message, all read. */
const PLAIN_BY_ACTIVITY = `SELECT s.id, COALESCE(
    (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at) AS active
  FROM sessions s WHERE s.source <> 'tool' ORDER BY active DESC LIMIT 51`;

/** Milliseconds of `times` calls of `run` after 3 untimed ones: p50 and p90. */
async function timed(
  run: () => Promise<unknown>,
  count = 40,
): Promise<{ p50: number; p90: number }> {
  for (let i = 0; i < 3; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(count / 2)], p90: times[Math.floor(count * 0.9)] };
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
  /** Prints one timing, with its p50 against its baseline's. */
  const report = (name: string, time: { p50: number; p90: number }, baseline = time) =>
    process.stdout.write(
      `${name.padEnd(34)} p50 ${time.p50.toFixed(3).padStart(9)} ms  p90 ${
        time.p90.toFixed(3).padStart(9)
      } ms  ${(time.p50 / baseline.p50).toFixed(2).padStart(7)}× its baseline\n`,
    );
  const roundTrip = await timed(() => client.query("SELECT 1"));
  report("SELECT 1 (baseline)", roundTrip);
  report(
    "marker up to stop 32 (count)",
    await timed(() => client.query(COUNTING_MARKER)),
    roundTrip,
  );
  report("store.dataVersion() (snapshot)", await timed(() => store.dataVersion()), roundTrip);
  const page = { limit: 51, excludeSources: ["tool"] };
  const byStart = await timed(() =>
    client.query(`SELECT id FROM sessions WHERE source <> 'tool' ORDER BY started_at DESC LIMIT 51`)
  );
  report("listing by start: plain SQL", byStart);
  report("listSessionsRich() by start", await timed(() => store.listSessionsRich(page)), byStart);
  const byActivity = await timed(() => client.query(PLAIN_BY_ACTIVITY), 5);
  report("listing by activity: plain SQL", byActivity);
  report(
    "listSessionsRich() by activity",
    await timed(() => store.listSessionsRich({ ...page, orderByLastActive: true })),
    byActivity,
  );
} finally {
  await client.query(`DROP SCHEMA "${schema}" CASCADE`);
  await client.close();
  await store.close();
}
