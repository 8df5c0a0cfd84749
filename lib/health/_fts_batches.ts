/**
 * The batch loop both ways of rebuilding a full-text table share: message
 * ids up to a bound are handed out in ranges, each filled in its own short
 * transaction sized to a time budget, with a pause between two so waiting
 * writers get the lock, and a stop asked for honoured between two.
 *
 * @module
 */
import type { SqliteConnection } from "../sqlite/driver/types.ts";
import type { TimedWriter } from "./transaction.ts";

const FIRST_BATCH = 256;
const MIN_BATCH = 16;
const MAX_BATCH = 50_000;

/** How {@linkcode fillInBatches} paces itself and what it fills. */
export interface BatchPlan {
  /** The largest message id to fill (later ones come through triggers). */
  readonly upTo: number;
  /** The time budget of one transaction, in milliseconds. */
  readonly budgetMs: number;
  /** The pause before each transaction, in milliseconds. */
  readonly pauseMs: number;
  /** Awaited for each pause. */
  readonly sleep: (ms: number) => Promise<void>;
  /** Aborted to stop between two transactions (what is committed stays consistent). */
  readonly signal?: AbortSignal;
  /** Called after each batch with the messages filled so far and the total. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Fills the ids in `(after, last]`, inside the batch's transaction.
   *
   * @returns Rows written.
   */
  readonly fill: (after: number, last: number) => number;
}

/**
 * Fills ids `1..upTo` range by range, one transaction each.
 *
 * @param db The connection.
 * @param writer Times and retries each transaction.
 * @param plan The bound, pacing and the work of one range.
 * @returns Rows written in all.
 * @throws {DOMException} The signal's reason, when it was aborted between two transactions.
 */
export async function fillInBatches(
  db: SqliteConnection,
  writer: TimedWriter,
  plan: BatchPlan,
): Promise<number> {
  const total = Number(
    db.prepare("SELECT count(*) AS n FROM messages WHERE id <= ?").get(plan.upTo)?.n ?? 0,
  );
  const nextBound = db.prepare(
    "SELECT id FROM messages WHERE id > ? AND id <= ? ORDER BY id LIMIT 1 OFFSET ?",
  );
  let after = 0;
  let size = FIRST_BATCH;
  let done = 0;
  while (after < plan.upTo) {
    await plan.sleep(plan.pauseMs);
    plan.signal?.throwIfAborted();
    const { value: filled, heldMs } = await writer.runAsync(() => {
      const bound = nextBound.get(after, plan.upTo, size - 1);
      const last = bound === undefined ? plan.upTo : Number(bound.id);
      const changes = plan.fill(after, last);
      after = last;
      return changes;
    });
    done += filled;
    plan.onProgress?.(done, total);
    const target = plan.budgetMs / 2;
    const scaled = heldMs > 0 ? Math.round(size * target / heldMs) : size * 2;
    size = Math.round(
      Math.max(MIN_BATCH, Math.min(MAX_BATCH, size * 2, Math.max(size / 2, scaled))),
    );
  }
  return done;
}
