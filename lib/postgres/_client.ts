/**
 * The PostgreSQL connection pool of a store: the `postgres` npm package,
 * loaded by dynamic import only (`_postgres_package.ts`, so the SQLite
 * library keeps a static import graph with no npm package), every value
 * bound as a parameter, text made safe for PostgreSQL (which refuses
 * U+0000), and transactions retried on serialization failure and deadlock.
 *
 * @module
 */
import process from "node:process";
import { OpenError, StorageError } from "../core/errors.ts";
import { maskPassword, passwordFor, type PgServerOptions, serverOptions } from "./_url.ts";
import { guardLostSocketWrites } from "./_lost_socket_guard.ts";
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
import type {
  LostStatement,
  PgClient,
  PgConnectOptions,
  PgQuery,
  PgQueryOptions,
  PgRow,
  PgValue,
} from "./_client_types.ts";
import {
  attemptsFor,
  connectionGone,
  endedByServer,
  lostUnderWay,
  sqlState,
  translate,
} from "./_pg_errors.ts";
import {
  endLateConnections,
  loadPostgres,
  type PostgresSql,
  type PostgresStatement,
  saysServerPid,
} from "./_postgres_package.ts";
import { unrefTimer, withinSeconds } from "./_timers.ts";
import { decodeRow, encodeParam } from "./_row_codec.ts";

/**
 * `target_session_attrs` for a read-only store, whose own read-only default
 * would make the primary fail `read-write` and pass `read-only`: the server's
 * role answers instead (a primary configured read-only by default then counts
 * as writable, where libpq would say otherwise).
 */
const READER_ATTRS: Record<string, string> = { "read-write": "primary", "read-only": "standby" };

/** Milliseconds a connection said gone has to close before its transaction is rolled back as usual. */
const LOST_CLOSE_MS = 2000;

// ---------------------------------------------------------------------------
// The pool
// ---------------------------------------------------------------------------

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

/** Seconds the work under way on a pool left for a new one has to end. */
const RETIRED_POOL_SECONDS = 5;

/** Seconds close() leaves the work under way to end before the connections are cut. */
const CLOSE_SECONDS = 5;

/** Seconds the first answer may take when the URL gives no `connect_timeout` (the client's own default). */
const DEFAULT_CONNECT_SECONDS = 30;

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
