/**
 * The types of the PostgreSQL pool (`_client.ts`): a row, a bound value,
 * one statement's function and options, the pool's options and the pool
 * itself, as the rest of the engine uses them without the pool's code.
 *
 * @module
 */

/** A row as the client returns it, after the text codec. */
export type PgRow = Record<string, unknown>;

/** A value bound to a `$n` parameter. */
export type PgValue = string | number | bigint | boolean | null;

/** How one statement is run. */
export interface PgQueryOptions {
  /**
   * Planned with its parameters' values on every run (an unnamed statement)
   * instead of prepared once: for a query whose best plan depends on them,
   * as a search's does on how many rows its terms match. @default {false}
   */
  readonly custom?: boolean;
}

/** Runs one statement. Inside a transaction, on the transaction's connection. */
export interface PgQuery {
  (text: string, params?: readonly PgValue[], options?: PgQueryOptions): Promise<PgRow[]>;
}

/** Options of {@linkcode connectPg}. */
export interface PgConnectOptions {
  /**
   * Connections in the pool. A lock ({@linkcode PgClient.lock}) holds one
   * while the work it guards runs on another: it needs 2 or more, and at most
   * one fewer locks than connections are held at once (the others wait their
   * turn). @default {4}
   */
  readonly max?: number;
  /** Attempts of a transaction PostgreSQL asks to run again. @default {15} */
  readonly maxAttempts?: number;
  /** Waits `ms` milliseconds between attempts. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the jitter. */
  readonly random?: () => number;
  /**
   * Every transaction read-only on the server too (`default_transaction_read_only`).
   * @default {false}
   */
  readonly readonly?: boolean;
}

/** Options of {@linkcode PgClient.transaction}. */
export interface PgTransactionOptions {
  /**
   * The transaction writes: its id is read first (with its first
   * statement), so that a COMMIT whose answer was lost can be looked up.
   * Its function's first statement is then not the transaction's first (no
   * `SET TRANSACTION`).
   * @default {false}
   */
  readonly writes?: boolean;
}

/** A statement whose connection was lost once it was sent. */
export interface LostStatement {
  /**
   * The process id of the server connection that had it; `undefined`
   * through a pooler in transaction mode (its ids are its own).
   */
  readonly backend: number | undefined;
}

/** The pool of one store. */
export interface PgClient {
  /**
   * The URL said `?pgbouncer=true`: a pooler in transaction mode stands
   * between the store and the server, so the schema is the role's
   * `search_path` and no statement is prepared.
   */
  readonly transactionPooler: boolean;
  /** The URL errors name, its password masked: the caller's, with the `?schema=` it was given. */
  readonly display: string;
  /** One statement, in its own implicit transaction. */
  readonly query: PgQuery;
  /**
   * Runs `fn` in one transaction, again from the start when PostgreSQL asks
   * (deadlock, serialization). With `writes`, a connection lost once its
   * COMMIT was sent does not leave the outcome unknown: the server is asked
   * (`_commit_outcome.ts`); committed, `fn`'s result is given; rolled back,
   * `fn` runs again; and only when the server cannot tell, the error says
   * that the write may have been committed.
   */
  transaction<T>(fn: (query: PgQuery) => Promise<T>, options?: PgTransactionOptions): Promise<T>;
  /**
   * When `error`, thrown by {@linkcode PgClient.query}, says the statement's
   * connection was lost once the statement was handed to it (the server may
   * have run it, and committed it): the server process that ran it, if
   * known. `undefined` for any other error.
   */
  sentThenLost(error: unknown): LostStatement | undefined;
  /**
   * A question (a statement that changes nothing written: what became of a
   * lost write), asked again when its own connection is lost once it was
   * sent (3 tries, and more within the connect deadline), and while the
   * server cannot be reached, within that deadline too (a server restarting
   * refuses, then ends, connections).
   */
  readonly ask: PgQuery;
  /**
   * Takes the advisory lock `name` (or each of several, in order) of the
   * store's schema (the same name in another schema is another lock) in a
   * transaction of its own, held open on a connection of its own until
   * released, waiting while another holds it. A transaction-level lock, so
   * that a pooler in transaction mode keeps it on one server connection (a
   * session-level lock would stay behind on whichever server connection
   * took it); it goes with the connection if the process dies. At most one
   * fewer locks than the pool's connections are held or taken at once: a
   * further one waits for a turn first, so that each holder's work finds a
   * connection.
   *
   * @returns The function that releases it.
   * @throws {StorageError} Kind `other`, at once, in a pool of one connection.
   */
  lock(name: string | readonly string[]): Promise<() => Promise<void>>;
  /**
   * Told when {@linkcode PgClient.lock} finds the lock `name` held by
   * another, before it waits for it (a command says what it waits for).
   */
  onLockWait?: (name: string) => void;
  /**
   * Closes every connection once the work under way has ended (5 s at most), without
   * waiting for the server to answer the goodbye: a server that hangs does not hold it.
   */
  close(): Promise<void>;
}
