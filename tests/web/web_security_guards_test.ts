// The server's guards against a page of another site in the operator's browser and against a
// client that asks too much: Fetch Metadata on the API, the size of a write's body, and the
// number of live streams open at once. On a copy of the v11 fixture, over a real socket.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import { MAX_WRITE_BODY } from "../../lib/web/api.ts";
import { HOSTILE_ID, hostileDb, serve } from "./_served.ts";

const ORIGIN = "http://127.0.0.1:8787";
const path = await hostileDb();
const store = await openStore(path);
after(() => store.close());

function request(handle: Handler, url: string, init: RequestInit = {}): Promise<Response> {
  return handle(new Request(ORIGIN + url, init));
}

/** `promise`, or `"still waiting"` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "still waiting"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"still waiting">((ok) => {
    timer = setTimeout(() => ok("still waiting"), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("Fetch Metadata", () => {
  const handle = createHandler(store, { pollMs: 50 });

  test("the API refuses a request another site (or another port of this host) started, with 403", async () => {
    for (const site of ["cross-site", "same-site", "Cross-Site"]) {
      for (const route of ["/api/search?q=hello", "/api/export?format=jsonl", "/api/config"]) {
        const response = await request(handle, route, { headers: { "sec-fetch-site": site } });
        assert.equal(response.status, 403, `${site} ${route}`);
        assert.match((await response.json()).error.message, /Sec-Fetch-Site/);
      }
    }
  });

  test("the page's own requests, a typed address and clients that are no browser are answered", async () => {
    const kinds: Record<string, string>[] = [
      { "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "none" },
      {},
    ];
    for (const headers of kinds) {
      const response = await request(handle, "/api/sessions?limit=1", { headers });
      assert.equal(response.status, 200, JSON.stringify(headers));
      assert.equal((await response.json()).sessions.length, 1);
    }
  });

  test("the page itself opens from a link of another site (the token link is followed from a chat)", async () => {
    const response = await request(handle, "/", {
      headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
    });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /<!doctype html>/i);
  });
});

describe("a write's body", () => {
  test("a body larger than the limit that keeps coming is a 413 at once, and changes nothing", async () => {
    const handle = createHandler(store, { allowWrites: true, timeoutMs: 20_000 });
    const { csrf } = await (await request(handle, "/api/config")).json();
    const before = await store.getSessionTitle(HOSTILE_ID);
    // More than the limit, then a body that never ends (a client that stalls, or streams GBs).
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"title":"${"x".repeat(MAX_WRITE_BODY)}`));
      },
    });
    const answer = within(
      request(handle, `/api/sessions/${HOSTILE_ID}/title`, {
        method: "PUT",
        headers: { "x-hermes-csrf": csrf, "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit),
      3000,
    );
    const response = await answer;
    assert.notEqual(response, "still waiting", "the server waited for the rest of the body");
    assert.equal((response as Response).status, 413);
    assert.equal(await store.getSessionTitle(HOSTILE_ID), before);
  });

  test("a body that says it is larger than the limit is refused over a socket before it is sent", async () => {
    const served = await serve(await hostileDb(), { allowWrites: true });
    try {
      const { csrf } = await (await fetch(`${served.origin}/api/config`)).json();
      const response = await fetch(`${served.origin}/api/sessions/${HOSTILE_ID}/title`, {
        method: "PUT",
        headers: { "x-hermes-csrf": csrf, "content-type": "application/json" },
        body: JSON.stringify({ title: "y".repeat(2 * MAX_WRITE_BODY) }),
      });
      assert.equal(response.status, 413);
      assert.match((await response.json()).error.message, /too large/);
      const small = await fetch(`${served.origin}/api/sessions/${HOSTILE_ID}/title`, {
        method: "PUT",
        headers: { "x-hermes-csrf": csrf, "content-type": "application/json" },
        body: JSON.stringify({ title: "a fine title" }),
      });
      assert.equal(small.status, 200);
      assert.equal((await small.json()).title, "a fine title");
    } finally {
      await served.close();
    }
  });
});

describe("live streams", () => {
  test("a server keeps at most maxLiveStreams open; one more is a 503 until one ends", async () => {
    const handle = createHandler(store, { pollMs: 50, maxLiveStreams: 2 });
    const first = await request(handle, "/api/events");
    const second = await request(handle, "/api/events");
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    const third = await request(handle, "/api/events");
    assert.equal(third.status, 503);
    assert.match((await third.json()).error.message, /Too many live streams/);
    await first.body!.cancel();
    const fourth = await request(handle, "/api/events");
    assert.equal(fourth.status, 200);
    await second.body!.cancel();
    await fourth.body!.cancel();
  });

  test("a live stream whose client goes away over a socket gives its place back", async () => {
    const served = await serve(path, { maxLiveStreams: 1 });
    try {
      const controller = new AbortController();
      const first = await fetch(`${served.origin}/api/events`, { signal: controller.signal });
      assert.equal(first.status, 200);
      const reader = first.body!.getReader();
      await reader.read();
      const refused = await fetch(`${served.origin}/api/events`);
      assert.equal(refused.status, 503);
      await refused.body?.cancel();
      controller.abort();
      await reader.closed.catch(() => {});
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        await new Promise((ok) => setTimeout(ok, 100));
        const again = await fetch(`${served.origin}/api/events`);
        status = again.status;
        await again.body?.cancel();
      }
      assert.equal(status, 200);
    } finally {
      await served.close();
    }
  });
});
