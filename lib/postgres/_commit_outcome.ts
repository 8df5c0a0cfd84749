/**
 * What became of a write transaction whose connection was lost after its
 * COMMIT was sent: the server may have committed it (only the answer was
 * lost) or not. Run again blindly, an append would be written twice; given
 * up blindly, the caller is told it failed while it stands. So a write
 * transaction learns its own transaction id first (pipelined with its first
 * statement: no extra wait), and once its connection is lost as it commits,
 * the server is asked on a new one what became of that id
 * (`txid_status`): committed, the write stands and its result is given;
 * rolled back, it runs again; unknown, the caller is told so in words.
 *
 * @module
 */
import type { PgQuery } from "./_client.ts";
import { StorageError } from "../core/errors.ts";

/** The statement a write transaction begins with: its transaction id, as text. */
export const TRANSACTION_ID_SQL = "SELECT txid_current()::text AS hermes_xid";

/** The transaction id and result of a write transaction whose function has ended. */
export interface SentCommit<T> {
  /** The transaction's id (digits), once its function ended: its COMMIT is sent next. */
  xid?: string;
  /** What its function gave. */
  value?: T;
}

/**
 * Runs `fn` in a write transaction, its transaction id asked for first (sent
 * with `fn`'s first statement, not waited for on its own), and notes both
 * in `sent` once `fn` has ended, before the client sends COMMIT.
 *
 * @param query The transaction's statements.
 * @param fn The transaction's function.
 * @param sent Filled in as `fn` ends.
 * @returns What `fn` gave.
 */
export async function noteCommit<T>(
  query: PgQuery,
  fn: (query: PgQuery) => Promise<T>,
  sent: SentCommit<T>,
): Promise<T> {
  const asked = query(TRANSACTION_ID_SQL);
  // Failed with the transaction (its connection lost): what `fn` throws stands.
  asked.catch(() => {});
  const value = await fn(query);
  const [row] = await asked;
  sent.value = value;
  sent.xid = String(row?.hermes_xid);
  return value;
}

/** What the server says of a transaction id. */
export type CommitOutcome =
  | { readonly status: "committed" }
  | { readonly status: "aborted" }
  | { readonly status: "unknown"; readonly reason: string };

/** How long a transaction still in progress (its backend has not yet seen its client go) is waited for. */
const IN_PROGRESS_WAIT_MS = 10_000;

/** Milliseconds between two questions while it is in progress. */
const IN_PROGRESS_POLL_MS = 50;

/**
 * Asks the server what became of transaction `xid`, on a connection of its
 * own (waiting for the server within the pool's connect deadline: it may be
 * restarting). A transaction still in progress (its backend has not yet
 * seen the connection go) is asked about again, for 10 s at most.
 *
 * @param query A statement on the pool (a new connection).
 * @param xid The transaction id (digits).
 * @param sleep Waits this many milliseconds.
 * @returns Committed, rolled back, or unknown with the reason.
 */
export async function commitOutcome(
  query: PgQuery,
  xid: string,
  sleep: (ms: number) => Promise<void>,
): Promise<CommitOutcome> {
  for (let waited = 0;; waited += IN_PROGRESS_POLL_MS) {
    let status: unknown;
    try {
      const [row] = await query("SELECT txid_status($1::bigint) AS status", [xid]);
      status = row?.status;
    } catch (error) {
      const said = error instanceof Error ? error.message : String(error);
      return { status: "unknown", reason: `the server could not be asked: ${said}` };
    }
    if (status === "committed" || status === "aborted") return { status };
    if (status !== "in progress") {
      return { status: "unknown", reason: `the server no longer knows transaction ${xid}` };
    }
    if (waited >= IN_PROGRESS_WAIT_MS) {
      return {
        status: "unknown",
        reason: `transaction ${xid} was still in progress after ${IN_PROGRESS_WAIT_MS / 1000} s`,
      };
    }
    await sleep(IN_PROGRESS_POLL_MS);
  }
}

/**
 * The error of a write whose outcome cannot be told: the connection's loss,
 * said to have come when the write may already have been made.
 *
 * @param lost The loss, as the store words it.
 * @param when When it came (`once the write's COMMIT was sent`).
 * @param reason Why the server could not tell, if it was asked.
 * @returns A {@linkcode StorageError} of kind `io`.
 *
 * @example
 * ```ts
 * import { outcomeUnknown } from "./_commit_outcome.ts";
 * const error = outcomeUnknown(new Error("PostgreSQL: the connection was lost"), "as it was sent");
 * console.assert(error.message.includes("whether it was written cannot be told"));
 * ```
 */
export function outcomeUnknown(lost: unknown, when: string, reason?: string): StorageError {
  const said = lost instanceof Error ? lost.message : String(lost);
  return new StorageError(
    `${said}, ${when}, and whether it was written cannot be told` +
      `${
        reason === undefined ? "" : ` (${reason})`
      }: look for what it wrote before writing it again`,
    "io",
    { cause: lost },
  );
}
