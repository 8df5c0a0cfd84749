/**
 * Every connection a PostgreSQL store opens honours `?connect_timeout=`, not
 * only its first: after the server ended the store's connections, a server
 * (or a balancer before it) that accepts and stays silent, or that closes
 * each new connection before it answers, fails the next command within the
 * deadline, naming host:port and the timeout; the store then works again
 * once the server does. The store reaches the test server through a proxy
 * the test runs (`_pg_proxy.ts`), which forwards connections until told otherwise.
 */
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { StorageError } from "../../lib/core/errors.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { adminSql, freshSchema, PG_SKIP, PG_URL } from "./_pg.ts";
import { type LosingProxy, startLosingProxy } from "./_pg_proxy.ts";
import { sideBySideTests } from "../_side_by_side.ts";
import { delay } from "../reliability/_runtimes.ts";
import { test } from "node:test";

/** A proxy to the test server (`_pg_proxy.ts`), forwarding connections until told otherwise. */
function startProxy(): Promise<LosingProxy> {
  const target = new URL(PG_URL!);
  return startLosingProxy(target.hostname, Number(target.port || 5432));
}

/**
 * The store's URL through the proxy, its connections named for the test to end them;
 * with `standby`, a second host after the proxy, one where nothing listens.
 */
function proxiedUrl(proxy: LosingProxy, name: string, schema: string, standby = false): string {
  const url = new URL(PG_URL!);
  url.host = `127.0.0.1:${proxy.port}`;
  url.searchParams.set("connect_timeout", "1");
  url.searchParams.set("application_name", name);
  url.searchParams.set("schema", schema);
  // A URL object takes one host only: the second goes into the text.
  return standby ? url.href.replace(`:${proxy.port}/`, `:${proxy.port},127.0.0.1:1/`) : url.href;
}

/** Ends every connection of the store (as a server restart or an idle limit would). */
async function endConnections(name: string): Promise<void> {
  await adminSql(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${name}'`,
  );
  await delay(200);
}

/** Runs `fn` on a store opened through a proxy, both closed after. */
async function withProxiedStore(
  fn: (store: SessionStore, proxy: LosingProxy, name: string) => Promise<void>,
  standby = false,
): Promise<void> {
  const proxy = await startProxy();
  const name = `hermes-deadline-${crypto.randomUUID().slice(0, 8)}`;
  const store = await openStore(proxiedUrl(proxy, name, freshSchema(), standby));
  try {
    await fn(store, proxy, name);
    proxy.mode = "forward";
    // The pools left after the failures have nothing under way: close() does not wait for them.
    const started = Date.now();
    await store.close();
    assert.ok(Date.now() - started < 1500, `close() took ${Date.now() - started} ms`);
  } finally {
    proxy.mode = "forward";
    await store.close();
    await proxy.stop();
  }
}

/** Asserts `work` fails within a few seconds, naming the proxy's host:port and the timeout. */
async function failsInTime(
  work: Promise<unknown>,
  proxy: LosingProxy,
  standby: boolean,
): Promise<void> {
  const started = Date.now();
  // Never for ever: a hang fails the test here, not at the runner's limit. (The timer cleared:
  // left running, it would keep Node's process for the file alive after its last test.)
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<string>((resolve) => timer = setTimeout(() => resolve("hung"), 15_000));
  const outcome = await Promise.race([work.then(() => "answered", (error) => error), hung])
    .finally(() => clearTimeout(timer));
  assert.ok(outcome instanceof StorageError, `expected a StorageError, got ${String(outcome)}`);
  assert.equal(outcome.kind, "io");
  const took = Date.now() - started;
  // With a host down, the client may give up on its refusal first (Bun's sockets do, at times):
  // a failure as clear, and sooner.
  if (standby && outcome.message === "PostgreSQL: connect ECONNREFUSED 127.0.0.1:1") {
    assert.ok(took < 5000, `failed after ${took} ms`);
    return;
  }
  assert.match(
    outcome.message,
    new RegExp(
      `^PostgreSQL: no connection to 127\\.0\\.0\\.1:${proxy.port}${
        standby ? ",127\\.0\\.0\\.1:1" : ""
      } within 1 s \\(connect_timeout\\); \\?connect_timeout=SECONDS waits longer$`,
    ),
  );
  assert.ok(took >= 900 && took < 5000, `failed after ${took} ms`);
}

/**
 * How long the last test keeps the pool's connections busy: twice the 1 s deadline, past it by
 * more than a loaded machine's late timers, so work given up on at the deadline fails the test.
 */
const HELD_MS = 2000;

const CASES = [
  { mode: "close", standby: false, what: "a server that hangs up before answering" },
  { mode: "silent", standby: false, what: "a server that never answers" },
  { mode: "close", standby: true, what: "two hosts, one hanging up, one down" },
] as const;

/** The tests below, side by side (each waits out deadlines on a proxy and a schema of its own). */
const sideBySide = sideBySideTests({ skip: PG_SKIP });

for (const { mode, standby, what } of CASES) {
  sideBySide(
    `a connection opened after the first, to ${what}, fails within connect_timeout; the store works again after`,
    () =>
      withProxiedStore(async (store, proxy, name) => {
        await store.createSession("s1", "cli");
        await endConnections(name);
        proxy.mode = mode;
        // A statement on its own, a transaction, and two at once (each its own connection).
        await failsInTime(store.getSession("s1"), proxy, standby);
        await failsInTime(store.setMeta("k", "v"), proxy, standby);
        await Promise.all([
          failsInTime(store.sessionCount(), proxy, standby),
          failsInTime(store.appendMessage("s1", { role: "user", content: "hi" }), proxy, standby),
        ]);
        proxy.mode = "forward";
        // Nothing given up on ran later.
        await delay(500);
        assert.equal(await store.getMeta("k"), undefined);
        assert.equal(await store.messageCount("s1"), 0);
        assert.equal((await store.getSession("s1"))?.id, "s1");
      }, standby),
  );
}

sideBySide(
  "work waiting behind the store's own transactions or statements is not given up on at connect_timeout",
  async () => {
    const { connectPg } = await import("../../lib/postgres/_client.ts");
    const proxy = await startProxy();
    const url = proxiedUrl(proxy, `hermes-deadline-${crypto.randomUUID().slice(0, 8)}`, "x");
    const client = await connectPg(url.replace(/&schema=x$/, ""), freshSchema(), { max: 2 });
    try {
      // Both connections held for twice the deadline by open transactions (a lock holds one
      // too, but at most one fewer locks than connections are held); a statement waits for one.
      let release!: () => void;
      const released = new Promise<void>((resolve) => release = resolve);
      let started = 0;
      const holders = [1, 2].map(() =>
        client.transaction(async (query) => {
          await query("SELECT 1");
          started++;
          await released;
        })
      );
      while (started < 2) await delay(10);
      const waiting = client.query("SELECT 7 AS seven");
      const late = client.transaction((query) => query("SELECT 8 AS eight"));
      await delay(HELD_MS);
      release();
      await Promise.all(holders);
      assert.deepEqual(await waiting, [{ seven: 7 }]);
      assert.deepEqual(await late, [{ eight: 8 }]);
      // Both connections busy with statements for twice the deadline: a transaction waits its turn.
      const slow = [1, 2].map(() => client.query(`SELECT pg_sleep(${HELD_MS / 1000})`));
      await delay(200);
      const behind = client.transaction((query) => query("SELECT 9 AS nine"));
      assert.deepEqual(await behind, [{ nine: 9 }]);
      await Promise.all(slow);
    } finally {
      await client.close();
      await proxy.stop();
    }
  },
);

test("the connect deadline starts again in full when work stops waiting behind the store's own", async () => {
  const { awaitConnection } = await import("../../lib/postgres/_connect_deadline.ts");
  const seconds = 0.2;
  /** Work queued until the deadline's second look, then connected after `connectsAfter` ms. */
  const watched = (connectsAfter: number | undefined) => {
    let looks = 0;
    let connected = false;
    let abandoned = false;
    let answer!: (value: string) => void;
    const work = new Promise<string>((resolve) => answer = resolve);
    const outcome = awaitConnection(work, {
      seconds,
      where: "127.0.0.1:5432",
      connected: () => connected,
      queued: () => {
        // It stops being queued just before the look that once gave up on it.
        if (++looks > 1) {
          if (looks === 2 && connectsAfter !== undefined) {
            setTimeout(() => {
              connected = true;
              answer("answered");
            }, connectsAfter);
          }
          return false;
        }
        return true;
      },
      abandon: () => abandoned = true,
    });
    return { outcome, abandoned: () => abandoned };
  };
  // Its connection comes a moment after the queue ended: it waits for it.
  const connects = watched(50);
  assert.equal(await connects.outcome, "answered");
  assert.equal(connects.abandoned(), false);
  // No connection ever: it fails a full deadline after the queue ended, not at once, not never.
  const never = watched(undefined);
  const started = Date.now();
  await assert.rejects(never.outcome, /no connection to 127\.0\.0\.1:5432 within 0\.2 s/);
  const took = Date.now() - started;
  assert.ok(took >= 450 && took < 3000, `failed after ${took} ms`);
  assert.equal(never.abandoned(), true);
});
