// The web handler over a PostgreSQL store whose server goes away and comes back: a clear
// 503 while it is gone (as a file that cannot be read gets), the same answers once it is back.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import { openStore } from "../../lib/open_store.ts";
import { loadFixture } from "../store/_fixture_data.ts";
import { freshSchema, PG_SKIP } from "../store/_pg.ts";
import { type PgRelay, startPgRelay } from "./_pg_relay.ts";
import { sideBySideTests } from "../_side_by_side.ts";

/** The two tests that wait out a time limit, side by side: each has a relay and a schema of its own. */
const sideBySide = sideBySideTests({ skip: PG_SKIP });

/**
 * What `work` gives, or `late` after `ms`. The timer is cleared: one left running would keep
 * Node's process for the file alive after its last test.
 */
async function orAfter<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<L>((resolve) => timer = setTimeout(() => resolve(late), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe("web handler while the PostgreSQL server is gone", { skip: PG_SKIP }, () => {
  let relay: PgRelay;
  let store: SessionStore;
  let handle: Handler;
  const logged: string[] = [];
  before(async () => {
    relay = await startPgRelay();
    const schema = freshSchema();
    store = await openStore(`${relay.url}?schema=${schema}`);
    await loadFixture(store);
    handle = createHandler(store, { pollMs: 50, logError: (line) => logged.push(line) });
  });
  after(async () => {
    await store?.close();
    await relay?.close();
  });

  const get = async (path: string) => {
    const response = await handle(new Request(`http://127.0.0.1:8787${path}`));
    return { status: response.status, body: await response.json() };
  };

  test("the API answers 503 naming the database server, not a bare 500, and 200 once it is back", async () => {
    const routes = [
      "/api/sessions?limit=5",
      "/api/search?q=docker",
      "/api/usage?by=model&since=all",
      "/api/origins",
    ];
    const before = await Promise.all(routes.map(get));
    for (const answer of before) assert.equal(answer.status, 200);
    await relay.stop();
    try {
      for (const route of routes) {
        const answer = await get(route);
        assert.equal(answer.status, 503, `${route}: ${JSON.stringify(answer.body)}`);
        assert.equal(
          answer.body.error.message,
          "The PostgreSQL server cannot be reached now; try again",
        );
      }
      assert.ok(logged.length >= routes.length, "the operator is told why, in the log");
      assert.match(logged[0], /^hermes-state serve: GET \/api\/sessions failed: StorageError/);
    } finally {
      await relay.start();
    }
    const again = await Promise.all(routes.map(get));
    assert.deepEqual(again, before, "the same answers once the server is back");
  });
});

/** The time limit the frozen requests wait out (each of three in turn). */
const FROZEN_LIMIT_MS = 400;

describe("web handler while the PostgreSQL server does not answer", { skip: PG_SKIP }, () => {
  sideBySide(
    "a request gets its 503 after timeoutMs, as any slow one does, not no answer at all",
    async () => {
      const relay = await startPgRelay();
      try {
        await using store = await openStore(`${relay.url}?schema=${freshSchema()}`);
        await loadFixture(store);
        // The frozen requests each wait out a short limit; the others are asked with one far past
        // a slow answer on a loaded machine.
        const patient = createHandler(store, { pollMs: 50, timeoutMs: 30_000 });
        const handle = createHandler(store, { pollMs: 50, timeoutMs: FROZEN_LIMIT_MS });
        const get = (path: string) => handle(new Request(`http://127.0.0.1:8787${path}`));
        const first = await patient(new Request("http://127.0.0.1:8787/api/sessions?limit=1"));
        assert.equal(first.status, 200);
        relay.freeze();
        for (const path of ["/api/sessions?limit=2", "/api/search?q=docker", "/api/origins"]) {
          const started = Date.now();
          const answer = await orAfter(get(path), 8_000, "none");
          assert.notEqual(answer, "none", `${path}: no answer in 8 s`);
          const response = answer as Response;
          assert.equal(response.status, 503, path);
          assert.equal(
            (await response.json()).error.message,
            `The request took longer than ${FROZEN_LIMIT_MS} ms`,
          );
          assert.ok(Date.now() - started < 4_000, `${path}: ${Date.now() - started} ms`);
        }
        // Cut and back, the store connects again.
        await relay.stop();
        await relay.start();
        // Asked with the patient limit: the short one above is what the frozen requests test, not
        // how soon a store connects again (on a machine loaded with other work it took longer than
        // 1000 ms, and the request was answered 503).
        const back = await patient(new Request("http://127.0.0.1:8787/api/sessions?limit=3"));
        assert.equal(back.status, 200, await back.clone().text());
        assert.equal((await back.json()).sessions.length, 3);
      } finally {
        await relay.close();
      }
    },
  );
});

describe("the live stream while the PostgreSQL server does not answer", { skip: PG_SKIP }, () => {
  sideBySide(
    "it says failure within the time limit, and recovered once the server answers again",
    async () => {
      const relay = await startPgRelay();
      try {
        await using store = await openStore(`${relay.url}?schema=${freshSchema()}`);
        await loadFixture(store);
        const handle = createHandler(store, { pollMs: 50, timeoutMs: 1000 });
        const response = await handle(new Request("http://127.0.0.1:8787/api/events"));
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let text = "";
        /** Reads the stream until it holds `event`, or fails after `ms`. */
        const until = async (event: string, ms: number) => {
          const started = Date.now();
          while (!text.includes(`event: ${event}`)) {
            const left = ms - (Date.now() - started);
            const chunk = await orAfter(reader.read(), Math.max(left, 0), "late");
            assert.notEqual(chunk, "late", `no "${event}" within ${ms} ms; got:\n${text}`);
            const { done, value } = chunk as ReadableStreamReadResult<Uint8Array>;
            assert.ok(!done, `the stream ended before "${event}"`);
            text += decoder.decode(value);
          }
        };
        await until("hello", 5_000);
        relay.freeze();
        await until("failure", 5_000);
        assert.match(text, /The store did not answer within 1000 ms/);
        await relay.stop();
        await relay.start();
        await until("recovered", 15_000);
        await reader.cancel();
      } finally {
        await relay.close();
      }
    },
  );
});
