/**
 * Long writes in short transactions, so that no other writer waits long
 * for the lock. Python Hermes gives up after about 1.3 s of retries and the
 * gateway then drops a turn; a prune of 25,000 messages in one transaction
 * held the lock for 7 s. Here items are written in transactions that each
 * hold the lock for about `holdMs` (one item at least: an item, such as a
 * session with its messages, is never split), and after each such
 * transaction the lock is left free for `pauseMs`, longer than a waiting
 * writer's longest pause between attempts (SQLite's busy handler polls
 * every 100 ms at most, Python Hermes every 150 ms at most), so a waiter
 * gets in within about `holdMs + pauseMs`. A crash between two
 * transactions leaves every item either done or not.
 *
 * @module
 */
import { sleepSync } from "./write.ts";
import { delay } from "../core/delay.ts";

/** How long one transaction may hold the lock, and how long the lock is then left free. */
export interface BatchOptions {
  /**
   * Milliseconds of work per transaction (checked after each item).
   * @default {400}
   */
  readonly holdMs?: number;
  /**
   * Milliseconds the lock is left free between two transactions.
   * @default {160}
   */
  readonly pauseMs?: number;
  /** Blocks for `ms` milliseconds (tests inject one). */
  readonly sleep?: (ms: number) => void;
  /** Milliseconds from any origin (tests inject one). */
  readonly clock?: () => number;
}

/** What {@linkcode writeInBatches} writes, and how. */
export interface BatchWrite<T> extends BatchOptions {
  /**
   * Writes one item inside the transaction; true when it changed something.
   * It may run again for the same item when a transaction is retried (busy
   * lock), so it must depend only on the database.
   */
  readonly each: (item: T) => boolean;
  /** Called after each commit with the items of that transaction `each` answered true for. */
  readonly afterCommit?: (done: readonly T[]) => void;
}

/** What {@linkcode writeInBatches} did. */
export interface BatchReport {
  /** Items for which `each` answered true. */
  readonly done: number;
  /** Transactions committed. */
  readonly transactions: number;
  /** The longest time one of them ran, in milliseconds. */
  readonly longestMs: number;
}

/** {@linkcode BatchWrite} for {@linkcode writeInBatchesAsync}: the pause is awaited. */
export interface AsyncBatchWrite<T> extends Omit<BatchWrite<T>, "sleep"> {
  /** Waits `ms` milliseconds (tests inject one). Defaults to a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * The items of a batched write and where it stands between two
 * transactions; both loops below drive it.
 */
class BatchRun<T> {
  readonly pauseMs: number;
  readonly #items: readonly T[];
  readonly #write: BatchWrite<T> | AsyncBatchWrite<T>;
  readonly #holdMs: number;
  readonly #clock: () => number;
  #next = 0;
  #end = 0;
  #done: T[] = [];
  #started = 0;
  #transactions = 0;
  #longestMs = 0;
  #count = 0;

  constructor(items: readonly T[], write: BatchWrite<T> | AsyncBatchWrite<T>) {
    this.#items = items;
    this.#write = write;
    this.#holdMs = write.holdMs ?? 400;
    this.pauseMs = write.pauseMs ?? 160;
    this.#clock = write.clock ?? (() => performance.now());
  }

  /** True while items are left. */
  get pending(): boolean {
    return this.#next < this.#items.length;
  }

  /**
   * The body of the next transaction: items from the first one left until
   * `holdMs` has passed (one at least). It starts over when run again (a
   * retried transaction).
   */
  body(): () => void {
    this.#started = this.#clock();
    return () => {
      const began = this.#clock();
      this.#end = this.#next;
      this.#done = [];
      do {
        const item = this.#items[this.#end++];
        if (this.#write.each(item)) this.#done.push(item);
      } while (this.#end < this.#items.length && this.#clock() - began < this.#holdMs);
    };
  }

  /** Call once the body's transaction committed. */
  committed(): void {
    this.#longestMs = Math.max(this.#longestMs, this.#clock() - this.#started);
    this.#transactions++;
    this.#count += this.#done.length;
    this.#next = this.#end;
    if (this.#done.length > 0) this.#write.afterCommit?.(this.#done);
  }

  /** What was done. */
  report(): BatchReport {
    return { done: this.#count, transactions: this.#transactions, longestMs: this.#longestMs };
  }
}

/**
 * Runs `each` on every item, several items per write transaction, each
 * transaction holding the lock about `holdMs`, with `pauseMs` free between
 * two of them (a blocking sleep: see {@linkcode writeInBatchesAsync} for
 * code on an event loop).
 *
 * @param transaction Runs `fn` as one write transaction (`store.write`, say).
 * @param items The items, in order.
 * @param write What to do with each item, after each commit, and the timing.
 * @returns How many items were done, in how many transactions, and the longest.
 */
export function writeInBatches<T>(
  transaction: (fn: () => void) => void,
  items: readonly T[],
  write: BatchWrite<T>,
): BatchReport {
  const sleep = write.sleep ?? sleepSync;
  const run = new BatchRun(items, write);
  while (run.pending) {
    transaction(run.body());
    run.committed();
    if (run.pending) sleep(run.pauseMs);
  }
  return run.report();
}

/**
 * {@linkcode writeInBatches} for an asynchronous caller (the SQLite
 * `SessionStore`): the same transactions, but each one is awaited (so it
 * may wait for a lock with awaited retries) and so is the pause between
 * two, so timers, requests and other calls run during a long write.
 *
 * @param transaction Runs `fn` as one write transaction and settles when it committed.
 * @param items The items, in order.
 * @param write What to do with each item, after each commit, and the timing.
 * @returns How many items were done, in how many transactions, and the longest.
 */
export async function writeInBatchesAsync<T>(
  transaction: (fn: () => void) => Promise<void>,
  items: readonly T[],
  write: AsyncBatchWrite<T>,
): Promise<BatchReport> {
  const sleep = write.sleep ?? delay;
  const run = new BatchRun(items, write);
  while (run.pending) {
    await transaction(run.body());
    run.committed();
    if (run.pending) await sleep(run.pauseMs);
  }
  return run.report();
}

/** Options of {@linkcode LockPacer}. */
export interface LockPacerOptions {
  /**
   * Milliseconds of back-to-back writes before a pause.
   * @default {400}
   */
  readonly holdMs?: number;
  /**
   * Milliseconds of each pause.
   * @default {160}
   */
  readonly pauseMs?: number;
  /** Milliseconds from any origin (tests inject one). */
  readonly clock?: () => number;
}

/**
 * Paces a caller that writes many short transactions back to back (an
 * import, one session per transaction): SQLite's busy handler and Python
 * Hermes retry at intervals, so a writer that takes the lock again at once
 * after each commit lets them in only by luck (a measured import let a
 * concurrent writer through 72 times in 40 s, once after 5.6 s). After
 * every `holdMs` of writing, the caller leaves the lock free for `pauseMs`
 * (it sleeps or awaits; the pacer only says how long).
 *
 * @example
 * ```ts
 * import { LockPacer } from "./batches.ts";
 * let now = 0;
 * const pacer = new LockPacer({ holdMs: 400, pauseMs: 160, clock: () => now });
 * console.assert(pacer.due() === 0);
 * now = 450;
 * console.assert(pacer.due() === 160 && pacer.due() === 0);
 * ```
 */
export class LockPacer {
  readonly #holdMs: number;
  readonly #pauseMs: number;
  readonly #clock: () => number;
  #since: number;

  /**
   * @param options Hold, pause and clock.
   */
  constructor(options: LockPacerOptions = {}) {
    this.#holdMs = options.holdMs ?? 400;
    this.#pauseMs = options.pauseMs ?? 160;
    this.#clock = options.clock ?? (() => performance.now());
    this.#since = this.#clock();
  }

  /**
   * Call after each commit.
   *
   * @returns Milliseconds to leave the lock free now; 0 when no pause is due.
   */
  due(): number {
    const now = this.#clock();
    if (now - this.#since < this.#holdMs) return 0;
    this.#since = now + this.#pauseMs;
    return this.#pauseMs;
  }
}
