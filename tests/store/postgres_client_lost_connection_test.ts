/**
 * A pool whose connections the server ends (a network blip, a restart):
 * the work under a lock held on one of them fails at once, the process
 * goes on (porsager/postgres#1154: the client's deferred write to the
 * dropped socket must not end it), and the next statement works.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectPg, type PgClient } from "../../lib/postgres/_client.ts";
import { isLostSocketWrite } from "../../lib/postgres/_lost_socket_guard.ts";
import { StorageError } from "../../lib/core/errors.ts";
import { freshSchema, PG_SKIP, PG_URL } from "./_pg.ts";
import { delay } from "../reliability/_runtimes.ts";

/**
 * Skipped where the test runner fails a test on any uncaught error itself
 * (Bun's, Node's), the guard's work included: there the CLI's runs show it.
 */
const GUARD_SKIP = PG_SKIP ||
  ("Deno" in globalThis
    ? false
    : "the test runner fails a test on any uncaught error, before the guard's turn");

/**
 * A server URL whose connections carry an application name of their own:
 * the connections a test ends are its own, never those of the test files
 * running beside it on the same server (`--parallel`).
 */
function ownUrl(): { url: string; name: string } {
  const name = `hermes-lost-${crypto.randomUUID().slice(0, 8)}`;
  return { url: `${PG_URL}${PG_URL!.includes("?") ? "&" : "?"}application_name=${name}`, name };
}

/** Ends the test's connections holding an advisory lock (as `pg_terminate_backend` in a blip). */
async function endLockHolders(admin: PgClient, name: string): Promise<number> {
  const [row] = await admin.query(
    "SELECT count(pg_terminate_backend(l.pid)) AS ended FROM pg_locks l " +
      "JOIN pg_stat_activity a ON a.pid = l.pid " +
      "WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1",
    [name],
  );
  return Number(row?.ended);
}

/** Ends every connection of the test's pool. */
async function endOthers(admin: PgClient, name: string): Promise<void> {
  await admin.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    [name],
  );
}

/**
 * Runs `fn` with a client whose connections are the test's own (see
 * {@linkcode ownUrl}) and an admin client that may end them; both closed after.
 */
async function withOwnPool(
  fn: (client: PgClient, admin: PgClient, name: string) => Promise<void>,
): Promise<void> {
  const schema = freshSchema();
  const own = ownUrl();
  const client = await connectPg(own.url, schema);
  const admin = await connectPg(PG_URL!, schema, { max: 1 });
  try {
    await fn(client, admin, own.name);
  } finally {
    await client.close();
    await admin.close();
  }
}

test("isLostSocketWrite() knows the client's write to a dropped socket, and nothing else", () => {
  const v8 = new TypeError("Cannot read properties of null (reading 'write')");
  v8.stack =
    `TypeError: ${v8.message}\n    at nextWrite (file:///x/postgres/3.4.9/src/connection.js:255:22)`;
  const jsc = new TypeError("null is not an object (evaluating 'socket.write')");
  jsc.stack = `TypeError: ${jsc.message}\n    at nextWrite (/$bunfs/root/hermes-state:9:1)`;
  const immediate = new TypeError(v8.message);
  immediate.stack =
    `TypeError: ${v8.message}\n    at Immediate.nextWrite (/n/src/connection.js:255:22)`;
  assert.ok(isLostSocketWrite(v8));
  assert.ok(isLostSocketWrite(jsc));
  assert.ok(isLostSocketWrite(immediate));
  const ours = new TypeError(v8.message);
  ours.stack = `TypeError: ${v8.message}\n    at write (/work/lib/x.ts:1:1)`;
  assert.ok(!isLostSocketWrite(ours));
  assert.ok(!isLostSocketWrite(new RangeError(v8.message)));
  assert.ok(!isLostSocketWrite(new TypeError("Cannot read properties of null (reading 'end')")));
});

test(
  "a lock whose connection is lost: the work under it fails, the process goes on, the next work runs",
  {
    skip: GUARD_SKIP,
  },
  () =>
    withOwnPool(async (client, admin, name) => {
      for (let round = 0; round < 3; round++) {
        const unlock = await client.lock(`lost ${round}`);
        // A statement under the lock, on another connection: fails when the lock is lost.
        const under = client.query("SELECT pg_sleep(30)");
        const failed = assert.rejects(under, (error: unknown) => {
          assert.ok(error instanceof StorageError && error.kind === "io", String(error));
          assert.match(error.message, /the connection holding the lock "lost \d" was lost/);
          return true;
        });
        await delay(100);
        const started = Date.now();
        assert.equal(await endLockHolders(admin, name), 1);
        await failed;
        assert.ok(Date.now() - started < 5000, "failed at once, not when the statement ended");
        // Its release says it was lost (COMMIT on the dropped connection did not end the process).
        await assert.rejects(unlock(), StorageError);
        await delay(100);
        // Released: the next statement runs on a new connection.
        assert.deepEqual(await client.query("SELECT 1 AS one"), [{ one: 1 }]);
      }
    }),
);

test(
  "every connection ended during transactions: they fail, the process goes on, the next ones run",
  {
    skip: GUARD_SKIP,
  },
  () =>
    withOwnPool(async (client, admin, name) => {
      for (let round = 0; round < 5; round++) {
        const unlock = await client.lock("blip");
        const work = Promise.allSettled(
          Array.from({ length: 4 }, () =>
            client.transaction(async (query) => {
              for (let i = 0; i < 20; i++) await query("SELECT pg_sleep(0.005)");
            })),
        );
        await delay(20 + round * 10);
        await endOthers(admin, name);
        await work;
        await unlock().catch(() => {});
        await delay(100);
        assert.deepEqual(await client.query("SELECT 2 AS two"), [{ two: 2 }]);
        await client.transaction((query) => query("SELECT 3"));
      }
    }),
);

test("a lock held by another: the one that waits is told once, then takes it", {
  skip: PG_SKIP,
}, async () => {
  const schema = freshSchema();
  const first = await connectPg(PG_URL!, schema);
  const second = await connectPg(PG_URL!, schema);
  try {
    const waited: string[] = [];
    second.onLockWait = (name) => waited.push(name);
    const unlockFirst = await first.lock("shared");
    const taking = second.lock("shared");
    await delay(200);
    assert.deepEqual(waited, ["shared"]);
    await unlockFirst();
    await (await taking)();
    // Free: taken without a word.
    await (await second.lock("shared"))();
    assert.deepEqual(waited, ["shared"]);
  } finally {
    await first.close();
    await second.close();
  }
});
