/**
 * Builds a corpus file twice over: through the library (`createSession`,
 * `appendMessages`, `endSession`, `setSessionTitle`, `updateTokenCounts`) and
 * through the raw floor (the same statements, one transaction per call).
 * Only time spent inside those calls counts; generating the text does not.
 *
 * @module
 */
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openConnection } from "../lib/sqlite/open.ts";
import type { NewMessage } from "../lib/core/types.ts";
import { type Corpus, sessionMessages, type SessionPlan } from "./corpus.ts";
import { rawAppendMessages, rawCreateSession, rawFinishSession } from "./raw.ts";
import { timed } from "./measure.ts";
import { rmSync } from "node:fs";

/** A clock the benchmark moves: each reading advances it by `step` seconds. */
export class TickClock {
  #at = 0;
  #step = 0;

  /**
   * Moves the clock.
   *
   * @param at The next reading.
   * @param step How far each reading advances it.
   */
  set(at: number, step = 0): void {
    this.#at = at;
    this.#step = step;
  }

  /** The current reading; advances the clock. */
  now = (): number => {
    const at = this.#at;
    this.#at += this.#step;
    return at;
  };
}

/** How long an import took. */
export interface ImportTiming {
  /** Milliseconds inside `appendMessages` (or its raw equivalent). */
  readonly appendMs: number;
  /** Milliseconds inside every call (sessions, messages, ends, titles, tokens). */
  readonly totalMs: number;
  readonly messages: number;
}

/** The calls one import makes per session, and the clock its timestamps come from. */
interface Importer {
  readonly clock: TickClock;
  create(plan: SessionPlan): void;
  append(plan: SessionPlan, messages: readonly NewMessage[]): void;
  finish(plan: SessionPlan): void;
  close(): void;
}

function importOne(importer: Importer, plan: SessionPlan, list: readonly NewMessage[]) {
  const { clock } = importer;
  clock.set(plan.startedAt);
  let totalMs = timed(() => importer.create(plan))[0];
  clock.set(plan.startedAt + plan.step, plan.step);
  let appendMs = 0;
  if (list.length > 0) {
    appendMs = timed(() => importer.append(plan, list))[0];
    totalMs += appendMs;
  }
  clock.set(plan.endedAt ?? plan.startedAt + plan.count * plan.step + 1);
  totalMs += timed(() => importer.finish(plan))[0];
  return { appendMs, totalMs };
}

/**
 * Imports the corpus with every importer at once, session by session and in
 * alternating order, so a busy neighbour slows them alike.
 */
function runImports(
  corpus: Corpus,
  importers: Record<string, Importer>,
  progress?: (done: number) => void,
): Record<string, ImportTiming> {
  const names = Object.keys(importers);
  const totals = Object.fromEntries(names.map((n) => [n, { appendMs: 0, totalMs: 0 }]));
  let messages = 0;
  try {
    for (const plan of corpus.sessions) {
      const list = sessionMessages(corpus, plan);
      for (const name of plan.index % 2 === 0 ? names : [...names].reverse()) {
        const t = importOne(importers[name], plan, list);
        totals[name].appendMs += t.appendMs;
        totals[name].totalMs += t.totalMs;
      }
      messages += list.length;
      if (progress && plan.index % 200 === 199) progress(plan.index + 1);
    }
  } finally {
    for (const importer of Object.values(importers)) importer.close();
  }
  return Object.fromEntries(names.map((n) => [n, { ...totals[n], messages }]));
}

/**
 * The library's importer into a new file at `path`.
 *
 * @param path A path where no file exists yet.
 * @returns The importer.
 */
async function libraryImporter(path: string): Promise<Importer> {
  const clock = new TickClock();
  const db = await SessionDB.open({ path, clock: clock.now });
  return {
    clock,
    create: (plan) =>
      db.createSession(plan.id, plan.source, {
        model: plan.model,
        modelConfig: { temperature: 0.7 },
        systemPrompt: plan.systemPrompt,
        userId: plan.userId,
        parentSessionId: plan.parentId,
      }),
    append: (plan, list) => db.appendMessages(plan.id, list),
    finish: (plan) => {
      if (plan.endedAt !== null) db.endSession(plan.id, plan.endReason!);
      if (plan.title !== null) db.setSessionTitle(plan.id, plan.title);
      db.updateTokenCounts(plan.id, {
        inputTokens: plan.inputTokens,
        outputTokens: plan.outputTokens,
        model: plan.model,
        estimatedCostUsd: plan.costUsd,
        apiCallCount: 1,
      });
    },
    close: () => db.close(),
  };
}

/**
 * The raw importer (statements over `lib/driver`) into a new file at `path`;
 * the schema is created by the library's schema step, untimed.
 *
 * @param path A path where no file exists yet.
 * @returns The importer.
 */
async function rawImporter(path: string): Promise<Importer> {
  const clock = new TickClock();
  const { db } = await openConnection({ path });
  return {
    clock,
    create: (plan) => rawCreateSession(db, plan),
    append: (plan, list) => rawAppendMessages(db, plan.id, list, clock.now),
    finish: (plan) => rawFinishSession(db, plan),
    close: () => {
      db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      db.close();
    },
  };
}

/** A library part that is still a stub reports this. */
const PENDING = /is not implemented yet/;

/**
 * Builds the corpus through the library at `libraryPath` and through the raw
 * floor at `rawPath`, interleaved. When the library cannot import yet, only
 * the raw file is built.
 *
 * @param corpus The corpus.
 * @param paths Where the two files go (no file may exist there yet).
 * @param progress Called every 200 sessions.
 * @returns The timing of each import; `ours` is missing when the library could not import.
 */
export async function importBoth(
  corpus: Corpus,
  paths: { readonly library: string; readonly raw: string },
  progress?: (done: number) => void,
): Promise<{ ours?: ImportTiming; raw: ImportTiming }> {
  const raw = await rawImporter(paths.raw);
  const ours = await libraryImporter(paths.library);
  try {
    const first = corpus.sessions.find((plan) => plan.count > 0);
    if (first !== undefined) importOne(ours, first, sessionMessages(corpus, first).slice(0, 1));
  } catch (error) {
    ours.close();
    if (!(error instanceof Error && PENDING.test(error.message))) throw error;
    return { raw: runImports(corpus, { raw }, progress).raw };
  }
  // The probe wrote into the library's file: start both over from empty files.
  ours.close();
  raw.close();
  for (const path of [paths.library, paths.raw]) {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  }
  const timings = runImports(
    corpus,
    { raw: await rawImporter(paths.raw), ours: await libraryImporter(paths.library) },
    progress,
  );
  return { ours: timings.ours, raw: timings.raw };
}
