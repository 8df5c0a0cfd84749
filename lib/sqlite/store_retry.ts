/**
 * Waiting out a locked store without blocking the event loop: each attempt
 * fails at once when the lock is taken (SQLite's own busy handler is off),
 * and the pause between attempts is an awaited timer.
 *
 * @module
 */
import { SqliteError } from "./driver/sqlite_error.ts";
import { WriteBusyError } from "./write_busy_error.ts";
import { delay } from "../core/delay.ts";
import { quotedValue } from "../core/shown_value.ts";

/** How an asynchronous store waits for a lock another connection holds. */
export interface StoreRetryOptions {
  /**
   * How long to keep trying before giving up, in milliseconds.
   * @default {15000}
   */
  readonly timeoutMs?: number;
  /**
   * Shortest pause between attempts, in milliseconds.
   * @default {20}
   */
  readonly minDelayMs?: number;
  /**
   * Longest pause between attempts, in milliseconds.
   * @default {150}
   */
  readonly maxDelayMs?: number;
  /** Waits `ms` milliseconds. Defaults to a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1). Defaults to `Math.random`. */
  readonly random?: () => number;
}

/**
 * Checks the timing of {@linkcode StoreRetryOptions} when a store opens: a
 * `NaN` timeout would never run out (a store waiting forever on a lock),
 * and a negative or non-numeric one would fail the first busy call.
 *
 * @param options The timing as given.
 * @throws {RangeError} When `timeoutMs`, `minDelayMs` or `maxDelayMs` is
 *   given and is not a non-negative number, naming the value.
 *
 * @example
 * ```ts
 * import { checkStoreRetry } from "./store_retry.ts";
 * checkStoreRetry({ timeoutMs: 5000 });
 * ```
 */
export function checkStoreRetry(options: StoreRetryOptions): void {
  for (const name of ["timeoutMs", "minDelayMs", "maxDelayMs"] as const) {
    const value: unknown = options[name];
    if (value === undefined || (typeof value === "number" && value >= 0 && value <= Infinity)) {
      continue;
    }
    throw new RangeError(
      `Cannot open the store: retry.${name} must be a non-negative number of milliseconds: ` +
        `current value is ${quotedValue(value)}`,
    );
  }
}

/** How long a call waits for another process's lock when `timeoutMs` is not given. */
const DEFAULT_TIMEOUT_MS = 15_000;

/** True for an error that means "another connection holds the lock". */
export function isBusyError(error: unknown): error is SqliteError {
  return error instanceof SqliteError && error.isBusy;
}

/**
 * Runs `attempt` until it succeeds, fails with an error that is not busy, or
 * the time runs out; pauses between attempts are awaited.
 *
 * @param attempt One try; it must change nothing when it fails as busy.
 * @param options Timing.
 * @param started When the call was made (`performance.now()`): `timeoutMs`
 *   and the error's `waitedMs` count from it, so a write that first waited
 *   behind others gets what is left of its time. Now by default.
 * @returns What `attempt` returned.
 * @throws {WriteBusyError} When the lock stayed taken for `timeoutMs`.
 */
export async function retryWhileBusy<T>(
  attempt: () => T | Promise<T>,
  options: StoreRetryOptions = {},
  started: number = performance.now(),
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const minDelayMs = options.minDelayMs ?? 20;
  const maxDelayMs = options.maxDelayMs ?? 150;
  const sleep = options.sleep ?? delay;
  const random = options.random ?? Math.random;
  for (let attempts = 1;; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isBusyError(error)) throw error;
      if (performance.now() - started >= timeoutMs) {
        const last = error instanceof WriteBusyError && error.cause instanceof SqliteError
          ? error.cause
          : error;
        // A plain busy error is a read's on a file another connection holds whole.
        throw new WriteBusyError(attempts, last, {
          waitedMs: performance.now() - started,
          action: error instanceof WriteBusyError ? error.action : "read",
        });
      }
      await sleep(minDelayMs + random() * (maxDelayMs - minDelayMs));
    }
  }
}
