/**
 * The `postgres` npm package as the pool uses it: the part of its API the
 * pool calls (written here, so that no type of the package is needed), its
 * loading, by dynamic import only here, so that the SQLite library keeps a
 * static import graph with no npm package, and what the pool reads of its
 * connections (the process id each says) and mends (the connections an
 * ended pool was still making).
 *
 * @module
 */
import { OpenError } from "../core/errors.ts";
import type { PgRow } from "./_client_types.ts";
import { unrefTimer } from "./_timers.ts";

/** A statement of the client: a promise of its rows, until it runs. */
export interface PostgresStatement extends Promise<PgRow[]> {
  /** The backend of the connection it was handed to; `null` while it waits for one. */
  readonly state: unknown;
  /** Takes it back before it is sent (it then never runs). */
  cancel(): void;
}

export interface PostgresSql {
  /** The options the client read: where it connects. */
  readonly options: { host?: string[]; port?: number[]; path?: string };
  unsafe(text: string, params?: unknown[], options?: { prepare?: boolean }): PostgresStatement;
  begin<T>(fn: (sql: PostgresSql) => Promise<T>): Promise<T>;
  begin<T>(mode: string, fn: (sql: PostgresSql) => Promise<T>): Promise<T>;
  end(options?: { timeout?: number }): Promise<void>;
  /** Ends each connection of the pool again (after end(): one it made since). */
  close(): Promise<void>;
}

export type PostgresFactory = (options: Record<string, unknown>) => PostgresSql;

/**
 * Loads the client: `npm:postgres@3.4.9` on Deno, the bare package (from
 * node_modules) on Bun and Node. Both specifiers are literals, so
 * `bun build --compile` bundles the client into the executable.
 *
 * @param display The target as shown in the error (password masked).
 * @throws {OpenError} When the package cannot be loaded: what to do about it
 *   on this runtime, and the loader's own words.
 */
export async function loadPostgres(display: string): Promise<PostgresFactory> {
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

/** When, after a pool's end, the connections it was still making are ended too. */
const LATE_CONNECTION_CHECKS_MS = [500, 2000, 6000];

/**
 * Ends, a few times over the next seconds, the connections the ended pool
 * `on` was still making: the client's end() does not stop one under way (it
 * ends only a socket already open), which then connects and stays open
 * until its idle timeout (30 s), holding the process. Ending an ended
 * connection again does nothing; the timers never hold the process.
 */
export function endLateConnections(on: PostgresSql): void {
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
export function saysServerPid(statement: PostgresStatement, pid: unknown): boolean {
  const said = (statement.state as { pid?: unknown } | null)?.pid;
  return typeof said === "number" && said > 0 && Number(pid) === said;
}
