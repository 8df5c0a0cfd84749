/**
 * PostgreSQL benchmarks, on the server in `$HERMES_TEST_PG_URL`:
 *
 * - `sync` of a new file (messages/s) and of the same file unchanged (s);
 * - search p50 per kind on the synced corpus, beside the SQLite store's;
 * - N writer processes appending at once to PostgreSQL and to one SQLite file.
 *
 * `deno run -A bench/pg.ts [--sessions N] [--messages M] [--writers W] [--appends A] [--warmup U]`
 * (defaults: 200 sessions × 100 messages; 8 writers × 1,000 timed appends, each writer after
 * 300 untimed ones: `writer_child.ts`). Keep it small on a shared box.
 *
 * @module
 */
import process from "node:process";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { connectSyncTarget, syncFile } from "../lib/postgres/sync.ts";
import { corpusArgs, planCorpus, sessionMessages } from "./corpus.ts";
import { startWorker, WORKERS } from "../tests/reliability/_runtimes.ts";

const url = process.env.HERMES_TEST_PG_URL;
if (!url) throw new Error("Set HERMES_TEST_PG_URL (scripts/pg.sh start prints one)");
const argv = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const at = argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(argv[at + 1]);
};
const corpusOptions = { sessions: 200, messages: 100, ...corpusArgs(argv) };
const dir = mkdtempSync(join(tmpdir(), "hermes-pg-bench-"));
const schema = `bench_${Date.now().toString(36)}`;
const target = `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;
const out: Record<string, unknown> = { corpus: corpusOptions };

/** The writer processes' script, as `startWorker` names it (from the workers' folder). */
const WRITER = relative(WORKERS, fileURLToPath(new URL("./writer_child.ts", import.meta.url)));

/**
 * Seconds every core has been busy since boot (`/proc/stat`: user, nice, system, irq, softirq),
 * or NaN where there is no such file.
 */
function machineBusySeconds(): number {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq] = fields.slice(1).map(Number);
    return (user + nice + system + irq + softirq) / 100;
  } catch {
    return NaN;
  }
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

try {
  // 1. A state.db as Hermes writes it.
  const file = join(dir, "state.db");
  const corpus = planCorpus(corpusOptions);
  {
    let clock = 1_700_000_000;
    const db = await SessionDB.open({ path: file, synchronous: "normal", clock: () => clock++ });
    for (const plan of corpus.sessions) {
      db.createSession(plan.id, plan.source, { model: plan.model });
      db.appendMessages(plan.id, sessionMessages(corpus, plan));
      if (plan.endedAt !== null) db.endSession(plan.id, plan.endReason ?? "cli_close");
    }
    db.close();
  }
  // 2. sync: new, then unchanged.
  const client = await connectSyncTarget(target);
  let t = performance.now();
  const first = await syncFile(client, file, { host: "bench" });
  const newSeconds = (performance.now() - t) / 1000;
  t = performance.now();
  const again = await syncFile(client, file, { host: "bench" });
  const unchangedSeconds = (performance.now() - t) / 1000;
  // The searches measure settled tables, as autovacuum leaves them soon after a load: without
  // this, its run on the 400,000 new rows (and the first reads setting every row's hint bits)
  // shares the two cores with the timed searches.
  await client.query("VACUUM ANALYZE sessions, messages, message_words");
  await client.close();
  out.sync = {
    messages: first.messages,
    new_pass_s: +newSeconds.toFixed(2),
    messages_per_s: Math.round(first.messages / newSeconds),
    unchanged_pass_s: +unchangedSeconds.toFixed(3),
    unchanged_wrote: again.messages,
  };
  // 3. search p50 per kind, PostgreSQL beside SQLite, same data.
  const queries: Record<string, string[]> = {
    word: ["docker", "deploy", "error", "config", "test"],
    phrase: ['"docker compose"', '"unit test"', '"error message"'],
    prefix: ["dep*", "conf*", "tes*"],
    boolean: ["docker OR kubernetes", "error NOT warning", "deploy AND test"],
    cjk2: ["数据", "记忆", "测试"],
    cjk3: ["数据库", "记忆系统", "负荷测试"],
  };
  const pg = await openStore(target);
  const sqlite = await SessionDB.open({ path: file, readonly: true });
  const search: Record<string, unknown> = {};
  for (const [kind, list] of Object.entries(queries)) {
    const pgTimes: number[] = [];
    const sqliteTimes: number[] = [];
    // Warm every pooled connection first (each prepares its statements once).
    for (let round = 0; round < 4; round++) for (const q of list) await pg.searchMessages(q);
    for (let round = 0; round < 5; round++) {
      for (const q of list) {
        let s = performance.now();
        await pg.searchMessages(q);
        pgTimes.push(performance.now() - s);
        s = performance.now();
        sqlite.searchMessages(q);
        sqliteTimes.push(performance.now() - s);
      }
    }
    search[kind] = {
      pg_p50_ms: +p50(pgTimes).toFixed(2),
      sqlite_p50_ms: +p50(sqliteTimes).toFixed(2),
    };
  }
  out.search = search;
  sqlite.close();
  await pg.close();
  // 4. N writers appending at once: PostgreSQL vs one SQLite file.
  const writers = arg("writers", 8);
  const appends = arg("appends", 1000);
  const warmup = arg("warmup", 300);
  const writerTarget = `${url}${url.includes("?") ? "&" : "?"}schema=${schema}_w`;
  await (await openStore(writerTarget)).close();
  const rate = async (store: string) => {
    const startFile = join(dir, `start-${Math.random().toString(36).slice(2)}`);
    const workers = Array.from(
      { length: writers },
      (_, i) =>
        startWorker("deno", WRITER, [JSON.stringify({
          url: store,
          // Each writer its own session, as gateways write their own conversations (a shared
          // session serializes its appends on its row's counters, on either engine).
          session: `bench-${i}`,
          count: appends,
          warmup,
          seed: i,
          startFile,
        })]),
    );
    // Timed from the moment every writer is connected, warmed up and told to start together.
    await Promise.all(
      workers.map((w) => w.waitFor((l) => l === "ready", "ready", 120_000)),
    );
    const busyBefore = machineBusySeconds();
    const started = performance.now();
    writeFileSync(startFile, "");
    const exits = await Promise.all(workers.map((w) => w.exited));
    const seconds = (performance.now() - started) / 1000;
    const busy = machineBusySeconds() - busyBefore;
    if (exits.some((e) => e.code !== 0)) throw new Error(workers.map((w) => w.stderr).join("\n"));
    const total = writers * appends;
    let clientMicros = 0;
    for (const w of workers) {
      clientMicros += Number(w.lines.find((l) => l.startsWith("done "))!.slice(5));
    }
    return {
      appends_per_s: Math.round(total / seconds),
      // Per append: the writers' own CPU, and every core's busy time (writers, server, all).
      writer_cpu_us: Math.round(clientMicros / total),
      machine_busy_us: Number.isNaN(busy) ? null : Math.round((busy / total) * 1e6),
    };
  };
  // Both stores exist before the writers start (they race on appends, not on creation).
  const writersFile = join(dir, "writers.db");
  await (await openStore(writersFile)).close();
  const onPostgres = await rate(writerTarget);
  const onSqlite = await rate(writersFile);
  out.writers = {
    writers,
    appends_each: appends,
    warmup_each: warmup,
    postgres_appends_per_s: onPostgres.appends_per_s,
    sqlite_appends_per_s: onSqlite.appends_per_s,
    ratio: +(onPostgres.appends_per_s / onSqlite.appends_per_s).toFixed(2),
    postgres: onPostgres,
    sqlite: onSqlite,
  };
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
} finally {
  rmSync(dir, { recursive: true, force: true });
  const { connectPg } = await import("../lib/postgres/_client.ts");
  const admin = await connectPg(url, "public", { max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}_w" CASCADE`);
  await admin.close();
}
