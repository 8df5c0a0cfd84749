/**
 * What the PostgreSQL client throws, read: its SQLSTATE, whether a
 * transaction is worth another attempt, whether the connection was lost
 * under a statement, and the {@linkcode StorageError} a caller sees.
 *
 * @module
 */
import { StorageError, type StorageErrorKind } from "../core/errors.ts";
import { isForeignKeyFailure } from "../core/missing_session.ts";
import { firstStackFrame } from "./_lost_socket_guard.ts";

/** SQLSTATEs worth another attempt of the whole transaction. */
const RETRYABLE = new Set(["40001", "40P01"]);

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * The primary keys of the message tables. A message id taken twice is a
 * race, not a mistake: an append handed an id from the sequence while an
 * import moved the sequence past the ids it keeps (and wrote them). Run
 * again, the append takes a new id, and the import sees the id taken and
 * gives its messages new ones.
 */
const MESSAGE_ID_KEYS = new Set(["messages_pkey", "message_words_pkey"]);

/**
 * Attempts at a message id raced for: the next id is past the raced ones.
 * More would only walk a sequence left behind its ids (a bad restore) one
 * id at a time, slowly: that is `doctor --fix`'s to repair.
 */
const RACED_ID_ATTEMPTS = 3;

/**
 * How many attempts an error allows the transaction (or statement) that
 * failed with it: `maxAttempts` when PostgreSQL asks for it to be run again
 * (a serialization failure, a deadlock), a few when a message id was raced
 * for, 1 (no other attempt) for any other error.
 */
export function attemptsFor(error: unknown, maxAttempts: number): number {
  const raw = error instanceof StorageError ? error.cause : error;
  const code = sqlState(raw);
  if (code === "23505") {
    const key = String((raw as { constraint_name?: unknown }).constraint_name);
    return MESSAGE_ID_KEYS.has(key) ? RACED_ID_ATTEMPTS : 1;
  }
  return code !== undefined && RETRYABLE.has(code) ? maxAttempts : 1;
}

/** True for a unique violation on `constraint` (an index name). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const raw = error instanceof StorageError ? error.cause : error;
  if (sqlState(raw) !== "23505") return false;
  return constraint === undefined ||
    (raw as { constraint_name?: string }).constraint_name === constraint;
}

/**
 * The error a missing session or parent gives on either engine: a
 * {@linkcode StorageError} of kind `constraint` (SQLite's message, or one
 * that names the session: `core/missing_session.ts`).
 *
 * @param cause The PostgreSQL error, when there is one.
 * @param message The message.
 * @returns The error.
 */
export function foreignKeyError(
  cause?: unknown,
  message = "FOREIGN KEY constraint failed",
): StorageError {
  return new StorageError(message, "constraint", { cause });
}

/**
 * `error`, or when it is a bare foreign-key failure ({@linkcode foreignKeyError}),
 * the same failure told with `message` (which names the session that does
 * not exist: `core/missing_session.ts`).
 *
 * @param error What was thrown.
 * @param message The message naming the session.
 * @returns The error to throw.
 */
export function namingMissingSession(error: unknown, message: string): unknown {
  return isForeignKeyFailure(error) ? foreignKeyError(error, message) : error;
}

/** The engine-neutral kind of a SQLSTATE (by class, the first two characters). */
function kindOf(code: string): StorageErrorKind {
  // 57014: a statement the server cancelled (its statement_timeout, or a cancel request); the
  // connection lives on.
  if (code === "40001" || code === "40P01" || code === "55P03" || code === "57014") return "busy";
  if (code === "25006" || code === "42501") return "readonly";
  if (code === "53100") return "full";
  switch (code.slice(0, 2)) {
    case "23":
      return "constraint";
    case "08":
    case "57":
    case "58":
    case "53":
      return "io";
    case "XX":
      return "corrupt";
    default:
      return "other";
  }
}

/** Where the client package's own code lies: `node_modules/postgres/src/`, or Deno's npm cache. */
export const CLIENT_FRAME = /[\\/]postgres[\\/](?:\d+\.\d+\.\d+[\\/])?(?:cjs[\\/])?src[\\/]/;

/**
 * A TypeError thrown by the client package's code itself (its first stack
 * frame is there), as when its socket is gone mid-write.
 *
 * @param error What a call threw.
 * @returns Whether it is the client's own fault.
 */
export function failedInsideClient(error: unknown): error is TypeError {
  if (!(error instanceof TypeError)) return false;
  const frame = firstStackFrame(error);
  return frame !== undefined && CLIENT_FRAME.test(frame);
}

/**
 * Turns what the client throws into a {@linkcode StorageError}: a foreign-key
 * violation into {@linkcode foreignKeyError}, another server error into its
 * kind with the SQLSTATE in the message, a lost connection into `io`.
 * Errors of the library (TitleError, TypeError…) pass unchanged.
 */
export function translate(error: unknown): unknown {
  if (error instanceof StorageError) return error;
  if (failedInsideClient(error)) {
    // The client's own code tripped while its connection went away (porsager/postgres#1066
    // and kin): a lost connection to the caller, as any other, not a fault of its arguments.
    return new StorageError(`PostgreSQL: the connection failed (${error.message})`, "io", {
      cause: error,
    });
  }
  const code = sqlState(error);
  if (code === undefined) return error;
  if (code === "23503") return foreignKeyError(error);
  const message = error instanceof Error ? error.message : String(error);
  // A server error carries a SQLSTATE; the client's own (EPIPE, CONNECTION_CLOSED…) do not.
  if ((error as { name?: unknown }).name === "PostgresError" && /^[0-9A-Z]{5}$/.test(code)) {
    // 53300: the server's or the role's connection limit, below what the pool opens.
    const hint = code === "53300"
      ? ": ask for a smaller pool with ?pool_size=N in the URL (4 connections by default)"
      : code === "25006" && / during recovery$/.test(message)
      // A hot standby: PostgreSQL names the function it refused, not why.
      ? ": the server is a standby, which takes no writes; write through the primary's URL"
      : "";
    return new StorageError(`PostgreSQL: ${message} (SQLSTATE ${code})${hint}`, kindOf(code), {
      cause: error,
    });
  }
  // The client's own codes: CONNECTION_CLOSED, CONNECTION_ENDED, ECONNREFUSED…
  return new StorageError(`PostgreSQL: ${message}`, "io", { cause: error });
}

/**
 * The codes of a socket the other end ended that the runtime's `net` gives
 * without a `syscall`: a write after the server's FIN was read fails with
 * EPIPE, "This socket has been ended by the other party" (Deno, Node, Bun).
 */
const ENDED_SOCKET_CODES: ReadonlySet<string> = new Set(["EPIPE", "ECONNRESET"]);

/**
 * Whether `error` says the server (or the network) ended the connection in
 * words that name no server: the socket's own (`read ECONNRESET`, `write
 * EPIPE`, "This socket has been ended by the other party"), or the server's
 * notice as it closes it (57P01 `pg_terminate_backend` or a fast shutdown,
 * 57P02 a crash of another backend, 57P03 not accepting).
 */
export function endedByServer(error: unknown): boolean {
  const code = sqlState(error);
  if (code === undefined) return false;
  return code.startsWith("57P") || ENDED_SOCKET_CODES.has(code) ||
    typeof (error as { syscall?: unknown }).syscall === "string";
}

/**
 * Whether `error` (or the error it translates) says the connection is gone:
 * the client's own CONNECTION_CLOSED, CONNECTION_DESTROYED or
 * CONNECTION_ENDED, the socket's, or the server's as it ends it (57P0x).
 */
export function connectionGone(error: unknown): boolean {
  const raw = error instanceof StorageError ? error.cause : error;
  const code = sqlState(raw);
  return code !== undefined &&
    (/^CONNECTION_(?:CLOSED|DESTROYED|ENDED)$/.test(code) || endedByServer(raw));
}

/**
 * Whether `error` says the connection went away under a statement: gone
 * ({@linkcode connectionGone}), or the client's own code tripped over its
 * closed socket ({@linkcode failedInsideClient}). What it sent may have run.
 */
export function lostUnderWay(error: unknown): boolean {
  const raw = error instanceof StorageError ? error.cause : error;
  return connectionGone(error) || failedInsideClient(raw);
}
