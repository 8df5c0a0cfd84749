/**
 * How long the long writes hold the lock, and how long a concurrent writer
 * waits meanwhile: `prune`, `import` and the v10 → v11 migration, each as
 * one long transaction (what they did before) and as they run now (short
 * transactions with the lock left free between them, `lib/sqlite/batches.ts`).
 *
 * The concurrent writer is Python's sqlite3 in another process, as a
 * Python Hermes gateway is: it commits a tiny write every 20 ms with a
 * 10 s busy timeout and reports each wait for the lock. Small data on
 * purpose (a shared machine): `--sessions 200 --messages 25` by default.
 *
 * `deno run -A bench/lock_waits.ts [--sessions N] [--messages N]`
 *
 * @module
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { SessionDB, storeOf } from "../lib/sqlite/session_db.ts";
import { pruneSessions } from "../lib/sqlite/prune.ts";
import { LockPacer } from "../lib/sqlite/batches.ts";
import { migrate } from "../lib/sqlite/schema/migrate.ts";
import { finishFtsBackfill } from "../lib/sqlite/schema/fts_backfill.ts";
import { Writer } from "../lib/sqlite/write.ts";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import { planCorpus, sessionMessages } from "./corpus.ts";
import { tempDir } from "../tests/_helpers.ts";

const WRITER = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
waits = []
stop = time.time() + 600
while time.time() < stop:
    if sys.stdin.closed: break
    t = time.perf_counter()
    c.execute("BEGIN IMMEDIATE")
    waits.append(time.perf_counter() - t)
    c.execute("INSERT OR REPLACE INTO state_meta (key, value) VALUES ('bench_writer', ?)", (str(t),))
    c.execute("COMMIT")
    print(round(waits[-1] * 1000, 1), flush=True)
    time.sleep(0.02)
`;

interface Waits {
  count: number;
  longestMs: number;
  overOneSecond: number;
}

/** Starts the Python writer; `stop()` ends it and returns its waits. */
function concurrentWriter(path: string): { stop: () => Promise<Waits> } {
  const child = spawn("python3", ["-c", WRITER, path], { stdio: ["pipe", "pipe", "inherit"] });
  const waits: number[] = [];
  let buffer = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop()!;
    for (const line of lines) waits.push(Number(line));
  });
  return {
    stop: async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill();
      await new Promise((resolve) => child.once("exit", resolve));
      return {
        count: waits.length,
        longestMs: Math.max(0, ...waits),
        overOneSecond: waits.filter((w) => w > 1000).length,
      };
    },
  };
}

/** Lets the event loop run, so the writer's output is read while a sync call blocks it. */
function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

const sessions = option("sessions", 200);
const messages = option("messages", 25);
const dir = tempDir();
const corpus = planCorpus({ sessions, messages, seed: 7 });

/** A file of old, ended sessions (started 200 days before the clock). */
async function build(path: string): Promise<void> {
  const db = await SessionDB.open({ path, clock: () => 1_000_000, synchronous: "normal" });
  for (const plan of corpus.sessions) {
    db.createSession(plan.id, plan.source);
    db.appendMessages(plan.id, sessionMessages(corpus, plan));
    db.endSession(plan.id, "done");
  }
  db.close();
}

const NOW = 1_000_000 + 200 * 86_400;
const rows: string[][] = [];

async function measure(what: string, path: string, work: () => number | Promise<number>) {
  const writer = concurrentWriter(path);
  await tick();
  await tick();
  const holdMs = await work();
  const waits = await writer.stop();
  rows.push([
    what,
    holdMs.toFixed(0),
    waits.longestMs.toFixed(0),
    String(waits.overOneSecond),
    String(waits.count),
  ]);
}

async function prune(batched: boolean): Promise<void> {
  const path = join(dir, `prune-${batched}.db`);
  await build(path);
  await measure(`prune (${batched ? "now" : "one transaction"})`, path, async () => {
    const db = await SessionDB.open({ path, clock: () => NOW });
    let longest = 0;
    const pruned = pruneSessions(storeOf(db), { olderThanDays: 90 }, {
      batch: batched ? {} : { holdMs: Number.POSITIVE_INFINITY },
      report: (report) => longest = report.longestMs,
    });
    if (pruned !== sessions) throw new Error(`pruned ${pruned} of ${sessions}`);
    db.close();
    await tick();
    return longest;
  });
}

async function importing(paced: boolean): Promise<void> {
  const source = join(dir, "import-source.db");
  await build(source);
  const from = await SessionDB.open({ path: source, readonly: true });
  const records = [...from.iterateExport()];
  from.close();
  const path = join(dir, `import-${paced}.db`);
  (await SessionDB.open({ path })).close();
  await measure(`import (${paced ? "now" : "back to back"})`, path, async () => {
    const db = await SessionDB.open({ path });
    const pacer = new LockPacer();
    let longest = 0;
    for (const record of records) {
      const started = performance.now();
      db.importSession(record);
      longest = Math.max(longest, performance.now() - started);
      const pause = paced ? pacer.due() : 0;
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
    db.close();
    return longest;
  });
}

async function migration(batched: boolean): Promise<void> {
  const path = join(dir, `migrate-${batched}.db`);
  await build(path);
  const open = await loadDriver();
  const raw = open(path);
  // Back to v10: the version row, and the trigram table gone with its triggers.
  raw.exec("UPDATE schema_version SET version = 10");
  raw.close();
  await measure(`v10 → v11 migration (${batched ? "now" : "one transaction"})`, path, () => {
    const db = open(path);
    db.exec("PRAGMA busy_timeout = 1000");
    const writer = new Writer(db);
    const started = performance.now();
    if (batched) {
      writer.run(() => migrate(db));
      const first = performance.now() - started;
      const report = finishFtsBackfill((fn) => writer.run(fn), db);
      db.close();
      return Math.max(first, report?.longestMs ?? 0);
    }
    writer.run(() => {
      migrate(db);
      finishFtsBackfill((fn) => fn(), db, { holdMs: Number.POSITIVE_INFINITY });
    });
    const held = performance.now() - started;
    db.close();
    return held;
  });
}

try {
  for (const batched of [false, true]) await prune(batched);
  for (const paced of [false, true]) await importing(paced);
  for (const batched of [false, true]) await migration(batched);
  const header = [
    "what",
    "longest lock hold (ms)",
    "longest wait of a concurrent writer (ms)",
    "waits over 1 s",
    "writes",
  ];
  const table = [header, header.map(() => "---"), ...rows];
  process.stdout.write(`${sessions} sessions × ${messages} messages\n\n`);
  process.stdout.write(table.map((row) => `| ${row.join(" | ")} |`).join("\n") + "\n");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
