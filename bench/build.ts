/**
 * Builds a corpus file twice over: through the library (`createSession`,
 * `appendMessages`, `endSession`, `setSessionTitle`, `updateTokenCounts`) and
 * through the raw floor (the same statements, one transaction per call).
 * Only time spent inside those calls counts; generating the text does not.
 *
 * @module
 */
import { SessionDB } from "../lib/session_db.ts";
import { openConnection } from "../lib/open.ts";
import type { NewMessage } from "../lib/types.ts";
import { type Corpus, sessionMessages, type SessionPlan } from "./corpus.ts";
import { rawAppendMessages, rawCreateSession, rawFinishSession } from "./raw.ts";
import { timed } from "./measure.ts";

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

/** The calls one import makes per session. */
interface Importer {
  create(plan: SessionPlan): void;
  append(plan: SessionPlan, messages: readonly NewMessage[]): void;
  finish(plan: SessionPlan): void;
}

function runImport(
  corpus: Corpus,
  clock: TickClock,
  importer: Importer,
  progress?: (done: number) => void,
): ImportTiming {
  let appendMs = 0, totalMs = 0, messages = 0;
  for (const plan of corpus.sessions) {
    const list = sessionMessages(corpus, plan);
    clock.set(plan.startedAt);
    totalMs += timed(() => importer.create(plan))[0];
    clock.set(plan.startedAt + plan.step, plan.step);
    if (list.length > 0) {
      const [ms] = timed(() => importer.append(plan, list));
      appendMs += ms;
      totalMs += ms;
    }
    clock.set(plan.endedAt ?? plan.startedAt + plan.count * plan.step + 1);
    totalMs += timed(() => importer.finish(plan))[0];
    messages += list.length;
    if (progress && plan.index % 200 === 199) progress(plan.index + 1);
  }
  return { appendMs, totalMs, messages };
}

/**
 * Imports the corpus through the library into a new file at `path`.
 *
 * @param corpus The corpus.
 * @param path A path where no file exists yet.
 * @param progress Called every 200 sessions.
 * @returns The timing.
 */
export async function importWithLibrary(
  corpus: Corpus,
  path: string,
  progress?: (done: number) => void,
): Promise<ImportTiming> {
  const clock = new TickClock();
  const db = await SessionDB.open({ path, clock: clock.now });
  try {
    return runImport(corpus, clock, {
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
    }, progress);
  } finally {
    db.close();
  }
}

/**
 * Imports the corpus with raw statements over `lib/driver` into a new file
 * at `path` (the schema is created by the library's schema step, untimed).
 *
 * @param corpus The corpus.
 * @param path A path where no file exists yet.
 * @param progress Called every 200 sessions.
 * @returns The timing.
 */
export async function importRaw(
  corpus: Corpus,
  path: string,
  progress?: (done: number) => void,
): Promise<ImportTiming> {
  const clock = new TickClock();
  const { db } = await openConnection({ path });
  try {
    let commits = 0;
    const checkpoint = () => {
      if (++commits % 50 === 0) db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    };
    return runImport(corpus, clock, {
      create: (plan) => {
        rawCreateSession(db, plan);
        checkpoint();
      },
      append: (plan, list) => {
        rawAppendMessages(db, plan.id, list, clock.now);
        checkpoint();
      },
      finish: (plan) => {
        rawFinishSession(db, plan);
        checkpoint();
      },
    }, progress);
  } finally {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    db.close();
  }
}
