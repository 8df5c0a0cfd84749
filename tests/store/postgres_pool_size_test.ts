/**
 * The pool's size from the URL (`?pool_size=N`), and the store's locks within
 * it. A role whose `CONNECTION LIMIT` is below the default pool of 4 had no
 * way to ask for fewer connections from the CLI (writes failed "too many
 * connections"); the parameter was sent to the server as a setting. And as
 * many lock holders as the pool has connections (removing origins at once,
 * a pool of 1) waited for a connection for their work for good.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { OpenError, StorageError } from "../../lib/core/errors.ts";
import { parsePostgresUrl } from "../../lib/postgres/store_url.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import type { SyncedStore } from "../../lib/core/synced_store.ts";
import { adminSql, freshSchema, PG_SKIP, PG_URL, schemaUrl } from "./_pg.ts";
import { v11Copy } from "../_cli_io.ts";

describe("?pool_size= in the URL", () => {
  test("is taken off the URL the server sees, with ?schema=", () => {
    assert.deepEqual(
      parsePostgresUrl("postgres://h/db?pool_size=2&application_name=a&schema=x"),
      { url: "postgres://h/db?application_name=a", schema: "x", poolSize: 2 },
    );
    assert.deepEqual(parsePostgresUrl("postgres://h/db?schema=x"), {
      url: "postgres://h/db",
      schema: "x",
    });
  });

  test("refuses what is not a whole number of connections from 1 to 1000, naming it", () => {
    for (
      const [query, shown] of [["0", '"0"'], ["x", '"x"'], ["2.5", '"2.5"'], ["", '""'], [
        "1001",
        '"1001"',
      ], ["-3", '"-3"']]
    ) {
      assert.throws(
        () => parsePostgresUrl(`postgres://u:secret@h/db?pool_size=${query}`),
        (error) =>
          error instanceof OpenError &&
          error.message.endsWith(
            `?pool_size= must be a whole number of connections from 1 to 1000: current value is ${shown}`,
          ) && !error.message.includes("secret"),
        query,
      );
    }
    assert.throws(
      () => parsePostgresUrl("postgres://h/db?pool_size=2&pool_size=3"),
      /the URL gives \?pool_size= 2 times: current values are "2", "3"$/,
    );
  });
});

/**
 * Runs `fn` with the URL of a fresh schema reached as a new role limited to
 * `limit` connections (allowed to create the schema), then drops the role
 * and what it owns.
 */
async function asLimitedRole(limit: number, fn: (url: URL) => Promise<void>): Promise<void> {
  const role = `hermes_pool_${crypto.randomUUID().slice(0, 8)}`;
  await adminSql(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT ${limit}`);
  try {
    const url = new URL(PG_URL!);
    const database = decodeURIComponent(url.pathname.slice(1)) || "postgres";
    await adminSql(`GRANT CREATE ON DATABASE "${database}" TO ${role}`);
    url.username = role;
    url.searchParams.set("schema", freshSchema());
    await fn(url);
  } finally {
    await adminSql(`DROP OWNED BY ${role} CASCADE`);
    await adminSql(`DROP ROLE ${role}`);
  }
}

describe("the pool's size on a server", { skip: PG_SKIP }, () => {
  test(
    "a role limited to 2 connections writes everything through ?pool_size=2",
    { timeout: 60_000 },
    async () => {
      await asLimitedRole(2, async (url) => {
        url.searchParams.set("pool_size", "2");
        await using store = await openStore(url.href);
        const ids = Array.from({ length: 40 }, (_, i) => `s${i}`);
        // Many at once, as `copy` writes: the default pool of 4 opened more connections
        // than the role may have.
        const results = await Promise.allSettled(ids.map(async (id) => {
          await store.createSession(id, "cli");
          await store.appendMessage(id, { role: "user", content: `question ${id}` });
          return await store.searchMessages(`question ${id}`);
        }));
        assert.deepEqual(
          results.flatMap((r) => r.status === "rejected" ? [String(r.reason)] : []),
          [],
        );
        assert.equal(await store.messageCount(), ids.length);
      });
    },
  );

  test(
    "a write refused for the role's connection limit says how to ask for a smaller pool",
    { timeout: 60_000 },
    async () => {
      await asLimitedRole(1, async (url) => {
        await using store = await openStore(url.href);
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => store.createSession(`s${i}`, "cli")),
        );
        const refused = results.flatMap((r) => r.status === "rejected" ? [r.reason] : []);
        assert.ok(refused.length > 0, "the default pool opens more than one connection");
        for (const error of refused) {
          assert.ok(error instanceof StorageError, String(error));
          assert.match(
            error.message,
            /too many connections for role .*\(SQLSTATE 53300\): ask for a smaller pool with \?pool_size=N in the URL \(4 connections by default\)$/,
          );
        }
      });
    },
  );

  test("as many lock holders as connections all finish, in turn", {
    timeout: 30_000,
  }, async () => {
    for (const max of [2, 4]) {
      await using store = await openStore(schemaUrl(freshSchema()), { max });
      const synced = store as unknown as SyncedStore;
      const removals = Promise.all(
        Array.from({ length: max + 1 }, (_, i) => synced.removeSyncOrigin(`none-${i}`)),
      );
      const outcome = await Promise.race([
        removals.then((removed) => removed),
        new Promise((resolve) => setTimeout(resolve, 10_000, "hung")),
      ]);
      assert.deepEqual(outcome, Array(max + 1).fill(undefined), `pool of ${max}`);
    }
  });

  test("a lock in a pool of 1 is refused at once, saying how to get a larger pool", {
    timeout: 30_000,
  }, async () => {
    await using store = await openStore(schemaUrl(freshSchema()), { max: 1 });
    await assert.rejects(
      (store as unknown as SyncedStore).removeSyncOrigin("none"),
      (error) =>
        error instanceof StorageError && error.kind === "other" &&
        /needs a pool of at least 2 connections \(this one has 1\).*\?pool_size=2/.test(
          error.message,
        ),
    );
    // Work without a lock goes on in the pool of 1.
    await store.createSession("one", "cli");
    assert.equal(await store.sessionCount(), 1);
  });

  test("sync opens its pool with the URL's size", { timeout: 30_000 }, async () => {
    const client = await connectSyncTarget(`${schemaUrl(freshSchema())}&pool_size=1`);
    try {
      await assert.rejects(
        syncFile(client, v11Copy(), { host: "pool-test" }),
        /needs a pool of at least 2 connections \(this one has 1\)/,
      );
    } finally {
      await client.close();
    }
  });
});
