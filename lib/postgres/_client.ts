/**
 * The PostgreSQL connection pool of a store: the `postgres` npm package,
 * loaded by dynamic import only here (so the SQLite library keeps a static
 * import graph with no npm package), every value bound as a parameter, text
 * made safe for PostgreSQL (which refuses U+0000), and transactions retried
 * on serialization failure and deadlock.
 *
 * @module
 */
import process from "node:process";
import { OpenError, StorageError, type StorageErrorKind } from "../core/errors.ts";
import { maskPassword, passwordFor, type PgServerOptions, serverOptions } from "./_url.ts";
import { decodeText, encodeText } from "./_text_codec.ts";
import { spreadExtraColumns } from "./_extra.ts";
import { firstStackFrame, guardLostSocketWrites } from "./_lost_socket_guard.ts";
import { delay } from "../core/delay.ts";
import { quoteIdentifier } from "../core/sql_identifier.ts";
import { awaitConnection, lateConnection, placeOf } from "./_connect_deadline.ts";
import {
  askedAgain,
  commitOutcome,
  noteCommit,
  outcomeUnknown,
  type SentCommit,
} from "./_commit_outcome.ts";

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

function encodeParam(value: PgValue | undefined): PgValue {
  if (value === undefined) return null;
  return typeof value === "string" ? encodeText(value) : value;
}

function decodeRow(row: PgRow): PgRow {
  const out: PgRow = {};
  for (const key of Object.keys(row)) {
    const value = row[key];
    out[key] = typeof value === "string" ? decodeText(value) : value;
  }
  spreadExtraColumns(out);
  return out;
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/**
 * `target_session_attrs` for a read-only store, whose own read-only default
 * would make the primary fail `read-write` and pass `read-only`: the server's
 * role answers instead (a primary configured read-only by default then counts
 * as writable, where libpq would say otherwise).
 */
const READER_ATTRS: Record<string, string> = { "read-write": "primary", "read-only": "standby" };

/** SQLSTATEs worth another attempt of the whole transaction. */
const RETRYABLE = new Set(["40001", "40P01"]);

function sqlState(error: unknown): string | undefined {
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
function attemptsFor(error: unknown, maxAttempts: number): number {
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
 * {@linkcode StorageError} of kind `constraint` (SQLite's message).
 *
 * @param cause The PostgreSQL error, when there is one.
 * @returns The error.
 */
export function foreignKeyError(cause?: unknown): StorageError {
  return new StorageError("FOREIGN KEY constraint failed", "constraint", { cause });
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
function translate(error: unknown): unknown {
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
      : "";
    return new StorageError(`PostgreSQL: ${message} (SQLSTATE ${code})${hint}`, kindOf(code), {
      cause: error,
    });
  }
  // The client's own codes: CONNECTION_CLOSED, CONNECTION_ENDED, ECONNREFUSED…
  return new StorageError(`PostgreSQL: ${message}`, "io", { cause: error });
}

/**
 * Whether `error` says the server (or the network) ended the connection in
 * words that name no server: the socket's own (`read ECONNRESET`, `EPIPE`),
 * or the server's notice as it closes it (57P01 `pg_terminate_backend` or a
 * fast shutdown, 57P02 a crash of another backend, 57P03 not accepting).
 */
function endedByServer(error: unknown): boolean {
  const code = sqlState(error);
  if (code === undefined) return false;
  return code.startsWith("57P") || typeof (error as { syscall?: unknown }).syscall === "string";
}

/**
 * Whether `error` (or the error it translates) says the connection is gone:
 * the client's own CONNECTION_CLOSED, CONNECTION_DESTROYED or
 * CONNECTION_ENDED, the socket's, or the server's as it ends it (57P0x).
 */
function connectionGone(error: unknown): boolean {
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
function lostUnderWay(error: unknown): boolean {
  const raw = error instanceof StorageError ? error.cause : error;
  return connectionGone(error) || failedInsideClient(raw);
}

/** When, after a pool's end, the connections it was still making are ended too. */
const LATE_CONNECTION_CHECKS_MS = [500, 2000, 6000];

/**
 * Ends, a few times over the next seconds, the connections the ended pool
 * `on` was still making: the client's end() does not stop one under way (it
 * ends only a socket already open), which then connects and stays open
 * until its idle timeout (30 s), holding the process. Ending an ended
 * connection again does nothing; the timers never hold the process.
 */
function endLateConnections(on: PostgresSql): void {
  for (const ms of LATE_CONNECTION_CHECKS_MS) {
    unrefTimer(setTimeout(() => void on.close().catch(() => {}), ms));
  }
}

/**
 * Whether the process id the connection that ran `statement` said at
 * start-up is the one the server gave it (`pid`, its `pg_backend_pid()`):
 * not through a pooler, which says its own. A store looks for the server
 * process of a lost statement by that id.
 */
function saysServerPid(statement: PostgresStatement, pid: unknown): boolean {
  const said = (statement.state as { pid?: unknown } | null)?.pid;
  return typeof said === "number" && said > 0 && Number(pid) === said;
}

/** Milliseconds a connection said gone has to close before its transaction is rolled back as usual. */
const LOST_CLOSE_MS = 2000;

/** Lets the process end with `timer` pending (Deno's numeric timers and node:timers' objects). */
function unrefTimer(timer: unknown): void {
  if (typeof timer === "number") {
    (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(timer);
  } else (timer as { unref?: () => void } | undefined)?.unref?.();
}

// ---------------------------------------------------------------------------
// The pool
// ---------------------------------------------------------------------------

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
   * sent (3 tries), and while the server cannot be reached, within the
   * connect deadline (a server restarting refuses, then ends, connections).
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

/** A statement of the client: a promise of its rows, until it runs. */
interface PostgresStatement extends Promise<PgRow[]> {
  /** The backend of the connection it was handed to; `null` while it waits for one. */
  readonly state: unknown;
  /** Takes it back before it is sent (it then never runs). */
  cancel(): void;
}

interface PostgresSql {
  /** The options the client read: where it connects. */
  readonly options: { host?: string[]; port?: number[]; path?: string };
  unsafe(text: string, params?: unknown[], options?: { prepare?: boolean }): PostgresStatement;
  begin<T>(fn: (sql: PostgresSql) => Promise<T>): Promise<T>;
  begin<T>(mode: string, fn: (sql: PostgresSql) => Promise<T>): Promise<T>;
  end(options?: { timeout?: number }): Promise<void>;
  /** Ends each connection of the pool again (after end(): one it made since). */
  close(): Promise<void>;
}

/** Work given to one pool, as {@linkcode connectPg}'s pools watch it. */
interface PoolWork<T> {
  /** What it gives. */
  readonly answer: Promise<T>;
  /** Whether it has a connection of the pool (it may then have run, and is never moved). */
  connected(): boolean;
  /**
   * Makes sure it never runs (a statement is taken back and counted no more; a transaction
   * stays counted until the client lets it go, lest the pool connect again for it once ended).
   */
  abandon(): void;
}

/** Work of a pool as its retirement sees it. */
interface WaitingWork {
  /** Whether it has a connection of the pool (it then stays with that pool). */
  connected(): boolean;
  /** Starts it again on the pool in use, unless it has a connection. */
  move(): void;
}

type PostgresFactory = (options: Record<string, unknown>) => PostgresSql;

/**
 * Loads the client: `npm:postgres@3.4.9` on Deno, the bare package (from
 * node_modules) on Bun and Node. Both specifiers are literals, so
 * `bun build --compile` bundles the client into the executable.
 *
 * @param display The target as shown in the error (password masked).
 * @throws {OpenError} When the package cannot be loaded: what to do about it
 *   on this runtime, and the loader's own words.
 */
async function loadPostgres(display: string): Promise<PostgresFactory> {
  const onDeno = "Deno" in globalThis;
  try {
    const mod = onDeno ? await import("npm:postgres@3.4.9") : await import("postgres");
    return (mod.default ?? mod) as unknown as PostgresFactory;
  } catch (error) {
    const how = onDeno
      ? "Deno fetches it from the npm registry on first use: check the network (or NPM_CONFIG_REGISTRY)"
      : 'install it with "npm ci" in hermes-state\'s folder';
    const said = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new OpenError(
      display,
      `the PostgreSQL client (npm package postgres 3.4.9) cannot be loaded; ${how} (${said})`,
      { cause: error, kind: "other" },
    );
  }
}

/** Seconds the work under way on a pool left for a new one has to end. */
const RETIRED_POOL_SECONDS = 5;

/** Seconds close() leaves the work under way to end before the connections are cut. */
const CLOSE_SECONDS = 5;

/** Seconds the first answer may take when the URL gives no `connect_timeout` (the client's own default). */
const DEFAULT_CONNECT_SECONDS = 30;

/**
 * `answer`, or a rejection once `seconds` have passed without it (0: no
 * deadline, as libpq reads `connect_timeout=0`). The client's own connect
 * timeout rejects nothing when each connection is closed before it fires
 * (a proxy or balancer with no server behind it, a port of another
 * service): it connects again for ever, and the first query waits with it.
 */
async function withinSeconds<T>(answer: Promise<T>, seconds: number): Promise<T> {
  if (seconds === 0) return await answer;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`no answer within ${seconds} s; ?connect_timeout=SECONDS waits longer`)),
      seconds * 1000,
    );
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Opens a pool on `url` (its `schema` query parameter removed by the caller)
 * with `search_path` set to `schema`, and checks that the server answers.
 * Through a transaction-mode pooler (`?pgbouncer=true`) nothing is set at
 * start-up but `application_name`, statements are not prepared, and a
 * read-only pool runs every statement in a `READ ONLY` transaction; the
 * caller checks the schema with {@linkcode checkSchemaInUse}.
 *
 * @param url The server URL.
 * @param schema The schema holding the tables.
 * @param options Pool size and retry timing.
 * @param shownAs The URL an error names, its password masked: the caller's own, with the
 *   `?schema=` it was given. @default {url}
 * @returns The pool.
 * @throws {OpenError} When the URL is malformed (naming the value), or the
 *   server cannot be reached or refuses the login.
 */
export async function connectPg(
  url: string,
  schema: string,
  options: PgConnectOptions = {},
  shownAs: string = url,
): Promise<PgClient> {
  const display = maskPassword(shownAs);
  // Read before the client is loaded: a malformed URL is the caller's error, not a missing package.
  let read: PgServerOptions;
  try {
    read = serverOptions(url, process.env);
  } catch (error) {
    throw new OpenError(display, (error as Error).message, { cause: error, kind: "other" });
  }
  const pass = passwordFor(read, process.env);
  const { passfile: _passfile, transactionPooler: _pooler, ...server } = read;
  const pooled = read.transactionPooler === true;
  // A read-only store sets `default_transaction_read_only`, after which every server looks
  // read-only to the client's check: ask a reader's question by the server's role instead.
  const readerAttrs = options.readonly && !pooled
    ? {
      target_session_attrs: READER_ATTRS[server.target_session_attrs ?? ""] ??
        server.target_session_attrs,
    }
    : {};
  const postgres = await loadPostgres(display);
  /** A new pool: the first, and another each time the one in use lost a connection. */
  const newPool = (): PostgresSql => {
    const pool: PostgresSql = postgres({
      ...server,
      ...readerAttrs,
      ...(pass === undefined ? {} : { pass }),
      max: options.max ?? 4,
      // A pooler in transaction mode hands each transaction any server connection, where a
      // statement another connection prepared is unknown.
      prepare: !pooled,
      onnotice: () => {},
      fetch_types: false,
      // A pool left open (no close()) lets the process exit half a minute after its last query.
      idle_timeout: 30,
      connection: {
        application_name: "hermes-state",
        ...server.connection,
        // The schema alone: were it missing (dropped under a running store), `public` after it
        // would take the store's reads and writes, or its tables, without a word. A pooler in
        // transaction mode refuses both settings: the role gives the schema, BEGIN READ ONLY the rest.
        ...(pooled ? {} : { search_path: quoteIdentifier(schema) }),
        ...(options.readonly && !pooled ? { default_transaction_read_only: "on" } : {}),
      },
      types: {
        // bigint and numeric (SUM, COUNT) as JavaScript numbers, as the SQLite drivers give them.
        int8: { to: INT8, from: [INT8], serialize: (x: unknown) => String(x), parse: Number },
        numeric: {
          to: NUMERIC,
          from: [NUMERIC],
          serialize: (x: unknown) => String(x),
          parse: Number,
        },
      },
      // Called as a connection closes, before the client connects it again for the work
      // waiting for one (see closedWithWorkWaiting).
      onclose: () => closedWithWorkWaiting(pool),
    });
    return pool;
  };
  let sql = newPool();
  const connectSeconds = read.connect_timeout ?? DEFAULT_CONNECT_SECONDS;
  const where = placeOf(sql.options);
  const maxConnections = options.max ?? 4;
  /**
   * Locks held or being taken. Each holds a connection while the work it guards runs on
   * another, so at most one fewer than the pool's connections: with as many holders as
   * connections, their work waited for a connection for good.
   */
  let locksUnderWay = 0;
  const waitingForLockTurn: Array<() => void> = [];
  const takeLockTurn = async (name: string | readonly string[]): Promise<void> => {
    if (maxConnections < 2) {
      const shown = typeof name === "string" ? name : name.join(", ");
      throw new StorageError(
        `PostgreSQL: the lock "${shown}" needs a pool of at least 2 connections (this one has 1): its transaction holds one while the work it guards runs on another; open the store with a larger pool (?pool_size=2 or more)`,
        "other",
      );
    }
    while (locksUnderWay >= maxConnections - 1) {
      await new Promise<void>((resolve) => waitingForLockTurn.push(resolve));
    }
    locksUnderWay++;
  };
  const giveLockTurn = () => {
    locksUnderWay--;
    waitingForLockTurn.shift()?.();
  };
  /** Per pool, its transactions and locks under way (each holds, or waits for, a connection). */
  const reserving = new WeakMap<PostgresSql, number>();
  const reservingOn = (on: PostgresSql) => reserving.get(on) ?? 0;
  /** Per pool, its statements under way outside transactions. */
  const statements = new WeakMap<PostgresSql, Set<PostgresStatement>>();
  /**
   * Whether a statement of the pool runs on a connection: the server answers, and a transaction
   * the client queued behind it on that connection waits its turn, not for a connection.
   */
  const answering = (on: PostgresSql) =>
    [...statements.get(on) ?? []].some((statement) => statement.state != null);
  /** Whether a statement, transaction or lock of the pool is under way. */
  const busy = (on: PostgresSql) => reservingOn(on) > 0 || (statements.get(on)?.size ?? 0) > 0;
  /** Per pool, who waits for its work under way to end. */
  const idleWaiters = new WeakMap<PostgresSql, Array<() => void>>();
  /** Tells those waiting on `on` once nothing of it is under way (called as each piece ends). */
  const noteEnded = (on: PostgresSql) => {
    if (busy(on)) return;
    const waiting = idleWaiters.get(on) ?? [];
    idleWaiters.delete(on);
    for (const wake of waiting) wake();
  };
  /**
   * Ends the pool `on` once its work under way has ended, or after `seconds`.
   * Its connections are then cut, not waited for: the client's own end()
   * waits for the server to close each one, and a server that hangs (or a
   * network that drops packets) never does; libpq's PQfinish does not wait either.
   */
  const endPool = async (on: PostgresSql, seconds: number) => {
    const idle = busy(on)
      ? new Promise<void>((wake) => idleWaiters.set(on, [...idleWaiters.get(on) ?? [], wake]))
      : undefined;
    if (idle !== undefined) await withinSeconds(idle, seconds).catch(() => {});
    await on.end({ timeout: 0 }).catch(() => {});
    endLateConnections(on);
  };
  /**
   * Per pool, the work that still waits for one of its connections, each moved to the new pool
   * when it is retired: the lost connection's socket, connected again, may never send a byte
   * (the client keeps its jammed write queue), and work handed to it would wait until the old
   * pool is ended. Never having run, it runs on the new pool as if it had started there.
   */
  const waitingOn = new WeakMap<PostgresSql, Set<WaitingWork>>();
  /**
   * Starts the work of `start` on the pool in use; started again on the new pool (the old
   * start abandoned, never to run) if that pool is retired while it waits for a connection.
   */
  const onLivePool = <T>(start: (on: PostgresSql) => PoolWork<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const on = sql;
      const work = start(on);
      const waiting = waitingOn.get(on) ?? new Set<WaitingWork>();
      waitingOn.set(on, waiting);
      let moved = false;
      let settled = false;
      const move = () => {
        // Settled, it has answered (a failure too): run again, it could write what the
        // caller was told failed.
        if (settled || work.connected()) return;
        moved = true;
        work.abandon();
        onLivePool(start).then(resolve, reject);
      };
      const entry: WaitingWork = { connected: work.connected, move };
      waiting.add(entry);
      // Taken out of the waiting work as it settles, not a turn later: a pool retired meanwhile
      // must not move it.
      const settle = () => {
        settled = true;
        waiting.delete(entry);
      };
      work.answer.then(
        (value) => {
          settle();
          if (!moved) resolve(value);
        },
        (error: unknown) => {
          settle();
          if (!moved) reject(error);
        },
      );
    });
  /**
   * A connection of the pool `on` closed. If work waits for one of its
   * connections, the closed one was at work (an idle one would have taken
   * it): lost. The pool is left at once, its waiting work moved to the next
   * (and so taken out of the client's queue), before the client connects the
   * lost connection again for that work: once the old pool was ended, that
   * connection would still connect, and stay open until its idle timeout,
   * holding the process (porsager/postgres: end() does not stop a connection
   * waiting to connect again).
   */
  const closedWithWorkWaiting = (on: PostgresSql) => {
    if (on !== sql) return;
    if ([...waitingOn.get(on) ?? []].some((work) => !work.connected())) retire();
  };
  /** Pools left for a new one, each ending. */
  const retired = new Set<Promise<void>>();
  /** Whether the server answered once: a pool that never connected is not replaced. */
  let opened = false;
  /**
   * Leaves the pool in use for a new one, when one of its connections was
   * lost: the client may keep that connection's write queue jammed, and a
   * statement given to it (one already waiting for a connection, too) would
   * wait for its connect timeout, or for ever. The work under way on the old
   * pool has a few seconds to end; what is left of it then fails.
   */
  const retire = () => {
    if (!opened) return;
    const old = sql;
    sql = newPool();
    // Moved before the old pool's end is planned: what is left of it is what runs on it.
    const waiting = waitingOn.get(old) ?? new Set<WaitingWork>();
    waitingOn.delete(old);
    for (const work of waiting) work.move();
    const ending: Promise<void> = endPool(old, RETIRED_POOL_SECONDS)
      .finally(() => retired.delete(ending));
    retired.add(ending);
  };
  /** The errors a held lock's loss gave the statements under way (their own connections live on). */
  const lockLosses = new WeakSet<StorageError>();
  /**
   * What a transaction's function gives, unless its connection is gone (it
   * failed for that, or caught that failure and went on): the function then
   * never ends, for the client would write its ROLLBACK or COMMIT to the
   * dropped socket, from a deferred write that throws outside any `try`
   * (porsager/postgres#1066), which on Deno leaves the runtime's other
   * deferred work (a new connection's first bytes) unrun. The transaction
   * fails all the same, with the connection's close (`transaction`, the
   * client's own), and the server rolled it back. A connection said gone
   * that does not close within a few seconds is rolled back as any other
   * failure.
   */
  const keptFromLostConnection = async <T>(
    answer: Promise<T>,
    transaction: Promise<T>,
    lost: () => boolean,
  ): Promise<T> => {
    let value: T;
    try {
      value = await answer;
    } catch (error) {
      if (!connectionGone(error) || lockLosses.has(error as StorageError)) throw error;
      return await untilClosed(transaction, error);
    }
    if (!lost()) return value;
    return await untilClosed(
      transaction,
      new StorageError(
        `PostgreSQL: the connection to ${where} was lost with the transaction`,
        "io",
      ),
    );
  };
  /** Never ends once `transaction` has ended (its connection closed); throws `error` if it does not soon. */
  const untilClosed = async (transaction: Promise<unknown>, error: unknown): Promise<never> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([
      transaction.then(() => true, () => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), LOST_CLOSE_MS);
        // Never holds the process open: the connection is gone.
        unrefTimer(timer);
      }),
    ]);
    clearTimeout(timer);
    if (closed) return await new Promise<never>(() => {});
    throw error;
  };
  /** The statements under way, each failed at once when a held lock is lost. */
  const inFlight = new Set<(error: StorageError) => void>();
  /**
   * The transactions (by the client's connection of each) that have lost
   * their connection or ended: a statement given to one afterwards is never
   * sent. The client would queue it on that connection, which it connects
   * again for the pool's next work (or hands to the next transaction), and it
   * would then run outside the transaction, written for good while the
   * transaction was reported failed (porsager/postgres#1155).
   */
  const overTransactions = new WeakMap<PostgresSql, "lost" | "ended">();
  /** The pool of each transaction (by the client's connection of it). */
  const poolOfTransaction = new WeakMap<PostgresSql, PostgresSql>();
  /**
   * The pool each failure came from (the client's error, and the store's for
   * it): a loss retires the pool in use only if it is that pool. One lost
   * connection is seen by its transaction, its statements and the pool's
   * close hook, and the pool that replaced it must not be left in turn (its
   * connections, still connecting, would stay open: see closedWithWorkWaiting).
   */
  const failedOn = new WeakMap<object, PostgresSql>();
  const noteFailedOn = (error: unknown, on: PostgresSql | undefined) => {
    if (on !== undefined && typeof error === "object" && error !== null && !failedOn.has(error)) {
      failedOn.set(error, on);
    }
  };
  /**
   * The failures of statements whose connection was lost once they were
   * handed to it, each with the server process of that connection (none
   * through a pooler, whose process ids are its own).
   */
  const sentThenLost = new WeakMap<object, LostStatement>();
  const noteSentThenLost = (error: unknown, lost: LostStatement | undefined) => {
    if (typeof error === "object" && error !== null && lost !== undefined) {
      sentThenLost.set(error, lost);
    }
  };
  /** The server process a statement was handed to. */
  const backendOf = (statement: PostgresStatement): LostStatement => {
    const pid = (statement.state as { pid?: unknown } | null)?.pid;
    return { backend: pidsKnown && typeof pid === "number" && pid > 0 ? pid : undefined };
  };
  /**
   * Whether a connection's process id, as it says at start-up, is the
   * server's own (checked once the pool answers): a pooler between, in any
   * mode and named or not (`?pgbouncer=true`), says one of its own.
   */
  let pidsKnown = false;
  const stopGuard = guardLostSocketWrites(retire);
  /** The pool to use now (a new one once the last lost a connection). */
  const pool = (): PostgresSql => sql;
  /** Translates what the client threw, and notes a lost connection. */
  const failure = (error: unknown): unknown => {
    // The client's own connect timer: the same words as the deadline of the whole wait.
    const translated = sqlState(error) === "CONNECT_TIMEOUT"
      ? lateConnection(where, connectSeconds, error)
      : translate(error);
    if (!(translated instanceof StorageError) || translated.kind !== "io") return translated;
    const from = typeof error === "object" && error !== null ? failedOn.get(error) : undefined;
    if (from === undefined || from === sql) retire();
    // The client's own words for a connection closed under it name no cause: the server's log does.
    const said = sqlState(error) === "CONNECTION_CLOSED"
      ? "closed by the server or the network: the server's log says why"
      : endedByServer(error) && !translated.message.includes(where)
      ? translated.message.replace(/^PostgreSQL: /, "")
      : undefined;
    const result = said === undefined ? translated : new StorageError(
      `PostgreSQL: the connection to ${where} was lost (${said})`,
      "io",
      { cause: error },
    );
    noteFailedOn(result, from);
    return result;
  };
  /**
   * Runs one statement on `conn`. `onPool`: `conn` is the pool, not a
   * transaction's own connection, so the statement may wait for a new
   * connection, within the connect deadline.
   */
  const run = async (
    conn: PostgresSql,
    text: string,
    params: readonly PgValue[] = [],
    options: PgQueryOptions = {},
    onPool = false,
  ) => {
    const over = overTransactions.get(conn);
    if (over !== undefined) {
      throw over === "lost"
        ? new StorageError(
          `PostgreSQL: the connection to ${where} was lost with the transaction; ` +
            "this statement of it was not sent",
          "io",
        )
        : new StorageError(
          "PostgreSQL: a statement was given to a transaction that had ended; it was not sent",
          "other",
        );
    }
    let fail!: (error: StorageError) => void;
    const lockLost = new Promise<never>((_, reject) => fail = reject);
    inFlight.add(fail);
    const prepare = !pooled && !options.custom;
    try {
      const encoded = params.map(encodeParam);
      const answer = onPool
        ? onLivePool((on) => startStatement(on, text, encoded, prepare, lockLost))
        : conn.unsafe(text, encoded, { prepare });
      const rows = await Promise.race([answer, lockLost]);
      return Array.from(rows, decodeRow);
    } catch (error) {
      // Before the transaction's function sees it: what it sends next is never sent.
      // A held lock's loss fails the statement, not its connection.
      if (!onPool && connectionGone(error) && !lockLosses.has(error as StorageError)) {
        overTransactions.set(conn, "lost");
      }
      if (!onPool) noteFailedOn(error, poolOfTransaction.get(conn));
      const translated = failure(error);
      if (typeof error === "object" && error !== null) {
        noteSentThenLost(translated, sentThenLost.get(error));
      }
      throw translated;
    } finally {
      inFlight.delete(fail);
    }
  };
  /**
   * One statement given to the pool `on`, counted among its statements under
   * way until it ends (or is given up on), waiting for a connection within the
   * connect deadline.
   */
  const startStatement = (
    on: PostgresSql,
    text: string,
    params: PgValue[],
    prepare: boolean,
    lockLost: Promise<never>,
  ): PoolWork<PgRow[]> => {
    const statement = on.unsafe(text, params, { prepare });
    const underWay = statements.get(on) ?? new Set<PostgresStatement>();
    statements.set(on, underWay.add(statement));
    const drop = () => {
      if (underWay.delete(statement)) noteEnded(on);
    };
    let abandoned = false;
    // Handed to a connection: the client notes the connection's backend on it.
    const connected = () => statement.state != null;
    // Given up on when a held lock is lost: no longer counted, though the server may still run it.
    const failed = statement.then(undefined, (error: unknown) => {
      noteFailedOn(error, on);
      if (connected() && lostUnderWay(error)) noteSentThenLost(error, backendOf(statement));
      throw error;
    });
    const answer = awaitConnection(Promise.race([failed, lockLost]), {
      seconds: connectSeconds,
      where,
      connected: () => connected() || abandoned,
      queued: () => reservingOn(on) >= maxConnections,
      abandon: () => statement.cancel(),
    }).finally(drop);
    return {
      answer,
      connected,
      abandon: () => {
        abandoned = true;
        statement.cancel();
        drop();
      },
    };
  };
  // The first statement checks that the server answers, and which process ids its connections say.
  const probe = sql.unsafe("SELECT pg_backend_pid() AS pid", [], { prepare: false });
  let serverPid: unknown;
  try {
    const answer = probe.then((rows) => rows, (error: unknown) => Promise.reject(failure(error)));
    serverPid = (await withinSeconds(answer, connectSeconds))[0]?.pid;
  } catch (error) {
    stopGuard();
    await sql.end({ timeout: 0 }).catch(() => {});
    const reason = error instanceof Error ? error.message : String(error);
    // The server asked for a password and none was found anywhere: say where one can go.
    const hint = pass === undefined && /\(SQLSTATE 28P01\)/.test(reason)
      ? ": no password was given (in the URL, PGPASSWORD or ~/.pgpass)"
      : !pooled && /unsupported startup parameter/.test(reason)
      ? ": through a pooler in transaction mode, add ?pgbouncer=true to the URL"
      : server.target_session_attrs !== undefined && /CONNECTION_DESTROYED/.test(reason)
      ? `: no server of the URL is ${server.target_session_attrs} (?target_session_attrs=)`
      : "";
    throw new OpenError(
      display,
      `the PostgreSQL server did not accept the connection (${reason})${hint}`,
      { cause: error },
    );
  }
  opened = true;
  pidsKnown = !pooled && saysServerPid(probe, serverPid);
  const maxAttempts = options.maxAttempts ?? 15;
  const sleep = options.sleep ?? delay;
  const random = options.random ?? Math.random;
  // Through a pooler, a read-only pool's statements are each a transaction that says so.
  const readOnlyMode = pooled && options.readonly ? "read only" : "";
  /**
   * `fn` in a transaction (`mode`: "" or "read only") on the pool in use,
   * which may wait for a new connection, within the connect deadline (on the
   * next pool if this one is retired meanwhile).
   */
  const begin = <T>(mode: string, fn: (tx: PostgresSql) => Promise<T>): Promise<T> =>
    onLivePool((on): PoolWork<T> => {
      reserving.set(on, reservingOn(on) + 1);
      let connected = false;
      let abandoned = false;
      let connection: PostgresSql | undefined;
      const work: Promise<T> = on.begin(mode, (tx) => {
        connected = true;
        connection = tx;
        poolOfTransaction.set(tx, on);
        // Given up on while it waited: rolled back before it did anything.
        if (abandoned) return Promise.reject(lateConnection(where, connectSeconds));
        return keptFromLostConnection(fn(tx), work, () => overTransactions.get(tx) === "lost");
      }).then((value) => {
        if (connection !== undefined) overTransactions.set(connection, "ended");
        return value;
      }, (error: unknown) => {
        noteFailedOn(error, on);
        // Rolled back or lost: nothing more runs on its connection as part of it.
        if (connection !== undefined && !overTransactions.has(connection)) {
          overTransactions.set(connection, connectionGone(error) ? "lost" : "ended");
        }
        throw error;
      }).finally(() => {
        reserving.set(on, reservingOn(on) - 1);
        noteEnded(on);
      });
      const answer = awaitConnection(work, {
        seconds: connectSeconds,
        where,
        connected: () => connected || abandoned,
        // Behind the store's other transactions and locks (this one counts itself too), or
        // behind a statement on a connection.
        queued: () => reservingOn(on) > maxConnections || answering(on),
        abandon: () => abandoned = true,
      });
      return {
        answer,
        connected: () => connected,
        // Rolled back on the connection it is handed, or failed as the old pool ends.
        abandon: () => abandoned = true,
      };
    });
  /** The locks held, each released by its function (close() releases what is left). */
  const held = new Set<() => Promise<void>>();
  const client: PgClient = {
    transactionPooler: pooled,
    display,
    query: readOnlyMode
      ? (text, params, options) => {
        try {
          return begin(readOnlyMode, (tx) => run(tx, text, params, options)).catch(
            (error) => {
              throw failure(error);
            },
          );
        } catch (error) {
          return Promise.reject(error);
        }
      }
      : async (text, params, options) => {
        // A statement on its own is its own transaction: run again as a transaction would be.
        for (let attempt = 1;; attempt++) {
          try {
            return await run(pool(), text, params, options, true);
          } catch (error) {
            if (attempt >= attemptsFor(error, maxAttempts)) throw error;
            await sleep(20 + random() * 130);
          }
        }
      },
    async transaction(fn, options = {}) {
      for (let attempt = 1;; attempt++) {
        const sent: SentCommit<Awaited<ReturnType<typeof fn>>> = {};
        try {
          return await begin(readOnlyMode, (tx) => {
            const query: PgQuery = (text, params, settings) => run(tx, text, params, settings);
            return options.writes ? noteCommit(query, fn, sent) : fn(query);
          });
        } catch (error) {
          // BEGIN and COMMIT fail outside `run` (a lost connection): translated here.
          const translated = failure(error);
          if (sent.id !== undefined && lostUnderWay(error)) {
            // Lost once COMMIT was sent (the pool in use is a new one now): asked, not guessed.
            const outcome = await commitOutcome(client.ask, sent.id, sleep);
            if (outcome.status === "committed") return sent.value as Awaited<ReturnType<typeof fn>>;
            if (outcome.status === "unknown") {
              throw outcomeUnknown(translated, "once the write's COMMIT was sent", outcome.reason);
            }
            if (attempt >= maxAttempts) throw translated;
            continue;
          }
          if (attempt >= attemptsFor(error, maxAttempts)) throw translated;
          await sleep(20 + random() * 130);
        }
      }
    },
    sentThenLost: (error) =>
      typeof error === "object" && error !== null ? sentThenLost.get(error) : undefined,
    get ask(): PgQuery {
      return askedAgain(client.query, {
        lost: (error) => client.sentThenLost(error) !== undefined,
        seconds: connectSeconds || DEFAULT_CONNECT_SECONDS,
        sleep,
      });
    },
    async lock(name) {
      await takeLockTurn(name);
      let release!: () => void;
      const released = new Promise<void>((resolve) => release = resolve);
      let taken!: () => void;
      const acquired = new Promise<void>((resolve) => taken = resolve);
      const holding = begin("", async (tx) => {
        // Held open while the caller works: a server's idle-in-transaction limit must not end
        // it; and the wait for another holder ends with its release, not at the server's
        // lock_timeout or statement_timeout. For this transaction only, in one round trip.
        await run(
          tx,
          "SELECT set_config('idle_in_transaction_session_timeout', '0', true), " +
            "set_config('lock_timeout', '0', true), set_config('statement_timeout', '0', true)",
        );
        for (const one of typeof name === "string" ? [name] : name) {
          // Named within the store's schema: stores in other schemas of the database never wait.
          const key = "hashtextextended(coalesce(current_schema(), '') || ' ' || $1, 0)";
          const [free] = await run(tx, `SELECT pg_try_advisory_xact_lock(${key}) AS taken`, [one]);
          if (free?.taken === true) continue;
          client.onLockWait?.(one);
          await run(tx, `SELECT pg_advisory_xact_lock(${key})`, [one]);
        }
        taken();
        await released;
      }).then(() => undefined, (error: unknown) => failure(error));
      void holding.then(giveLockTurn);
      // Taken, or the transaction failed before (or while) taking it.
      const failed = await Promise.race([acquired, holding]);
      if (failed !== undefined) throw failed;
      let lost = false;
      void holding.then((error) => lost = error !== undefined);
      const unlock = async () => {
        held.delete(unlock);
        // Its connection gone, the transaction stays open in the client: COMMIT would be
        // written to the dropped socket.
        if (!lost) release();
        const error = await holding;
        if (error !== undefined) throw error;
      };
      held.add(unlock);
      // Its connection lost while held: the statements under way fail now (those that follow
      // run; the holder learns of the loss at its release).
      void holding.then((error) => {
        if (error === undefined || !held.has(unlock)) return;
        const shown = Array.isArray(name) ? name.join(", ") : name;
        const said = error instanceof Error ? error.message : String(error);
        const loss = new StorageError(
          `PostgreSQL: the connection holding the lock "${shown}" was lost (${said})`,
          "io",
          { cause: error },
        );
        lockLosses.add(loss);
        for (const fail of [...inFlight]) fail(loss);
      });
      return unlock;
    },
    async close() {
      stopGuard();
      // A held lock's transaction would keep end() waiting: committed first.
      await Promise.allSettled([...held].map((unlock) => unlock()));
      await Promise.allSettled([endPool(sql, CLOSE_SECONDS), ...retired]);
    },
  };
  return client;
}

/**
 * Refuses a pool whose statements would not reach `schema`'s tables: the
 * schema first in force must be the store's. Through a transaction-mode
 * pooler it comes from the role (or `"$user"`, a role named as the schema);
 * a pooler that drops the start-up `search_path` without a word is caught
 * here too.
 *
 * @param client The pool (the schema created or migrated already).
 * @param schema The store's schema.
 * @throws {OpenError} When another schema is in force, naming it and the fix.
 */
export async function checkSchemaInUse(client: PgClient, schema: string): Promise<void> {
  const [row] = await client.query(
    "SELECT current_schema() AS in_use, current_user AS role, current_database() AS db",
  );
  if (row?.in_use === schema) return;
  const inUse = row?.in_use == null ? "none" : JSON.stringify(row.in_use);
  const fix = client.transactionPooler
    ? `through a transaction-mode pooler the schema comes from the role: ALTER ROLE ${
      quoteIdentifier(String(row?.role))
    } IN DATABASE ${quoteIdentifier(String(row?.db))} SET search_path = ${
      quoteIdentifier(schema)
    } (or name the role as the schema)`
    : "a pooler between the store and the server dropped the start-up search_path: connect to the server, or to a pooler that passes it on, or use ?pgbouncer=true with the role's search_path set";
  throw new OpenError(
    client.display,
    `statements would reach schema ${inUse}, not the store's ${JSON.stringify(schema)}: ${fix}`,
    { kind: "other" },
  );
}
