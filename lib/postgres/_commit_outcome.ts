/**
 * What became of a write transaction whose connection was lost after its
 * COMMIT was sent: the server may have committed it (only the answer was
 * lost) or not. Run again blindly, an append would be written twice; given
 * up blindly, the caller is told it failed while it stands. So a write
 * transaction learns its own transaction id first (pipelined with its first
 * statement: no extra wait), and once its connection is lost as it commits,
 * the server is asked on a new one what became of that id
 * (`txid_status`): committed, the write stands and its result is given;
 * rolled back, it runs again; unknown, the caller is told so in words. Its
 * server process still at it after a second (a network partition) is
 * ended, so that it settles now; and a server restarted meanwhile (which
 * may give a forgotten id again) is believed only when it says the
 * transaction did not commit.
 *
 * @module
 */
import type { PgQuery } from "./_client_types.ts";
import { StorageError } from "../core/errors.ts";

/**
 * The statement a write transaction begins with: its transaction id, as
 * text, and when the server that gave it started (a server restarted since
 * may give the id again: see {@linkcode commitOutcome}).
 */
export const TRANSACTION_ID_SQL =
  "SELECT txid_current()::text AS hermes_xid, pg_postmaster_start_time()::text AS hermes_started";

/** A write transaction's id, and when the server that gave it started. */
export interface CommitId {
  /** The transaction's id (digits). */
  readonly xid: string;
  /** `pg_postmaster_start_time()` as the id was given, as text. */
  readonly started?: string;
}

/** The transaction id and result of a write transaction whose function has ended. */
export interface SentCommit<T> {
  /** The transaction's id and server, once its function ended: its COMMIT is sent next. */
  id?: CommitId;
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
  const asked = query(TRANSACTION_ID_SQL).then(
    (rows) => ({ rows }),
    (error: unknown) => ({ error }),
  );
  let value: T;
  try {
    value = await fn(query);
  } catch (error) {
    // Refused first (a standby in recovery gives no id: 25006, read-only), the transaction's
    // next statements only said it had failed (25P02): the first failure is the one to tell.
    const first = await asked;
    throw "error" in first ? first.error : error;
  }
  const first = await asked;
  if ("error" in first) throw first.error;
  const [row] = first.rows;
  sent.value = value;
  sent.id = { xid: String(row?.hermes_xid), started: String(row?.hermes_started) };
  return value;
}

/** What the server says of a transaction id. */
export type CommitOutcome =
  | { readonly status: "committed" }
  | { readonly status: "aborted" }
  | { readonly status: "unknown"; readonly reason: string };

/**
 * How long a lost write still at work on the server (a transaction in
 * progress, a statement's server process running: it has not yet seen its
 * client go) is waited for before its outcome is said unknown.
 */
export const SETTLE_WAIT_MS = 10_000;

/**
 * After how long the server process of a lost write (a transaction still
 * in progress, or a statement still running) is ended: its client (this
 * process) is gone from it, and a server that did not see the connection go
 * (a network partition) would keep it for as long as its TCP keepalive
 * allows, holding its locks.
 */
export const ORPHAN_AFTER_MS = 1000;

/**
 * Why what became of a lost write cannot be told, when asking failed.
 *
 * @param error What the question threw.
 * @returns The reason, as an error's parentheses say it.
 */
export function notAsked(error: unknown): string {
  return `the server could not be asked: ${error instanceof Error ? error.message : String(error)}`;
}

/** Milliseconds between two looks at a lost write still at work on the server. */
export const SETTLE_POLL_MS = 50;

/**
 * Tries of a question whose own connection is lost once it was sent, at
 * least; more while the server's deadline (`AskAgain.seconds`) lasts.
 */
const QUESTION_TRIES = 3;

/**
 * Milliseconds between two tries of a question while the server cannot be
 * reached, and before its third try after two losses in a row (doubled at
 * each further loss, up to {@linkcode QUESTION_PAUSE_MAX_MS}).
 */
const QUESTION_PAUSE_MS = 200;

/** The longest pause between two tries of a question lost again and again. */
const QUESTION_PAUSE_MAX_MS = 1000;

/** How {@linkcode askedAgain} tells the failures worth another try. */
export interface AskAgain {
  /** Whether an error says the statement's connection was lost once it was sent. */
  lost(error: unknown): boolean;
  /**
   * Seconds the server may stay out of reach (stopping, restarting: it
   * refuses or ends new connections) before the question fails.
   */
  readonly seconds: number;
  /** Waits this many milliseconds. */
  sleep(ms: number): Promise<void>;
}

/**
 * `query` for questions (statements that change nothing that was written),
 * each asked again when its own connection is lost once it was sent (the
 * second try at once, the third after a pause, and further tries, each
 * after a longer pause, while `again.seconds` last), and while the server
 * cannot be reached (within `again.seconds` too): a loss seldom comes alone
 * (a server stopping ends every connection, those it still takes in its
 * last moments too, then refuses new ones until it is back; a server under
 * fire ends connection after connection), and a question left unanswered
 * leaves a write untold.
 *
 * @param query A statement on the pool.
 * @param again Which failures are tried again, for how long.
 * @returns The query that asks again.
 */
export function askedAgain(query: PgQuery, again: AskAgain): PgQuery {
  return async (text, params, options) => {
    const until = performance.now() + again.seconds * 1000;
    for (let losses = 0;;) {
      try {
        return await query(text, params, options);
      } catch (error) {
        if (again.lost(error)) {
          if (++losses >= QUESTION_TRIES && performance.now() >= until) throw error;
          // One loss is asked again at once (a server process ended); two in a row are a server
          // going down, whose last moments end each connection it still takes: past them.
          if (losses > 1) {
            const pause = QUESTION_PAUSE_MS * 2 ** (losses - 2);
            await again.sleep(Math.min(pause, QUESTION_PAUSE_MAX_MS));
          }
          continue;
        }
        // Out of reach (refused, reset, "the database system is starting up"): later.
        const unreachable = error instanceof StorageError && error.kind === "io";
        if (!unreachable || performance.now() >= until) throw error;
        await again.sleep(QUESTION_PAUSE_MS);
      }
    }
  };
}

/** Whether `error` is the server's "transaction ID … is in the future" (22023 of txid_status). */
function idInTheFuture(error: unknown): boolean {
  const raw = error instanceof StorageError ? error.cause : error;
  return (raw as { code?: unknown } | null)?.code === "22023" &&
    /in the future/.test(String((raw as { message?: unknown }).message));
}

/**
 * Asks the server what became of transaction `id`, on a connection of its
 * own (waiting for the server within the pool's connect deadline: it may be
 * restarting). A transaction still in progress (its backend has not yet
 * seen the connection go) is asked about again, for 10 s at most, its
 * server process ended after 1 s (so that it commits or rolls back now).
 *
 * A server restarted since the id was given (a crash, a failover) may have
 * given the id again: a transaction none of whose writes reached its disk
 * before the crash is forgotten, and its id is the next one given. There,
 * "committed" may be another's (the answer is unknown), while "aborted",
 * "in progress", or an id in the future say that this one never committed
 * (had it, its id would have been on the disk, and not given again).
 *
 * @param query A statement on the pool (a new connection).
 * @param id The transaction id, and when its server started.
 * @param sleep Waits this many milliseconds.
 * @returns Committed, rolled back, or unknown with the reason.
 */
export async function commitOutcome(
  query: PgQuery,
  id: CommitId,
  sleep: (ms: number) => Promise<void>,
): Promise<CommitOutcome> {
  const { xid, started } = id;
  let orphanEnded = false;
  for (let waited = 0;; waited += SETTLE_POLL_MS) {
    let status: unknown;
    let restarted = false;
    try {
      const [row] = await query(
        "SELECT txid_status($1::bigint) AS status, pg_postmaster_start_time()::text AS started",
        [xid],
      );
      status = row?.status;
      restarted = started !== undefined && row?.started !== started;
    } catch (error) {
      if (idInTheFuture(error)) return { status: "aborted" };
      return { status: "unknown", reason: notAsked(error) };
    }
    if (restarted) {
      if (status === "aborted" || status === "in progress") return { status: "aborted" };
      return {
        status: "unknown",
        reason: `the server restarted since, and may have given transaction ${xid}'s id again`,
      };
    }
    if (status === "committed" || status === "aborted") return { status };
    if (status !== "in progress") {
      return { status: "unknown", reason: `the server no longer knows transaction ${xid}` };
    }
    if (waited >= SETTLE_WAIT_MS) {
      return {
        status: "unknown",
        reason: `transaction ${xid} was still in progress after ${SETTLE_WAIT_MS / 1000} s`,
      };
    }
    if (!orphanEnded && waited >= ORPHAN_AFTER_MS) {
      orphanEnded = true;
      // The process whose transaction it is: this one's, whose client is gone (an id in
      // progress is one process's). Not allowed (another role's), it is waited for.
      await query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE backend_xid = ($1::bigint % 4294967296)::text::xid`,
        [xid],
      ).catch(() => {});
    }
    await sleep(SETTLE_POLL_MS);
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
