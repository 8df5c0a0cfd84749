/**
 * The long reliability run (`deno task soak`): the reliability suite's
 * scenarios with bigger numbers, plus the lock test with the default retry
 * budget. Prints its figures and exits 1 if anything was lost, duplicated,
 * half-written or damaged.
 *
 * Options: `--writers N` (8), `--appends N` per writer (2000), `--kills N`
 * (100), `--per-round N` writers killed together (2), `--seed N`,
 * `--skip-lock` (saves about 20 s).
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { type RuntimeName, runtimeName } from "../../lib/sqlite/driver/load.ts";
import { WriteBusyError } from "../../lib/sqlite/write_busy_error.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { describeVerdict, sound, type Verdict } from "../reliability/_checks.ts";
import { runConcurrentWriters, runCrashes } from "../reliability/_scenarios.ts";
import { runSeed, startWorker, workerRuntimes } from "../reliability/_runtimes.ts";

function print(line: string): void {
  process.stdout.write(line + "\n");
}

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`Cannot run the soak: --${name} must be a non-negative integer`);
  }
  return value;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function tally(runtimes: readonly RuntimeName[]): string {
  const counts = new Map<string, number>();
  for (const runtime of runtimes) counts.set(runtime, (counts.get(runtime) ?? 0) + 1);
  return [...counts].map(([runtime, n]) => `${runtime} ${n}`).join(", ");
}

function figures(verdict: Verdict): string {
  return [
    `lost ${verdict.lost.length}`,
    `duplicated ${verdict.duplicated.length}`,
    `half-written ${verdict.halfWritten.length}`,
    `counters ${verdict.counters.length === 0 ? "ok" : "WRONG"}`,
    `integrity ${verdict.integrity}`,
    `fts ${verdict.fts.length === 0 ? "ok" : "DAMAGED"}`,
  ].join(", ");
}

/** The lock test with the default budget: about 15 × (1 s busy wait + 20–150 ms). */
async function defaultBudget(dir: string): Promise<{ ok: boolean; line: string }> {
  const path = join(dir, "lock.db");
  const db = await SessionDB.open({ path });
  db.setMeta("before", "1");
  const other = workerRuntimes(["bun", "deno"]).find((r) => r !== runtimeName()) ?? runtimeName();
  const locker = startWorker(other, "_locker.ts", [JSON.stringify({ path, holdMs: 21_000 })]);
  await locker.waitFor((line) => line === "locked", "taking the lock");
  const started = performance.now();
  let error: unknown;
  try {
    db.setMeta("during", "2");
  } catch (caught) {
    error = caught;
  }
  const elapsed = performance.now() - started;
  await locker.succeeded();
  db.setMeta("after", "3");
  const nothingWritten = db.getMeta("during") === undefined;
  const nextOk = db.getMeta("after") === "3" && db.getMeta("locker") === "held";
  db.close();
  const ok = error instanceof WriteBusyError && error.attempts === 15 && elapsed > 15_000 &&
    elapsed < 19_000 && nothingWritten && nextOk;
  const what = error instanceof Error ? `${error.name}: ${error.message}` : "no error";
  return {
    ok,
    line:
      `lock: held by ${other} for 21 s with the default budget; the write gave up after ${
        seconds(elapsed)
      } with ${what}; half-written ${nothingWritten ? "nothing" : "SOMETHING"}; ` +
      `next write ${nextOk ? "ok" : "FAILED"}`,
  };
}

const seed = option("seed", runSeed());
const writerCount = option("writers", 8);
const appendsEach = option("appends", 2000);
const killCount = option("kills", 100);
const perRound = Math.max(1, option("per-round", 2));
const all = workerRuntimes(["deno", "bun", "node"]);
const dir = mkdtempSync(join(tmpdir(), "hermes-state-soak-"));
let failed = false;

try {
  print(`soak: seed ${seed} (replay with --seed ${seed}), runtimes ${all.join(", ")}`);

  const writers = Array.from({ length: writerCount }, (_, i) => all[i % all.length]);
  const concurrentDir = join(dir, "concurrent");
  mkdirSync(concurrentDir);
  const concurrent = await runConcurrentWriters({
    dir: concurrentDir,
    writers,
    readers: [all[0], all[all.length - 1]],
    appendsEach,
    seed,
  });
  const cv = concurrent.verdict;
  const reads = concurrent.readers.map((line) => Number(line.split(" ")[1]) || 0);
  print(
    `concurrent: writers ${writers.length} (${tally(writers)}), appends ${cv.appends} ` +
      `(shared session ${concurrent.shared}), readers ${reads.length} ` +
      `(${reads.reduce((a, b) => a + b, 0)} consistent reads), ${figures(cv)}, ${
        seconds(concurrent.ms)
      }`,
  );
  if (!sound(cv) || cv.rows !== writers.length * appendsEach) {
    failed = true;
    print(`  PROBLEM: ${describeVerdict(cv)}; rows ${cv.rows}`);
  }

  const crashDir = join(dir, "crash");
  mkdirSync(crashDir);
  const rounds = Math.ceil(killCount / perRound);
  const crashes = await runCrashes({
    dir: crashDir,
    runtimes: all,
    rounds,
    writersPerRound: perRound,
    maxDelayMs: 300,
    seed,
    onRound: (round, verdict) => {
      if (!sound(verdict)) print(`  round ${round + 1}: ${describeVerdict(verdict)}`);
      else if ((round + 1) % 10 === 0) {
        print(`  ${round + 1}/${rounds} rounds: ${figures(verdict)}`);
      }
    },
  });
  const bad = crashes.verdicts.filter((verdict) => !sound(verdict)).length;
  const last = crashes.verdicts.at(-1)!;
  print(
    `crashes: kills ${crashes.kills} (${perRound} writers at once, ${
      all.join("/")
    }), appends ${crashes.appends} ` +
      `acknowledged, ${last.rows - last.appends} more landed unacknowledged, ` +
      `rounds with a problem ${bad}, ${figures(last)}, ${seconds(crashes.ms)}`,
  );
  if (bad > 0 || crashes.kills !== rounds * perRound) failed = true;

  if (!process.argv.includes("--skip-lock")) {
    const lock = await defaultBudget(dir);
    print(lock.line);
    if (!lock.ok) failed = true;
  }

  const lost = cv.lost.length + crashes.verdicts.reduce((n, v) => n + v.lost.length, 0);
  const duplicated = cv.duplicated.length + last.duplicated.length;
  const integrity = sound(cv) && bad === 0 ? "ok" : "FAILED";
  print(
    `writers = ${writers.length}, appends = ${
      cv.appends + crashes.appends
    }, kills = ${crashes.kills}, ` +
      `lost = ${lost}, duplicated = ${duplicated}, integrity ${integrity}`,
  );
} catch (error) {
  failed = true;
  print(`soak failed: ${error instanceof Error ? error.stack : String(error)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
