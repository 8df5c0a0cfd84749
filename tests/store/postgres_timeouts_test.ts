/**
 * The server's own limits on a store's statements (`statement_timeout`,
 * `lock_timeout`, given in the URL as libpq's `options` would): a statement
 * the server cancels is a `busy` failure on a connection that lives on, not
 * a lost connection; and the store's advisory locks (a `sync` pass waiting
 * for another) wait for their holder, not for those limits.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectPg } from "../../lib/postgres/_client.ts";
import { StorageError } from "../../lib/core/errors.ts";
import { freshSchema, PG_SKIP, PG_URL } from "./_pg.ts";
import { delay } from "../reliability/_runtimes.ts";

/** The test server's URL with `settings` added to its query. */
function withSettings(settings: Record<string, string>): string {
  const url = new URL(PG_URL!);
  for (const [name, value] of Object.entries(settings)) url.searchParams.set(name, value);
  return url.href;
}

test(
  "a statement the server cancels at its statement_timeout is busy, and its connection lives on",
  {
    skip: PG_SKIP,
  },
  async () => {
    const client = await connectPg(withSettings({ statement_timeout: "100" }), freshSchema(), {
      max: 1,
    });
    try {
      const [before] = await client.query("SELECT pg_backend_pid() AS pid");
      await assert.rejects(client.query("SELECT pg_sleep(2)"), (error: unknown) => {
        assert.ok(error instanceof StorageError, String(error));
        assert.equal(error.kind, "busy", error.message);
        assert.match(error.message, /statement timeout.*57014/);
        return true;
      });
      // The same connection (the pool was not left as after a lost one).
      const [after] = await client.query("SELECT pg_backend_pid() AS pid");
      assert.equal(after?.pid, before?.pid);
    } finally {
      await client.close();
    }
  },
);

test("a lock waits for its holder, past the server's statement_timeout and lock_timeout", {
  skip: PG_SKIP,
}, async () => {
  const url = withSettings({ statement_timeout: "150", lock_timeout: "150" });
  const schema = freshSchema();
  const first = await connectPg(url, schema);
  const second = await connectPg(url, schema);
  try {
    const release = await first.lock("pass");
    let taken = false;
    const waiting = second.lock("pass").then((unlock) => {
      taken = true;
      return unlock;
    });
    await delay(600);
    assert.equal(taken, false, "taken while held");
    await release();
    const unlock = await waiting;
    assert.equal(taken, true);
    await unlock();
  } finally {
    await first.close();
    await second.close();
  }
});
