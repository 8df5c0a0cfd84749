// Stopping the web server over a PostgreSQL store while a page holds its live stream open:
// the server stops at once (Ctrl-C used to wait on Deno for the page to go), the page's
// stream ends, and a server started again on the same port answers.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { listen } from "../../lib/web/listen.ts";
import { loadFixture } from "../store/_fixture_data.ts";
import { openPgStore, PG_SKIP } from "../store/_pg.ts";

/** `promise`, or a rejection naming `what` after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("web server over PostgreSQL stopped with a page open", { skip: PG_SKIP }, () => {
  let store: SessionStore;
  before(async () => {
    store = await openPgStore();
    await loadFixture(store);
  });
  after(async () => {
    await store?.close();
  });

  test("close() ends the open live streams and returns; the port serves again", async () => {
    const handler = createHandler(store, { pollMs: 50 });
    const server = await listen(handler, { host: "127.0.0.1", port: 0 });
    const origin = `http://127.0.0.1:${server.port}`;
    const events = await fetch(`${origin}/api/events`);
    const reader = events.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("event: hello")) text += decoder.decode((await reader.read()).value);
    // An export being read as well: cut too, as the connections of Node and Bun are.
    const listing = await fetch(`${origin}/api/sessions?limit=1`);
    assert.equal(listing.status, 200);
    await listing.body?.cancel();
    await within(5_000, "server.close() with a live stream open", server.close());
    const rest = await within(
      5_000,
      "the end of the live stream",
      (async () => {
        try {
          while (!(await reader.read()).done) { /* drain */ }
          return "ended";
        } catch {
          return "cut";
        }
      })(),
    );
    assert.ok(rest === "ended" || rest === "cut", rest);
    const again = await listen(handler, { host: "127.0.0.1", port: server.port });
    try {
      const answer = await fetch(`${origin}/api/sessions?limit=1`);
      assert.equal(answer.status, 200);
      assert.equal((await answer.json()).sessions.length, 1);
    } finally {
      await again.close();
    }
  });
});
