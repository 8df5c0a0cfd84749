/**
 * A write whose connection is lost once its COMMIT was sent: the server
 * may have committed it (only its answer was lost) or not. The store asks
 * the server on a new connection instead of guessing: committed, the write
 * stands and the caller gets its result (an append is not said failed, so
 * it is not written again); rolled back, it runs again, once; when the
 * server cannot be asked, the error says the write may have been committed.
 * The store reaches the test server through a proxy the test runs
 * (`_pg_proxy.ts`), which cuts a connection at the chosen byte.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectPg } from "../../lib/postgres/_client.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { openStore } from "../../lib/open_store.ts";
import { StorageError } from "../../lib/core/errors.ts";
import { adminSql, freshSchema, PG_SKIP, PG_URL } from "./_pg.ts";
import { copyFixture } from "../_helpers.ts";
import { type LosingProxy, startLosingProxy } from "./_pg_proxy.ts";
import { sideBySideTests } from "../_side_by_side.ts";

/**
 * The tests that wait out the connect deadline (the server out of reach), side by side: each
 * has a proxy and a schema of its own.
 */
const sideBySide = sideBySideTests({ skip: PG_SKIP });

/** The test server's URL through the proxy (a connect deadline of 1 s). */
function proxiedUrl(proxy: LosingProxy, schema?: string): string {
  const url = new URL(PG_URL!);
  url.host = `127.0.0.1:${proxy.port}`;
  url.searchParams.set("connect_timeout", "1");
  if (schema !== undefined) url.searchParams.set("schema", schema);
  return url.href;
}

/** Runs `fn` with a proxy and a fresh schema, the proxy stopped after. */
async function withProxy(
  fn: (proxy: LosingProxy, schema: string) => Promise<void>,
): Promise<void> {
  const schema = freshSchema();
  const target = new URL(PG_URL!);
  const proxy = await startLosingProxy(target.hostname, Number(target.port || 5432));
  try {
    await fn(proxy, schema);
  } finally {
    await proxy.stop();
  }
}

/** Runs `fn` with a pool through the proxy and a table `t` of its own, counted by `rows()`. */
async function withClient(
  fn: (client: PgClient, proxy: LosingProxy, rows: () => Promise<number>) => Promise<void>,
): Promise<void> {
  await withProxy(async (proxy, schema) => {
    await adminSql(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".t (n integer)`);
    const rows = async () => {
      const [row] = await adminSql(`SELECT count(*)::int AS n FROM "${schema}".t`);
      return Number(row?.n);
    };
    const client = await connectPg(proxiedUrl(proxy), schema);
    try {
      await fn(client, proxy, rows);
    } finally {
      await client.close();
    }
  });
}

/** Runs `fn` with a store through the proxy, holding session `s`. */
async function withStore(
  fn: (store: SessionStore, proxy: LosingProxy) => Promise<void>,
): Promise<void> {
  await withProxy(async (proxy, schema) => {
    const store = await openStore(proxiedUrl(proxy, schema));
    try {
      await store.createSession("s", "cli");
      await fn(store, proxy);
    } finally {
      await store.close();
    }
  });
}

/** What `promise` rejects with, checked to be a lost connection (`io`). */
async function lostWith(promise: Promise<unknown>): Promise<StorageError> {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown);
  assert.ok(error instanceof StorageError, `not a StorageError: ${error}`);
  assert.equal(error.kind, "io");
  return error;
}

/** The messages of session `s`: their contents. */
async function contents(store: SessionStore): Promise<unknown[]> {
  return (await store.getMessages("s")).map((message) => message.content);
}

/**
 * The losses of a burst (a server stopping ends every connection it still takes): the first
 * question about a lost write is cut too, and every statement sent in the 150 ms after it, so
 * that more than three questions asked back to back would all be lost.
 */
const BURST_MS = 150;

/**
 * A longer burst (a server under fire, ending connection after connection): lost, the third
 * question and a fourth asked after it would be too, the questions go on, further apart.
 */
const LONG_BURST_MS = 500;

/** What a test's title says of its burst of losses. */
function burstTitle(burst: number): string {
  return burst === LONG_BURST_MS
    ? "the questions after it lost too for half a second (a server under fire)"
    : "the questions after it lost too for a moment (a server stopping)";
}

for (const burst of [0, BURST_MS, LONG_BURST_MS]) {
  test(
    burst > 0
      ? `a write whose COMMIT answer was lost, and ${
        burstTitle(burst)
      }: asked again, its result is given, and it ran once`
      : "a write whose COMMIT answer was lost, committed: its result is given, and it ran once",
    { skip: PG_SKIP },
    async () => {
      await withClient(async (client, proxy, rows) => {
        let runs = 0;
        const value = await client.transaction(async (query) => {
          runs++;
          await query("INSERT INTO t VALUES (1)");
          proxy.loseAnswer = "COMMIT";
          if (burst > 0) proxy.burstMs = burst;
          return "written";
        }, { writes: true });
        assert.equal(value, "written");
        if (burst > 0) assert.ok(proxy.lost >= 2, `the COMMIT and a question cut: ${proxy.lost}`);
        else assert.equal(proxy.lost, 1, "the proxy cut the connection at the COMMIT's answer");
        assert.equal(runs, 1);
        assert.equal(await rows(), 1);
      });
    },
  );
}

test(
  "a write whose COMMIT never reached the server: rolled back there, it runs again, once",
  { skip: PG_SKIP },
  async () => {
    await withClient(async (client, proxy, rows) => {
      let runs = 0;
      const value = await client.transaction(async (query) => {
        runs++;
        await query("INSERT INTO t VALUES (1)");
        // Its next bytes are the COMMIT.
        if (runs === 1) proxy.cutNextRequest = true;
        return runs;
      }, { writes: true });
      assert.equal(proxy.lost, 1, "the proxy cut the connection at the COMMIT");
      assert.equal(value, 2);
      assert.equal(await rows(), 1);
    });
  },
);

sideBySide(
  "a write whose COMMIT answer was lost, the server out of reach: the error says it may stand",
  async () => {
    await withClient(async (client, proxy, rows) => {
      let runs = 0;
      const error = await lostWith(client.transaction(async (query) => {
        runs++;
        await query("INSERT INTO t VALUES (1)");
        proxy.loseAnswer = "COMMIT";
        proxy.mode = "refuse";
      }, { writes: true }));
      assert.match(
        error.message,
        /was lost.*, once the write's COMMIT was sent, and whether it was written cannot be told \(.+\): look for what it wrote before writing it again$/,
      );
      assert.equal(runs, 1);
      assert.equal(await rows(), 1, "it was committed: the error must not say it failed");
    });
  },
);

test(
  "appendMessages in a transaction whose COMMIT answer was lost: ids given, the messages there once",
  { skip: PG_SKIP },
  async () => {
    await withStore(async (store, proxy) => {
      proxy.loseAnswer = "COMMIT";
      // More than one statement's worth (1,000): one transaction.
      const sent = Array.from({ length: 1500 }, (_, i) => ({ role: "user", content: `m${i}` }));
      const ids = await store.appendMessages("s", sent);
      assert.equal(proxy.lost, 1, "the proxy cut the connection at the COMMIT's answer");
      assert.equal(ids.length, 1500);
      assert.deepEqual((await store.getMessages("s")).map((message) => message.id), ids);
      assert.deepEqual(await contents(store), sent.map((message) => message.content));
      assert.equal((await store.getSession("s"))?.message_count, 1500);
    });
  },
);

for (const burst of [0, BURST_MS, LONG_BURST_MS]) {
  test(
    burst > 0
      ? `appendMessage whose answer was lost, and ${
        burstTitle(burst)
      }: asked again, its id is given, and the message is there once`
      : "appendMessage whose own answer was lost: made, it gives its id, and the message is there once",
    { skip: PG_SKIP },
    async () => {
      await withStore(async (store, proxy) => {
        // The append is one statement whose rows are the new ids: `SELECT 1`.
        proxy.loseAnswer = "SELECT 1";
        if (burst > 0) proxy.burstMs = burst;
        const id = await store.appendMessage("s", { role: "user", content: "hello" });
        if (burst > 0) assert.ok(proxy.lost >= 2, `the append and a question cut: ${proxy.lost}`);
        else assert.equal(proxy.lost, 1, "the proxy cut the connection at the append's answer");
        const messages = await store.getMessages("s");
        assert.deepEqual(messages.map((message) => [message.id, message.content]), [[id, "hello"]]);
        assert.equal((await store.getSession("s"))?.message_count, 1);
      });
    },
  );
}

test(
  "appendMessages whose statement never reached the server: not made there, it is made once",
  { skip: PG_SKIP },
  async () => {
    await withStore(async (store, proxy) => {
      await store.appendMessage("s", { role: "user", content: "hello" });
      proxy.cutNextRequest = true;
      const ids = await store.appendMessages("s", [
        { role: "assistant", content: "hello" },
        { role: "user", content: "again" },
      ]);
      assert.equal(proxy.lost, 1, "the proxy cut the connection at the append");
      assert.deepEqual(await contents(store), ["hello", "hello", "again"]);
      assert.deepEqual((await store.getMessages("s")).slice(1).map((message) => message.id), ids);
      assert.equal((await store.getSession("s"))?.message_count, 3);
    });
  },
);

sideBySide(
  "appendMessage whose answer was lost, the server out of reach: the error says it may stand",
  async () => {
    await withStore(async (store, proxy) => {
      proxy.loseAnswer = "SELECT 1";
      proxy.mode = "refuse";
      const error = await lostWith(store.appendMessage("s", { role: "user", content: "hello" }));
      assert.equal(proxy.lost, 1, "the proxy cut the connection at the append's answer");
      assert.match(
        error.message,
        /once the append was sent, and whether it was written cannot be told \(the server could not be asked: .+\): look for what it wrote/,
      );
      proxy.mode = "forward";
      assert.deepEqual(await contents(store), ["hello"]);
    });
  },
);

sideBySide(
  "appendMessage with the server out of reach before it is sent: the error does not say it may stand",
  async () => {
    await withStore(async (store, proxy) => {
      // The pool's connections are cut, then none connects.
      proxy.mode = "refuse";
      proxy.cutAll();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const error = await lostWith(store.appendMessage("s", { role: "user", content: "hello" }));
      assert.doesNotMatch(error.message, /whether it was written/);
    });
  },
);

test(
  "endSession whose answer was lost: it runs again once the server process that had it ended",
  { skip: PG_SKIP },
  async () => {
    await withStore(async (store, proxy) => {
      proxy.loseAnswer = "UPDATE 1";
      await store.endSession("s", "user_exit");
      assert.equal(proxy.lost, 1, "the proxy cut the connection at the update's answer");
      const session = await store.getSession("s");
      assert.equal(session?.end_reason, "user_exit");
      assert.equal(typeof session?.ended_at, "number");
    });
  },
);

test(
  "through a pooler not named in the URL (its process ids its own), a lost append is not looked up by them: it says it cannot be told, and is there once",
  { skip: PG_SKIP },
  async () => {
    await withProxy(async (proxy, schema) => {
      proxy.fakeBackendKeys = true;
      const store = await openStore(proxiedUrl(proxy, schema));
      try {
        await store.createSession("s", "cli");
        // The session's row held: the append, once sent, waits on the server for it, its
        // connection lost meanwhile (its server process goes on).
        const holder = connectPg(PG_URL!, schema, { max: 2 });
        const admin = await holder;
        let release!: () => void;
        const released = new Promise<void>((resolve) => release = resolve);
        let locked!: () => void;
        const holding = new Promise<void>((resolve) => locked = resolve);
        const held = admin.transaction(async (query) => {
          await query("SELECT id FROM sessions WHERE id = 's' FOR UPDATE");
          locked();
          await released;
        });
        await holding;
        proxy.loseAfterExecute = true;
        const appending = lostWith(store.appendMessage("s", { role: "user", content: "once" }));
        // Freed once the store has answered (it need not wait for the lost append's server
        // process); at the latest after 1.5 s, so a store that does wait for it still answers.
        const backstop = setTimeout(release, 1500);
        appending.finally(() => {
          clearTimeout(backstop);
          release();
        }).catch(() => {});
        const error = await appending;
        await held;
        await admin.close();
        assert.equal(proxy.lost, 1, "the proxy lost the connection at the append");
        assert.match(
          error.message,
          /whether it was written cannot be told \(a pooler stood between/,
        );
        // The lost append ran once the row was free; it was not made a second time.
        for (let waited = 0; waited < 3000 && (await contents(store)).length === 0; waited += 50) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.deepEqual(await contents(store), ["once"]);
      } finally {
        await store.close();
      }
    });
  },
);

test(
  "a sync pass whose COMMIT answer was lost fails as lost; the next pass ships every session and message once",
  { skip: PG_SKIP, timeout: 60_000 },
  async () => {
    const { connectSyncTarget, syncFile } = await import("../../lib/postgres/sync.ts");
    await withProxy(async (proxy, schema) => {
      const client = await connectSyncTarget(proxiedUrl(proxy, schema));
      try {
        const file = copyFixture("hermes-v11.db");
        // A pass's transactions may write nothing (an idle pass must not move the change
        // marker): no transaction id is asked for them, and a lost one fails the pass.
        proxy.loseAnswer = "COMMIT";
        await lostWith(syncFile(client, file, { host: "web-1" }));
        assert.equal(proxy.lost, 1, "the proxy cut the connection at a COMMIT's answer");
        await syncFile(client, file, { host: "web-1" });
        const [row] = await adminSql(
          `SELECT (SELECT count(*) FROM "${schema}".sessions)::int AS sessions,
                  (SELECT count(*) FROM "${schema}".messages)::int AS messages,
                  (SELECT count(DISTINCT (session_id, timestamp, role, content))
                     FROM "${schema}".messages)::int AS distinct_messages`,
        );
        assert.deepEqual(row, { sessions: 42, messages: 197, distinct_messages: 197 });
      } finally {
        await client.close();
      }
    });
  },
);
