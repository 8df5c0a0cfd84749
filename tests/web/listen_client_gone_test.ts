/**
 * A client that goes away while the handler is still working: the answer's
 * body is cancelled once it comes (the Node adapter, which Deno uses too,
 * listened for the client's going only after it had gone, so a live stream
 * answered so polled on for good, held its place among the live streams,
 * and kept the process alive).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { listen, type Listening } from "../../lib/web/listen.ts";

let store: SessionStore;
let server: Listening;
let origin: string;

before(async () => {
  store = await openStore(copyFixture("hermes-v11.db"));
  const handler = createHandler(store, { pollMs: 50, maxLiveStreams: 1 });
  server = await listen(async (request) => {
    // A slow answer: the client has gone before it comes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return await handler(request);
  }, { host: "127.0.0.1", port: 0 });
  origin = `http://127.0.0.1:${server.port}`;
});

after(async () => {
  await server?.close();
  await store?.close();
});

test("a live stream whose client left before the answer frees its place", async () => {
  const gone = new AbortController();
  const first = fetch(`${origin}/api/events`, { signal: gone.signal }).catch(() => undefined);
  setTimeout(() => gone.abort(), 50);
  await first;
  // The answer comes at 300 ms, to nobody: its stream must be cancelled, not run on.
  let status = 0;
  for (let i = 0; i < 40 && status !== 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const next = await fetch(`${origin}/api/events`);
    status = next.status;
    await next.body?.cancel();
  }
  assert.equal(status, 200, "the only live-stream place is free again");
});
