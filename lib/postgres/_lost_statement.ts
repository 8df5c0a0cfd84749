/**
 * What became of a write made by one statement alone whose connection was
 * lost once it was sent. Such a statement is its own transaction, whose id
 * is not known before it runs, so the server is asked another way: first,
 * the server process that had it must have ended (its transaction then
 * committed or rolled back for good; one still running after a second, as a
 * network partition leaves it, is ended). Then an append (`appendMessage`, and
 * `appendMessages` of up to one statement's rows) is looked up in its
 * session, by the very rows it wrote (same timestamps, roles and content):
 * all there, it was made; none, it was not, and can be made again. (A known
 * limit: a twin appended by another call, the same message stamped in the
 * same microsecond, would be taken for it.) A write
 * that gives the same state however often it runs (`createSession`,
 * `endSession`…) is simply run again.
 *
 * @module
 */
import type { LostStatement, PgQuery } from "./_client_types.ts";
import { INSERT_COLUMNS, type MessageValues, valuesList } from "./_rows.ts";
import { notAsked, ORPHAN_AFTER_MS, SETTLE_POLL_MS, SETTLE_WAIT_MS } from "./_commit_outcome.ts";

/** What became of a lost append. */
export type AppendOutcome =
  | { readonly status: "committed"; readonly ids: number[] }
  | { readonly status: "absent" }
  | { readonly status: "unknown"; readonly reason: string };

/**
 * Waits until the server process that had a lost statement has ended, for
 * 10 s at most: a process whose client went away ends as soon as it
 * notices (at once, but for a network that drops packets without a word:
 * that one is ended after 1 s). Its transaction then committed or rolled
 * back for good. A process id given again meanwhile to a new server process
 * is not ended: only a process started before the first look is.
 *
 * @param query A statement on the pool (a new connection; it waits for the
 *   server within the pool's connect deadline).
 * @param lost The lost statement's server process.
 * @param sleep Waits this many milliseconds.
 * @returns `undefined` once it ended, else why that cannot be told.
 */
export async function lostStatementEnded(
  query: PgQuery,
  lost: LostStatement,
  sleep: (ms: number) => Promise<void>,
): Promise<string | undefined> {
  if (lost.backend === undefined) return "a pooler stood between: its server process is unknown";
  const firstLook = performance.now();
  let orphanEnded = false;
  try {
    for (let waited = 0;; waited += SETTLE_POLL_MS) {
      const [row] = await query(
        "SELECT count(*) AS running FROM pg_stat_activity WHERE pid = $1",
        [lost.backend],
      );
      if (Number(row?.running) === 0) return undefined;
      if (waited >= SETTLE_WAIT_MS) {
        return `the server process ${lost.backend} that had it was still running after ${
          SETTLE_WAIT_MS / 1000
        } s`;
      }
      if (!orphanEnded && waited >= ORPHAN_AFTER_MS) {
        orphanEnded = true;
        // Not allowed (another role's), it is waited for.
        await query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE pid = $1 AND backend_start < now() - make_interval(secs => $2::double precision)`,
          [lost.backend, (performance.now() - firstLook) / 1000],
        ).catch(() => {});
      }
      await sleep(SETTLE_POLL_MS);
    }
  } catch (error) {
    return notAsked(error);
  }
}

/**
 * Asks the server what became of an append whose connection was lost once
 * it was sent: waits for the server process that had it to end, then looks
 * for its rows in the session.
 *
 * @param query A statement on the pool (a new connection; it waits for the
 *   server within the pool's connect deadline).
 * @param lost The lost statement's server process.
 * @param sessionId The session appended to.
 * @param rows The rows the statement inserted, with their timestamps.
 * @param sleep Waits this many milliseconds.
 * @returns The ids of the rows, in order; absent; or unknown with the reason.
 */
export async function appendOutcome(
  query: PgQuery,
  lost: LostStatement,
  sessionId: string,
  rows: readonly MessageValues[],
  sleep: (ms: number) => Promise<void>,
): Promise<AppendOutcome> {
  const running = await lostStatementEnded(query, lost, sleep);
  if (running !== undefined) return { status: "unknown", reason: running };
  try {
    const values = valuesList(rows, 2);
    const found = await query(
      `SELECT m.id FROM (VALUES ${values.sql}) AS v(${INSERT_COLUMNS.join(", ")})
       JOIN messages m ON m.session_id = $1 AND m.timestamp = v.timestamp
         AND m.role IS NOT DISTINCT FROM v.role AND m.content IS NOT DISTINCT FROM v.content
       ORDER BY m.id`,
      [sessionId, ...values.params],
    );
    if (found.length === 0) return { status: "absent" };
    if (found.length === rows.length) {
      return { status: "committed", ids: found.map((row) => Number(row.id)) };
    }
    return {
      status: "unknown",
      reason: `${found.length} of its ${rows.length} messages' twins are in the session`,
    };
  } catch (error) {
    return { status: "unknown", reason: notAsked(error) };
  }
}
