/**
 * The connect deadline of every connection a pool opens, not only its first:
 * the client's own `connect_timeout` ends one attempt, but a connection whose
 * socket the other end closes before the server answered (a balancer or
 * proxy with no server behind it, every host of a multi-host URL refusing)
 * is attempted again for ever, and the statement given to it waits with it.
 *
 * @module
 */
import { StorageError } from "../core/errors.ts";

/** Where a pool connects, as its client options say. */
export interface PgPlace {
  readonly host?: readonly string[];
  readonly port?: readonly number[];
  readonly path?: string;
}

/**
 * The server a pool connects to, as an error names it.
 *
 * @param place The client's options.
 * @returns `host:port` (each host of several, comma-separated) or the socket file.
 */
export function placeOf(place: PgPlace): string {
  if (place.path) return place.path;
  const hosts = place.host ?? ["localhost"];
  return hosts.map((host, i) => `${host}:${place.port?.[i] ?? place.port?.[0] ?? 5432}`).join(
    ",",
  );
}

/**
 * The error of a connection the server did not answer in time.
 *
 * @param where The server ({@linkcode placeOf}).
 * @param seconds The deadline.
 * @param cause The client's own error, when it gave up first.
 * @returns A {@linkcode StorageError} of kind `io`.
 */
export function lateConnection(where: string, seconds: number, cause?: unknown): StorageError {
  return new StorageError(
    `PostgreSQL: no connection to ${where} within ${seconds} s (connect_timeout); ?connect_timeout=SECONDS waits longer`,
    "io",
    { cause },
  );
}

/** How {@linkcode awaitConnection} watches one piece of work. */
export interface ConnectWatch {
  /** Seconds it may wait for its connection (0: for ever). */
  readonly seconds: number;
  /** The server, for the error. */
  readonly where: string;
  /** Whether the work has its connection (then no deadline holds any more). */
  connected(): boolean;
  /**
   * Whether it waits behind connections the store's own work holds (every
   * connection of the pool in a transaction or a lock): another period then.
   */
  queued(): boolean;
  /** Makes sure the work never runs once given up on. */
  abandon(): void;
}

/**
 * How often work waiting behind the store's own work looks whether it still
 * does: its deadline starts again when it stops, at most this much later.
 */
const QUEUED_POLL_MS = 100;

/**
 * `work`, or a {@linkcode lateConnection} rejection when it waited for a
 * connection `watch.seconds` without being queued behind the store's own work
 * (its work then abandoned). Time spent queued does not count: the deadline
 * runs again in full from when the work stops being queued, since the
 * connection it then waits for may only now be opened.
 *
 * @param work The statement or transaction.
 * @param watch What tells whether it waits.
 * @returns What `work` gives.
 */
export function awaitConnection<T>(work: Promise<T>, watch: ConnectWatch): Promise<T> {
  if (watch.seconds === 0) return work;
  const period = watch.seconds * 1000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Since when it waits for a connection while not queued (undefined: while queued).
  let waitingSince: number | undefined = Date.now();
  const late = new Promise<never>((_, reject) => {
    const check = () => {
      if (watch.connected()) return;
      if (watch.queued()) {
        waitingSince = undefined;
        timer = setTimeout(check, Math.min(period, QUEUED_POLL_MS));
        return;
      }
      waitingSince ??= Date.now();
      const left = waitingSince + period - Date.now();
      if (left > 0) {
        timer = setTimeout(check, left);
        return;
      }
      watch.abandon();
      reject(lateConnection(watch.where, watch.seconds));
    };
    timer = setTimeout(check, period);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
