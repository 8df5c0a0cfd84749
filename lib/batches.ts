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

/**
 * Runs `each` on every item, several items per write transaction, each
 * transaction holding the lock about `holdMs`, with `pauseMs` free between
 * two of them.
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
  const holdMs = write.holdMs ?? 400;
  const pauseMs = write.pauseMs ?? 160;
  const sleep = write.sleep ?? sleepSync;
  const clock = write.clock ?? (() => performance.now());
  let next = 0;
  let transactions = 0;
  let longestMs = 0;
  let count = 0;
  while (next < items.length) {
    const first = next;
    let end = first;
    let done: T[] = [];
    const started = clock();
    transaction(() => {
      const began = clock();
      end = first;
      done = [];
      do {
        const item = items[end++];
        if (write.each(item)) done.push(item);
      } while (end < items.length && clock() - began < holdMs);
    });
    longestMs = Math.max(longestMs, clock() - started);
    transactions++;
    count += done.length;
    next = end;
    if (done.length > 0) write.afterCommit?.(done);
    if (next < items.length) sleep(pauseMs);
  }
  return { done: count, transactions, longestMs };
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
