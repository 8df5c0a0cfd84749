/**
 * A pool whose connections the server ends (a network blip, a restart):
 * the work under a lock held on one of them fails at once, the process
 * goes on (porsager/postgres#1154: the client's deferred write to the
 * dropped socket must not end it), and the next statement works.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectPg } from "../../lib/postgres/_client.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { quoteIdentifier } from "../../lib/core/sql_identifier.ts";
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

/** Waits (5 s at most) until `count` connections of the test's pool are in a transaction. */
async function inTransactions(admin: PgClient, name: string, count: number): Promise<void> {
  for (let waited = 0; waited < 5000; waited += 10) {
    const [row] = await admin.query(
      "SELECT count(*) AS open FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL",
      [name],
    );
    if (Number(row?.open) >= count) return;
    await delay(10);
  }
  throw new Error(`${count} transactions of ${name} never ran at once`);
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

/**
 * Runs `fn` with a table `written (columns)` in a fresh schema, a client of
 * `max` connections that are the test's own (see {@linkcode ownUrl}, whose
 * application name `fn` is given) and an admin client that may end them;
 * the schema is dropped and both clients closed after.
 */
async function withWrittenTable(
  columns: string,
  max: number,
  fn: (client: PgClient, admin: PgClient, name: string, table: string) => Promise<void>,
): Promise<void> {
  const schema = freshSchema();
  const table = `${quoteIdentifier(schema)}.written`;
  const admin = await connectPg(PG_URL!, schema, { max: 1 });
  await admin.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  await admin.query(`CREATE TABLE ${table} (${columns})`);
  const own = ownUrl();
  const client = await connectPg(own.url, schema, { max });
  try {
    await fn(client, admin, own.name, table);
  } finally {
    await client.close();
    await admin.query(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE`).catch(() => {});
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

test(
  "transactions whose connections the server ends settle at once: each failed one wrote nothing, the next runs",
  { skip: PG_SKIP },
  () =>
    withWrittenTable("tx text PRIMARY KEY", 4, async (client, admin, name, table) => {
      for (let round = 0; round < 3; round++) {
        // One connection held by a lock: of the four transactions, one waits for a connection.
        const unlock = await client.lock("ended");
        const ended = Array.from({ length: 4 }, (_, i) =>
          client.transaction(async (query) => {
            await query("INSERT INTO written (tx) VALUES ($1)", [`${round}-${i}`]);
            for (let k = 0; k < 40; k++) await query("SELECT pg_sleep(0.005)");
          }).then(() => ({ tx: `${round}-${i}`, at: Date.now() }), (error: unknown) => ({
            tx: `${round}-${i}`,
            at: Date.now(),
            error,
          })));
        // Ended once the lock's and three of them are in a transaction on the server.
        await inTransactions(admin, name, 4);
        const endedAt = Date.now();
        await endOthers(admin, name);
        const outcomes = await Promise.all(ended);
        const seconds = (Math.max(...outcomes.map((one) => one.at)) - endedAt) / 1000;
        assert.ok(
          seconds < 2,
          `round ${round}: the last one settled ${seconds} s after the end: ${
            outcomes.map((one) =>
              `${one.tx} ${one.at - endedAt} ms ${"error" in one ? one.error : "ok"}`
            )
              .join("; ")
          }`,
        );
        const failed = outcomes.filter((one) => "error" in one);
        assert.ok(failed.length > 0, `round ${round}: none was under way when they were ended`);
        for (const { error } of failed) {
          assert.ok(error instanceof StorageError && error.kind === "io", String(error));
          // The store's own words, naming the server.
          assert.match(error.message, /^PostgreSQL: /);
          assert.ok(error.message.includes(new URL(PG_URL!).hostname), error.message);
        }
        // Each failed one was rolled back by the server; each that ended well wrote its row.
        const rows = await admin.query(
          `SELECT tx FROM ${table} WHERE tx LIKE $1 ORDER BY tx`,
          [`${round}-%`],
        );
        assert.deepEqual(
          rows.map((row) => row.tx),
          outcomes.filter((one) => !("error" in one)).map((one) => one.tx).sort(),
          failed.map((one) => `${one.tx}: ${String(one.error)}`).join("; "),
        );
        await unlock().catch(() => {});
        // The next transaction runs (on a new connection), at once too.
        const started = Date.now();
        await client.transaction((query) =>
          query("INSERT INTO written (tx) VALUES ($1)", [`next-${round}`])
        );
        assert.ok(Date.now() - started < 2000, "the next transaction waited");
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

test(
  "a transaction whose connection the server ends while it waits (idle_in_transaction_session_timeout): it fails naming the server, nothing of it is written, nothing after runs outside it",
  { skip: PG_SKIP },
  () =>
    withWrittenTable("n int", 1, async (client, admin, name, table) => {
      const queued: Promise<unknown>[] = [];
      let laterStatements: Promise<unknown> = Promise.resolve();
      await assert.rejects(
        client.transaction(async (query) => {
          await query("SET LOCAL idle_in_transaction_session_timeout = 100");
          await query("INSERT INTO written (n) VALUES (1)");
          for (let i = 0; i < 3; i++) queued.push(client.query("SELECT $1::int AS i", [i]));
          await delay(500);
          // The transaction has failed by now (its connection closed): these must not run anywhere.
          laterStatements = Promise.allSettled([
            query("INSERT INTO written (n) VALUES (2)"),
            query("INSERT INTO written (n) VALUES (3)"),
          ]);
          await laterStatements;
        }),
        (error: unknown) => {
          assert.ok(error instanceof StorageError && error.kind === "io", String(error));
          assert.match(error.message, /^PostgreSQL: the connection to \S+ was lost \(/);
          assert.ok(error.message.includes(new URL(PG_URL!).hostname), error.message);
          return true;
        },
      );
      assert.deepEqual((await Promise.all(queued)).flat(), [{ i: 0 }, { i: 1 }, { i: 2 }]);
      await delay(600);
      const later = (await laterStatements) as PromiseSettledResult<unknown>[];
      for (const one of later) {
        assert.equal(one.status, "rejected");
        const error = (one as PromiseRejectedResult).reason;
        assert.ok(error instanceof StorageError && error.kind === "io", String(error));
        assert.match(error.message, /was lost with the transaction; this statement of it was not/);
      }
      assert.deepEqual(await admin.query(`SELECT n FROM ${table}`), []);
      // The next transaction runs and writes.
      await client.transaction((query) => query("INSERT INTO written (n) VALUES (4)"));
      assert.deepEqual(await admin.query(`SELECT n FROM ${table}`), [
        { n: 4 },
      ]);
      // Closed, the store leaves no connection behind (the lost one connected again for the
      // queued statements stayed open until its idle timeout, holding the process 30 s).
      await client.close();
      await delay(300);
      const [left] = await admin.query(
        "SELECT count(*) AS open FROM pg_stat_activity WHERE application_name = $1",
        [name],
      );
      assert.equal(Number(left?.open), 0);
    }),
);

test(
  "a statement given to a transaction after it committed is not sent (it would run outside it)",
  {
    skip: PG_SKIP,
  },
  () =>
    withWrittenTable("n int", 1, async (client) => {
      let late: Promise<unknown> | undefined;
      await client.transaction(async (query) => {
        await query("INSERT INTO written (n) VALUES (1)");
        // A statement the function forgot to wait for, given once the transaction is over.
        setTimeout(() => {
          late = query("INSERT INTO written (n) VALUES (2)").then(() => "sent", (error) => error);
        }, 50);
      });
      await delay(150);
      await assert.rejects(Promise.reject(await late), (error: unknown) => {
        assert.ok(error instanceof StorageError && error.kind === "other", String(error));
        assert.match(error.message, /a statement was given to a transaction that had ended/);
        return true;
      });
      assert.deepEqual(await client.query("SELECT n FROM written"), [{ n: 1 }]);
    }),
);

test(
  "a transaction whose function catches its lost connection's error and returns is not reported committed",
  { skip: PG_SKIP },
  () =>
    withWrittenTable("n int", 1, async (client, admin, name, table) => {
      for (const queued of [false, true]) {
        const others: Promise<unknown>[] = [];
        const outcome = await client.transaction(async (query) => {
          await query("INSERT INTO written (n) VALUES (1)");
          // With work queued, the client connects the lost connection again for it, and a
          // COMMIT sent there would answer as if the transaction had committed.
          if (queued) others.push(client.query("SELECT 1 AS one"));
          await endOthers(admin, name);
          try {
            await query("SELECT pg_sleep(1)");
          } catch {
            // Swallowed: the function goes on as if nothing happened.
          }
          return "done";
        }).then((value) => ({ value }), (error: unknown) => ({ error }));
        assert.ok("error" in outcome, `queued ${queued}: reported ${JSON.stringify(outcome)}`);
        assert.ok(
          outcome.error instanceof StorageError && outcome.error.kind === "io",
          String(outcome.error),
        );
        assert.deepEqual(await Promise.all(others), queued ? [[{ one: 1 }]] : []);
        // One connection now: the pool that replaced the lost one's was not left in turn (its
        // connection, still connecting, then stayed open beside the next pool's).
        await delay(200);
        const [open] = await admin.query(
          "SELECT count(*) AS open FROM pg_stat_activity WHERE application_name = $1",
          [name],
        );
        assert.ok(Number(open?.open) <= 1, `queued ${queued}: ${open?.open} connections`);
        assert.deepEqual(await admin.query(`SELECT n FROM ${table}`), []);
      }
    }),
);
