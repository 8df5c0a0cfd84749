// The web handler over a PostgreSQL store: the same API, the same guards.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type Handler } from "../../lib/web/handler.ts";
import { V11 } from "../_cli_io.ts";
import { loadFixture } from "../store/_fixture_data.ts";
import {
  freshSchema,
  heldTransaction,
  openPgStore,
  PG_SKIP,
  PG_URL,
  schemaUrl,
} from "../store/_pg.ts";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";
import { openStore } from "../../lib/open_store.ts";
import { copyFixture } from "../_helpers.ts";
import { connectPg } from "../../lib/postgres/_client.ts";
import { quoteIdentifier } from "../../lib/core/sql_identifier.ts";

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
    assert.equal(transcript.body.origin, null, "not synced");
    assert.equal(transcript.body.lineage.id, V11.compressionRoot);
    const usage = await get("/api/usage?by=model&since=all");
    assert.equal(usage.body.rows[0].key, "anthropic/claude-sonnet-4.5");
    const foreign = await handle(new Request("http://evil.example/api/sessions"));
    assert.equal(foreign.status, 403);
  });

  test("GET /api/resolve previews an untitled session as the listing does, twins apart", async () => {
    const exact = await get(`/api/resolve?id=${V11.toolPaperclip}`);
    assert.equal(
      exact.body.session.preview,
      "Paperclip task #318: verify the docker image for chatsvc bui...",
    );
    const started = exact.body.session.started_at;
    const twin = "resolve_twin_of_paperclip";
    await store.importSession({
      id: twin,
      source: "tool",
      started_at: started,
      messages: [{ role: "user", content: "the twin's own words", timestamp: started }],
    });
    const other = await get(`/api/resolve?id=${twin}`);
    assert.equal(other.body.session.started_at, started, "started at the same instant");
    assert.equal(other.body.session.preview, "the twin's own words");
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

describe("web handler over a PostgreSQL store that sync fills", { skip: PG_SKIP }, () => {
  test("GET /api/origins lists the synced files; origin= narrows the listing and the search to one", async () => {
    const schema = freshSchema();
    const client = await connectSyncTarget(schemaUrl(schema));
    try {
      await syncFile(client, copyFixture("hermes-v11.db"), { host: "a.example", origin: "web-1" });
      await syncFile(client, copyFixture("hermes-v11.db"), { host: "b.example", origin: "web-2" });
    } finally {
      await client.close();
    }
    await using store = await openPgStore({}, schema);
    const handle = createHandler(store, { pollMs: 50 });
    const get = async (path: string) => {
      const response = await handle(new Request(`http://127.0.0.1:8787${path}`));
      return { status: response.status, body: await response.json() };
    };
    const origins = await get("/api/origins");
    assert.equal(origins.status, 200);
    assert.deepEqual(
      origins.body.origins.map((o: { origin: string; host: string; sessions: number }) => [
        o.origin,
        o.host,
        o.sessions,
      ]),
      [["web-1", "a.example", 42], ["web-2", "b.example", 42]],
    );
    // Snake case, as the rest of the API and `origins --json`.
    const [first] = origins.body.origins;
    assert.deepEqual(Object.keys(first).sort(), [
      "host",
      "last_pass_at",
      "origin",
      "path",
      "sessions",
    ]);
    assert.equal(typeof first.last_pass_at, "number");
    const listed = await get("/api/sessions?origin=web-2&limit=200");
    const ids = listed.body.sessions.map((row: { id: string }) => row.id);
    assert.ok(ids.length > 0 && ids.every((id: string) => id.startsWith("web-2/")), ids.join());
    const all = await get("/api/sessions?limit=200");
    assert.ok(all.body.sessions.some((row: { id: string }) => row.id.startsWith("web-1/")));
    const hits = (await get("/api/search?q=docker&origin=web-1")).body.hits;
    assert.ok(hits.length > 0);
    assert.ok(hits.every((hit: { session_id: string }) => hit.session_id.startsWith("web-1/")));
    // An origin the store does not record (a typo, a removed origin in a bookmark) is named.
    for (const path of ["/api/search?q=docker&origin=nope", "/api/sessions?origin=nope"]) {
      const unknown = await get(path);
      assert.equal(unknown.status, 400, path);
      assert.match(
        unknown.body.error.message,
        /^no origin "nope" in this store: known origins are web-1, web-2$/,
      );
    }
    // Usage per origin, and one origin's usage.
    const perOrigin = await get("/api/usage?by=origin&since=all");
    assert.deepEqual(
      perOrigin.body.rows.map((r: { key: string; sessions: number }) => [r.key, r.sessions]).sort(),
      [["web-1", 42], ["web-2", 42]],
    );
    const oneOrigin = await get("/api/usage?by=source&since=all&origin=web-2");
    assert.equal(oneOrigin.body.origin, "web-2");
    assert.equal(
      oneOrigin.body.rows.reduce((n: number, r: { sessions: number }) => n + r.sessions, 0),
      42,
    );
    // A transcript names the origin it was synced from; a session written here has none.
    const synced = await get(`/api/sessions/${encodeURIComponent(`web-2/${V11.compressionTip}`)}`);
    assert.equal(synced.body.origin, "web-2");
    await store.createSession("local", "cli");
    assert.equal((await get("/api/sessions/local")).body.origin, null);
    const exported = await handle(
      new Request("http://127.0.0.1:8787/api/export?format=jsonl&origin=web-2&source=cli"),
    );
    assert.equal(exported.status, 200);
    assert.equal(
      exported.headers.get("content-disposition"),
      'attachment; filename="sessions-web-2-cli.jsonl"',
    );
    const records = (await exported.text()).trim().split("\n").map((line) => JSON.parse(line));
    assert.ok(records.length > 0);
    assert.ok(records.every((r: { id: string; source: string }) => r.id.startsWith("web-2/")));
    assert.ok(records.every((r: { source: string }) => r.source === "cli"));
  });

  test("GET /api/origins is empty on a file, and origin= there is a 400 naming it", async () => {
    await using store = await openStore(copyFixture("hermes-v11.db"), { readonly: true });
    const handle = createHandler(store, { pollMs: 50 });
    const origins = await handle(new Request("http://127.0.0.1:8787/api/origins"));
    assert.deepEqual(await origins.json(), { origins: [] });
    const byOrigin = await handle(new Request("http://127.0.0.1:8787/api/usage?by=origin"));
    assert.equal(byOrigin.status, 400);
    assert.match((await byOrigin.json()).error.message, /by=origin needs a store that/);
    const refused = await handle(new Request("http://127.0.0.1:8787/api/sessions?origin=web-1"));
    assert.equal(refused.status, 400);
    assert.match(
      (await refused.json()).error.message,
      /origin needs a store that "hermes-state sync" fills \(PostgreSQL\): current value is "web-1"/,
    );
  });

  test("a write the server gives up on (its lock_timeout) is a 503 'busy, try again', not a 500", async () => {
    const url = new URL(schemaUrl(freshSchema()));
    const schema = url.searchParams.get("schema")!;
    const own = await openStore(url.href);
    await own.createSession("held", "cli");
    url.searchParams.set("lock_timeout", "100");
    const limited = await openStore(url.href);
    const holder = await connectPg(PG_URL!, schema, { max: 1 });
    try {
      const h = createHandler(limited, { pollMs: 50, allowWrites: true });
      const config = await (await h(new Request("http://127.0.0.1:8787/api/config"))).json();
      // Another process holds the session's row while the page renames it.
      const holding = heldTransaction(holder, async (query) => {
        await query(
          `SELECT id FROM ${quoteIdentifier(schema)}.sessions WHERE id = 'held' FOR UPDATE`,
        );
      });
      await holding.ready;
      const response = await h(
        new Request("http://127.0.0.1:8787/api/sessions/held/title", {
          method: "PUT",
          body: JSON.stringify({ title: "renamed while held" }),
          headers: { "x-hermes-csrf": config.csrf },
        }),
      );
      holding.commit();
      await holding.done;
      assert.equal(response.status, 503);
      assert.deepEqual(await response.json(), {
        error: { status: 503, message: "The database is busy; try again" },
      });
      assert.equal(await own.getSessionTitle("held"), null);
    } finally {
      await holder.close();
      await limited.close();
      await own.close();
    }
  });
});
