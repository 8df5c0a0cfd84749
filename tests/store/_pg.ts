/**
 * The PostgreSQL server of the tests: `HERMES_TEST_PG_URL` (`scripts/pg.sh
 * start` prints one). Without it the PostgreSQL tests skip with a message,
 * except under `CI=true`, where a missing server is a failure. Each store
 * gets a schema of its own, dropped when the test file ends.
 */
import { after } from "node:test";
import { openStore, type OpenStoreOptions } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { waitUntil } from "../_helpers.ts";
import { fileCaseSkip } from "../reliability/_runtimes.ts";

/** The server URL, or `undefined` when none is configured (and not on CI). */
export const PG_URL: string | undefined = (() => {
  const url = process.env.HERMES_TEST_PG_URL;
  if (url) return url;
  if (process.env.CI === "true") {
    throw new Error(
      "HERMES_TEST_PG_URL is not set: CI needs a PostgreSQL server (scripts/pg.sh start)",
    );
  }
  return undefined;
})();

/** Why PostgreSQL tests are skipped, or `false` when they run (for `{ skip }`). */
export const PG_SKIP: string | false = PG_URL === undefined
  ? "no PostgreSQL server: set HERMES_TEST_PG_URL (scripts/pg.sh start prints one)"
  : false;

/**
 * The `skip` of a test file of the PostgreSQL engine's answers: the SQL it sends and what it makes
 * of the rows, the same on every runtime. {@linkcode PG_SKIP}, and otherwise the file runs under
 * one of Deno, Bun and Node (`fileCaseSkip`). Under all three run the conformance suite
 * (`postgres_store_test.ts`), the connection's side (the client, its sockets, time limits and
 * outages, pools and poolers) and the values that pass through a runtime's SQLite binding on their
 * way (exact integers, bytes, non-finite numbers, stored text).
 *
 * @param url The test file's `import.meta.url`.
 */
export function pgEngineSkip(url: string): string | false {
  return PG_SKIP || fileCaseSkip(url);
}

const schemas = new Set<string>();
let counter = 0;

/**
 * A fresh schema name, dropped when the test file ends. Random as well:
 * `deno test --parallel` runs several files in one process, each with its
 * own counter, and two that started in the same millisecond named the same
 * schema, which the first to end then dropped under the other.
 */
export function freshSchema(): string {
  const random = crypto.randomUUID().slice(0, 8);
  const name = `t_${process.pid}_${Date.now().toString(36)}_${counter++}_${random}`;
  schemas.add(name);
  return name;
}

/** The URL of `schema` on the test server. */
export function schemaUrl(schema: string): string {
  const url = PG_URL!;
  return `${url}${url.includes("?") ? "&" : "?"}schema=${schema}`;
}

/** Opens a store on a fresh schema (or the given one). */
export async function openPgStore(
  options: OpenStoreOptions = {},
  schema = freshSchema(),
): Promise<SessionStore> {
  return await openStore(schemaUrl(schema), options);
}

/** A fresh schema with `sync`'s connection to it, for a test of `sync`. */
export interface SyncTarget {
  /** The schema. */
  readonly schema: string;
  /** Its URL. */
  readonly url: string;
  /** `connectSyncTarget(url)`. */
  readonly client: import("../../lib/postgres/_client_types.ts").PgClient;
  /** `syncFile`, loaded as `sync` loads it (a dynamic import: a SQLite-only run never does). */
  readonly syncFile: typeof import("../../lib/postgres/sync.ts").syncFile;
}

/** Runs `body` on a fresh schema and `sync`'s connection to it, closed after. */
export async function onFreshSyncTarget(
  body: (target: SyncTarget) => Promise<void>,
): Promise<void> {
  const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
  const schema = freshSchema();
  const url = schemaUrl(schema);
  const client = await connectSyncTarget(url);
  try {
    await body({ schema, url, client, syncFile });
  } finally {
    await client.close();
  }
}

/** A fresh schema migrated through step `through` only, as an older hermes-state left it. */
export async function olderSchema(through: number): Promise<string> {
  const schema = freshSchema();
  const { connectPg } = await import("../../lib/postgres/_client.ts");
  const { migratePg } = await import("../../lib/postgres/schema.ts");
  const client = await connectPg(PG_URL!, schema, { max: 1 });
  try {
    await migratePg(client, schema, through);
  } finally {
    await client.close();
  }
  return schema;
}

/**
 * Runs SQL on the test server (outside any store), through the same client;
 * its rows. A statement that lost a race on a catalog row ("tuple
 * concurrently updated": two files granting on the database at once) is run
 * again.
 */
export async function adminSql(text: string): Promise<Record<string, unknown>[]> {
  const { connectPg } = await import("../../lib/postgres/_client.ts");
  const client = await connectPg(PG_URL!, "public", { max: 1 });
  try {
    for (let attempt = 1;; attempt++) {
      try {
        return await client.query(text);
      } catch (error) {
        // Two test files granting on the one database at once (Node runs files side by side):
        // the server's catalog row is updated by both, and one fails. Granted again, it holds.
        if (attempt >= 5 || !/tuple concurrently updated/.test(String(error))) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  } finally {
    await client.close();
  }
}

after(async () => {
  if (PG_URL === undefined || schemas.size === 0) return;
  const list = [...schemas].map((s) => `"${s}"`).join(", ");
  schemas.clear();
  await adminSql(`DROP SCHEMA IF EXISTS ${list} CASCADE`);
});

/** A transaction held open by {@linkcode heldTransaction}. */
export interface HeldTransaction {
  /** Resolves once `fn` ran (or the transaction failed). */
  readonly ready: Promise<void>;
  /** Lets the transaction commit. */
  readonly commit: () => void;
  /** Settles with the transaction. */
  readonly done: Promise<void>;
  /** The server process holding it (`pg_backend_pid()`), once `ready`. */
  readonly pid: () => number;
}

/** Runs `fn` in a transaction of `client` held open until `commit` is called. */
export function heldTransaction(
  client: PgClient,
  fn: (query: Parameters<Parameters<PgClient["transaction"]>[0]>[0]) => Promise<void>,
): HeldTransaction {
  let commit!: () => void;
  const released = new Promise<void>((resolve) => commit = resolve);
  let ready!: () => void;
  const readyPromise = new Promise<void>((resolve) => ready = resolve);
  let pid = 0;
  const done = client.transaction(async (query) => {
    const [row] = await query(`SELECT pg_backend_pid() AS pid`);
    pid = Number(row.pid);
    await fn(query);
    ready();
    await released;
  });
  done.catch(() => ready());
  return { ready: readyPromise, commit, done, pid: () => pid };
}

/**
 * Resolves once a statement waits for a lock that `held` holds (10 s at
 * most). Only a wait on `held` counts: other tests share the server, and a
 * statement of theirs waiting for a lock of their own is not the one awaited.
 */
export async function waitedOn(client: PgClient, held: HeldTransaction): Promise<void> {
  const waiting = async () =>
    (await client.query(
      `SELECT 1 FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND $1::integer = ANY (pg_blocking_pids(pid))`,
      [held.pid()],
    )).length > 0;
  await waitUntil(waiting, "a statement waiting for the held lock", {
    timeoutMs: 10_000,
    everyMs: 50,
  });
}
