/**
 * The two multi-process scenarios, shared by the test suite (small numbers)
 * and `deno task soak` (large numbers).
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RuntimeName } from "../../lib/sqlite/driver/load.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { newLedger, record, type Verdict, verify } from "./_checks.ts";
import { delay, startWorker, type Worker } from "./_runtimes.ts";
import { mulberry32 } from "../_random.ts";
import type { WriterConfig } from "./_writer.ts";

/** Options of {@linkcode runConcurrentWriters}. */
export interface ConcurrentOptions {
  /** A folder of its own. */
  readonly dir: string;
  /** The runtime of each writer, in turn (its length is the number of writers). */
  readonly writers: readonly RuntimeName[];
  /** The runtime of each reader process. */
  readonly readers: readonly RuntimeName[];
  /** Messages each writer appends. */
  readonly appendsEach: number;
  /** Seed of the writers' choices. */
  readonly seed: number;
}

/** What {@linkcode runConcurrentWriters} saw. */
export interface ConcurrentReport {
  /** The database file. */
  readonly path: string;
  /** The check of the file afterwards. */
  readonly verdict: Verdict;
  /** Each writer's first attempt and last acknowledgement (epoch ms). */
  readonly spans: ReadonlyArray<readonly [number, number]>;
  /** Each reader's output line (`reads <rounds> <count> <searches>`). */
  readonly readers: readonly string[];
  /** Messages in the shared session. */
  readonly shared: number;
  /** Wall time, ms. */
  readonly ms: number;
}

/**
 * Several writer processes append at once (each to its own session and all
 * to one shared session) while reader processes search.
 *
 * @param options Writers, sizes, seed.
 * @returns What happened, checked.
 */
export async function runConcurrentWriters(options: ConcurrentOptions): Promise<ConcurrentReport> {
  const started = performance.now();
  const path = join(options.dir, "state.db");
  const startFile = join(options.dir, "start");
  const stopFile = join(options.dir, "stop");
  (await SessionDB.open({ path })).close();
  const writers = options.writers.map((runtime, i) => {
    const config: WriterConfig = {
      path,
      name: `w${i}`,
      own: `own-${i}`,
      shared: "shared",
      count: options.appendsEach,
      seed: options.seed + i,
      startFile,
    };
    return startWorker(runtime, "_writer.ts", [JSON.stringify(config)]);
  });
  const readers = options.readers.map((runtime) =>
    startWorker(runtime, "_reader.ts", [JSON.stringify({ path, stopFile })])
  );
  try {
    const workers = [...writers, ...readers];
    await Promise.all(workers.map((w) => w.waitFor((l) => l.startsWith("ready"), "ready")));
    writeFileSync(startFile, "");
    const outputs = await Promise.all(writers.map((w) => w.succeeded()));
    writeFileSync(stopFile, "");
    const readerLines = await Promise.all(readers.map((reader) => reader.succeeded()));
    const ledger = newLedger();
    for (const lines of outputs) record(ledger, lines);
    const spans = outputs.map((lines) => {
      const first = lines.find((l) => l.startsWith("try "))!.split(" ")[3];
      const last = lines.findLast((l) => l.startsWith("ack "))!.split(" ")[4];
      return [Number(first), Number(last)] as const;
    });
    const verdict = await verify(path, ledger);
    const db = await SessionDB.open({ path, readonly: true });
    const shared = Number(db.getSession("shared")?.message_count ?? -1);
    db.close();
    return {
      path,
      verdict,
      spans,
      readers: readerLines.map((lines) =>
        lines.find((l) => l.startsWith("reads ")) ?? lines.join(" | ")
      ),
      shared,
      ms: performance.now() - started,
    };
  } finally {
    writeFileSync(stopFile, "");
    for (const worker of [...writers, ...readers]) worker.kill("SIGKILL");
  }
}

/** Options of {@linkcode runCrashes}. */
export interface CrashOptions {
  /** A folder of its own. */
  readonly dir: string;
  /** The runtimes to use, in turn. */
  readonly runtimes: readonly RuntimeName[];
  /** How many rounds to run. */
  readonly rounds: number;
  /** Writers started (and killed) together in each round. */
  readonly writersPerRound?: number;
  /** Longest wait after the first acknowledgement before the kill, ms. */
  readonly maxDelayMs: number;
  /** Seed of the kill moments and the writers' choices. */
  readonly seed: number;
  /** Called after each round with its verdict (the soak prints progress). */
  readonly onRound?: (round: number, verdict: Verdict) => void;
}

/** What {@linkcode runCrashes} saw. */
export interface CrashReport {
  /** The database file. */
  readonly path: string;
  /** The check after each kill. */
  readonly verdicts: Verdict[];
  /** Kills of a process that was still running. */
  readonly kills: number;
  /** Acknowledged appends, over all rounds. */
  readonly appends: number;
  /** Wall time, ms. */
  readonly ms: number;
}

/**
 * Starts writers that append forever, kills each with SIGKILL at a seeded
 * random moment after its first append, checks the file, and repeats on the
 * same file (so every round also recovers the WAL the last one left).
 *
 * @param options Rounds, runtimes, seed.
 * @returns The verdict after every kill.
 */
export async function runCrashes(options: CrashOptions): Promise<CrashReport> {
  const started = performance.now();
  const path = join(options.dir, "state.db");
  const random = mulberry32(options.seed);
  const ledger = newLedger();
  const verdicts: Verdict[] = [];
  let kills = 0;
  const perRound = options.writersPerRound ?? 1;
  for (let round = 0; round < options.rounds; round++) {
    const workers = Array.from({ length: perRound }, (_, k) => {
      const n = round * perRound + k;
      const config: WriterConfig = {
        path,
        name: `r${n}`,
        own: `crash-${n % 3}`,
        shared: "crash-shared",
        count: 0,
        seed: options.seed + n,
      };
      return startWorker(options.runtimes[n % options.runtimes.length], "_writer.ts", [
        JSON.stringify(config),
      ]);
    });
    const delays = workers.map(() => random() * options.maxDelayMs);
    await Promise.all(workers.map(async (worker: Worker, k) => {
      try {
        await worker.waitFor((line) => line.startsWith("ack "), "its first append");
        await delay(delays[k]);
      } finally {
        worker.kill("SIGKILL");
      }
      const exit = await worker.exited;
      if (exit.signal === "SIGKILL") kills++;
      record(ledger, worker.lines);
    }));
    const verdict = await verify(path, ledger);
    verdicts.push(verdict);
    options.onRound?.(round, verdict);
  }
  return { path, verdicts, kills, appends: ledger.acks.size, ms: performance.now() - started };
}
