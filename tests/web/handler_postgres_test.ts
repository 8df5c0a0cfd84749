// The web handler over a PostgreSQL store: the same API, the same guards.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import { V11 } from "../_cli_io.ts";
import { loadFixture } from "../store/_fixture_data.ts";
import { openPgStore, PG_SKIP } from "../store/_pg.ts";

describe("web handler over PostgreSQL", { skip: PG_SKIP }, () => {
  let store: SessionStore;
  let handle: Handler;
  before(async () => {
    store = await openPgStore();
    await loadFixture(store);
    handle = createHandler(store, { pollMs: 50 });
  });
  after(async () => {
    await store?.close();
  });

  const get = async (path: string) => {
    const response = await handle(new Request(`http://127.0.0.1:8787${path}`));
    return { status: response.status, body: await response.json() };
  };

  test("createHandler() lists, searches, shows a transcript with its lineage, and reports usage", async () => {
    const listing = await get("/api/sessions?limit=5");
    assert.equal(listing.status, 200);
    assert.equal(listing.body.sessions.length, 5);
    const search = await get("/api/search?q=docker");
    assert.ok(search.body.hits.length > 0);
    const transcript = await get(`/api/sessions/${V11.compressionTip}`);
    assert.equal(transcript.body.session.title, "my project #3");
    assert.equal(transcript.body.lineage.id, V11.compressionRoot);
    const usage = await get("/api/usage?by=model&since=all");
    assert.equal(usage.body.rows[0].key, "anthropic/claude-sonnet-4.5");
    const foreign = await handle(new Request("http://evil.example/api/sessions"));
    assert.equal(foreign.status, 403);
  });

  test("GET /api/events sends change after a write to the PostgreSQL store", async () => {
    const response = await handle(new Request("http://127.0.0.1:8787/api/events"));
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    assert.match(decoder.decode((await reader.read()).value), /event: hello/);
    await store.appendMessage(V11.live, { role: "user", content: "written while watching" });
    let next = "";
    while (!next.includes("event: change")) next += decoder.decode((await reader.read()).value);
    await reader.cancel();
  });
});
