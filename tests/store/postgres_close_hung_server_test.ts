/**
 * close() of a PostgreSQL store lets the work under way end, then cuts the
 * connections: it does not wait for a server that stopped answering to
 * close them (the client's own end() waits up to its timeout, 5 s, for each
 * connection's goodbye), and a healthy server sees them go.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { connectPg } from "../../lib/postgres/_client.ts";
import { startPgRelay } from "../web/_pg_relay.ts";
import { adminSql, freshSchema, PG_SKIP, PG_URL } from "./_pg.ts";

/** Milliseconds `work` takes; a hang fails the test after 15 s, not at the runner's limit. */
async function timed(work: Promise<unknown>): Promise<number> {
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<"hung">((resolve) => timer = setTimeout(() => resolve("hung"), 15_000));
  const outcome = await Promise.race([work.then(() => "done"), hung]).finally(() =>
    clearTimeout(timer)
  );
  assert.equal(outcome, "done", "no end in 15 s");
  return Date.now() - started;
}

/** The server's connections named `name`, once they are gone (or after 5 s, as many as are left). */
async function connectionsLeft(name: string): Promise<number> {
  const until = Date.now() + 5000;
  for (;;) {
    const [row] = await adminSql(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = '${name}'`,
    );
    const left = Number(row.n);
    if (left === 0 || Date.now() > until) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test(
  "close() of a store whose server stopped answering while idle returns at once",
  { skip: PG_SKIP, timeout: 60_000 },
  async () => {
    const relay = await startPgRelay();
    try {
      const store = await openStore(`${relay.url}?schema=${freshSchema()}`);
      await store.createSession("s1", "cli");
      // Two connections, as a store's reads running at once open.
      await Promise.all([store.getSession("s1"), store.sessionCount()]);
      relay.freeze();
      const took = await timed(store.close());
      assert.ok(took < 1500, `close() took ${took} ms`);
    } finally {
      await relay.close();
    }
  },
);

test(
  "close() lets the statements and transactions under way end, then the server sees every connection go",
  { skip: PG_SKIP, timeout: 60_000 },
  async () => {
    const name = `hermes-close-${crypto.randomUUID().slice(0, 8)}`;
    const url = new URL(PG_URL!);
    url.searchParams.set("application_name", name);
    const client = await connectPg(url.href, freshSchema(), { max: 3 });
    const statement = client.query("SELECT 1 AS one FROM pg_sleep(0.4)");
    const transaction = client.transaction((query) => query("SELECT 2 AS two FROM pg_sleep(0.4)"));
    const took = await timed(client.close());
    assert.deepEqual(await statement, [{ one: 1 }]);
    assert.deepEqual(await transaction, [{ two: 2 }]);
    assert.ok(took >= 300, `close() returned after ${took} ms, before the work under way ended`);
    assert.equal(await connectionsLeft(name), 0, "connections left on the server");
  },
);
