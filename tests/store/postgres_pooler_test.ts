/**
 * The store behind a pooler in transaction mode (`?pgbouncer=true`), through
 * a real PgBouncer 1.18 (`scripts/pgbouncer.sh`, started by `scripts/test.sh`
 * as `HERMES_TEST_PGBOUNCER_URL`): its database `postgres` shares three
 * server connections among every client connection, `hermes_one` one.
 * Role `hermes_pooled` works in the schema of its own name (`"$user"` in the
 * default `search_path`).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { openStore } from "../../lib/open_store.ts";
import { OpenError, StorageError } from "../../lib/core/errors.ts";
import { connectPg } from "../../lib/postgres/_client.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import { doctorPostgresStore } from "../../lib/postgres/doctor/doctor.ts";
import { copyFixture } from "../_helpers.ts";
import { adminSql, freshSchema, PG_SKIP } from "./_pg.ts";

const POOLER_URL: string | undefined = (() => {
  const url = process.env.HERMES_TEST_PGBOUNCER_URL;
  if (url || PG_SKIP) return url || undefined;
  if (process.env.CI === "true") {
    throw new Error(
      "HERMES_TEST_PGBOUNCER_URL is not set: CI needs PgBouncer (scripts/pgbouncer.sh start)",
    );
  }
  return undefined;
})();
const SKIP = PG_SKIP ||
  (POOLER_URL === undefined
    ? "no PgBouncer: set HERMES_TEST_PGBOUNCER_URL (scripts/pgbouncer.sh start prints one)"
    : false);

const ROLE = "hermes_pooled";

/** The pooler's URL for `user` and `database`, with more query parameters. */
function pooled(query: string, user = ROLE, database = "postgres"): string {
  return POOLER_URL!.replace(/^postgres:\/\/[^@]*@/, `postgres://${user}@`)
    .replace(/\/[^/?]*$/, `/${database}`) + `?${query}`;
}

/** Whether `promise` settles (either way) within `ms` milliseconds. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("postgres behind a transaction-mode pooler", { skip: SKIP }, () => {
  before(async () => {
    await adminSql(`DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${ROLE}') THEN
        CREATE ROLE ${ROLE} LOGIN;
      END IF; END $$`);
    await adminSql(`GRANT CREATE ON DATABASE postgres TO ${ROLE}`);
    await adminSql(`DROP SCHEMA IF EXISTS ${ROLE} CASCADE`);
  });
  after(async () => {
    await adminSql(`DROP SCHEMA IF EXISTS ${ROLE} CASCADE`);
  });

  test("without ?pgbouncer=true the open fails and names the parameter", async () => {
    await assert.rejects(
      openStore(pooled(`schema=${ROLE}`)),
      (error) =>
        error instanceof OpenError && /unsupported startup parameter: search_path/.test(
          error.message,
        ) && /add \?pgbouncer=true to the URL/.test(error.message),
    );
  });

  test("a run-time setting in the URL is refused by name, with where it goes instead", async () => {
    await assert.rejects(
      openStore(pooled(`schema=${ROLE}&pgbouncer=true&statement_timeout=5000`)),
      (error) =>
        error instanceof OpenError &&
        /parameter statement_timeout cannot reach the server through a transaction-mode pooler/
          .test(error.message) &&
        /ALTER ROLE … SET statement_timeout/.test(error.message) && /"5000"/.test(error.message),
    );
  });

  test("a role whose search_path leads elsewhere is refused, naming the ALTER ROLE that fixes it", async () => {
    const schema = freshSchema();
    await assert.rejects(
      openStore(pooled(`schema=${schema}&pgbouncer=true`, "postgres")),
      (error) =>
        error instanceof OpenError &&
        error.message.includes(
          `statements would reach schema "public", not the store's "${schema}"`,
        ) &&
        error.message.includes(
          `ALTER ROLE "postgres" IN DATABASE "postgres" SET search_path = "${schema}"`,
        ),
    );
  });

  test("many writers through three shared server connections: every write lands once, reads agree with a direct connection", async () => {
    const url = pooled(`schema=${ROLE}&pgbouncer=true`);
    const stores = await Promise.all([openStore(url), openStore(url), openStore(url)]);
    const direct = await openStore(
      `${process.env.HERMES_TEST_PG_URL}?schema=${ROLE}`,
      { readonly: true },
    );
    try {
      // Each store's four client connections take turns on PgBouncer's three server connections:
      // a statement prepared on one would be unknown on the next.
      await Promise.all(stores.flatMap((store, s) =>
        Array.from({ length: 8 }, async (_, i) => {
          const id = `w${s}-${i}`;
          await store.createSession(id, "cli", { model: "m" });
          for (let m = 0; m < 5; m++) {
            await store.appendMessage(id, { role: "user", content: `pooled note ${s} ${i} ${m}` });
          }
          await store.setSessionTitle(id, `pooled ${s}-${i}`);
        })
      ));
      const listed = await direct.searchSessions({ limit: 100 });
      assert.equal(listed.length, 24);
      for (const row of listed) assert.equal(row.message_count, 5, row.id);
      const viaPooler = await stores[0].searchMessages("pooled", { limit: 200 });
      const viaServer = await direct.searchMessages("pooled", { limit: 200 });
      assert.equal(viaPooler.length, 120);
      assert.deepEqual(
        viaPooler.map((hit) => hit.id).sort((a, b) => a - b),
        viaServer.map((hit) => hit.id).sort((a, b) => a - b),
      );
      assert.deepEqual(await stores[1].getMessages("w2-7"), await direct.getMessages("w2-7"));
    } finally {
      await Promise.all([...stores, direct].map((store) => store.close()));
    }
  });

  test("a read-only pool is read-only on the server: each statement is a READ ONLY transaction", async () => {
    const client = await connectPg(pooled("pgbouncer=true"), ROLE, { readonly: true });
    try {
      for (
        const attempt of [
          () => client.query("CREATE TABLE hermes_pooled.not_here (x int)"),
          () => client.transaction((query) => query("CREATE TABLE hermes_pooled.not_here (x int)")),
        ]
      ) {
        await assert.rejects(
          attempt(),
          (error) => error instanceof StorageError && error.kind === "readonly",
        );
      }
      const [row] = await client.query("SELECT current_setting('transaction_read_only') AS ro");
      assert.equal(row.ro, "on");
    } finally {
      await client.close();
    }
  });

  test("sync's lock excludes a second holder on one shared server connection, and is free once released", async () => {
    // One server connection for every client: a session-level lock taken by the first client
    // stayed on it after its statement, so the second client's lock on the same connection
    // was granted at once.
    const url = pooled("pgbouncer=true", ROLE, "hermes_one");
    const first = await connectPg(url, ROLE);
    const second = await connectPg(url, ROLE);
    try {
      const unlock = await first.lock("pooler test");
      const waiting = second.lock("pooler test");
      assert.equal(await settlesWithin(waiting, 400), false, "taken while held");
      await unlock();
      assert.equal(await settlesWithin(waiting, 5000), true, "still waiting after release");
      const unlockSecond = await waiting;
      await unlockSecond();
      const third = await first.lock("pooler test");
      await third();
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test("a lock is released when its holder's pool closes, or when its holder dies", async () => {
    const url = pooled("pgbouncer=true");
    const holder = await connectPg(url, ROLE);
    const other = await connectPg(url, ROLE);
    try {
      await holder.lock("pooler close test");
      const waiting = other.lock("pooler close test");
      assert.equal(await settlesWithin(waiting, 300), false);
      await holder.close();
      assert.equal(await settlesWithin(waiting, 2000), true, "still held after close()");
      await (await waiting)();

      // A holder killed while its lock's transaction sits idle, as a sync process killed mid-pass:
      // PgBouncer drops the server connection of a client gone in a transaction, and the lock
      // with it.
      const psql = spawn("psql", [pooled("", ROLE), "-q", "-v", "ON_ERROR_STOP=1"], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      psql.stdin.write(
        // The key lock() takes: the name within the schema in force (the role's, here).
        "BEGIN;\nSELECT pg_advisory_xact_lock(hashtextextended(" +
          "coalesce(current_schema(), '') || ' ' || 'pooler kill test', 0));\n\\echo taken\n",
      );
      await new Promise<void>((resolve, reject) => {
        psql.stdout.on("data", (chunk) => String(chunk).includes("taken") && resolve());
        psql.on("exit", (code) => reject(new Error(`psql exited with ${code}`)));
        psql.on("error", reject);
      });
      const afterKill = other.lock("pooler kill test");
      assert.equal(await settlesWithin(afterKill, 300), false, "taken while psql held it");
      psql.kill("SIGKILL");
      assert.equal(await settlesWithin(afterKill, 5000), true, "still held after the kill");
      await (await afterKill)();
    } finally {
      await other.close();
    }
  });

  test("sync of a Hermes file through the pooler, then an unchanged pass", async () => {
    const file = copyFixture("hermes-v11.db");
    const client = await connectSyncTarget(pooled(`schema=${ROLE}&pgbouncer=true`));
    try {
      const first = await syncFile(client, file, { origin: "pooled-host" });
      assert.equal(first.created, 42);
      assert.equal(first.messages, 197);
      const again = await syncFile(client, file, { origin: "pooled-host" });
      assert.deepEqual([again.created, again.updated, again.messages], [0, 0, 0]);
    } finally {
      await client.close();
    }
  });

  test("doctor through the pooler: a check in one snapshot, then --fix", async () => {
    const url = pooled(`schema=${ROLE}&pgbouncer=true`);
    {
      await using store = await openStore(url);
      await store.createSession("doctor-pooled", "cli");
      await store.appendMessage("doctor-pooled", { role: "user", content: "through the pooler" });
    }
    await adminSql(
      `UPDATE ${ROLE}.sessions SET message_count = 9 WHERE id = 'doctor-pooled'`,
    );
    const checked = await doctorPostgresStore(url);
    const counters = checked.checks.find((c) => c.name === "counters");
    assert.equal(counters?.status, "problem");
    assert.ok(counters?.details.some((line) => line.startsWith("doctor-pooled: message_count 9")));
    const fixed = await doctorPostgresStore(url, { fix: true });
    assert.equal(fixed.healthy, true, JSON.stringify(fixed.after));
    const [row] = await adminSql(
      `SELECT message_count FROM ${ROLE}.sessions WHERE id = 'doctor-pooled'`,
    );
    assert.equal(Number(row.message_count), 1);
  });
});
