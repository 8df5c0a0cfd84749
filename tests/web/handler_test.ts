// The web handler, called without a socket: guards (Host, token, CSRF), the
// page and its headers, and every API route on a copy of the v11 fixture.
import { after, describe, test } from "node:test";
import { renameSync } from "node:fs";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { createHandler, type Handler, type HandlerOptions } from "../../lib/web/handler.ts";
import { V11, v11Copy } from "../_cli_io.ts";
import { copyFixture, rawOpen, tempDbPath } from "../_helpers.ts";
import { HOSTILE_ID, hostileDb } from "./_served.ts";
import { parseSince } from "../../lib/core/usage.ts";
import { listen } from "../../lib/web/listen.ts";
import { delay } from "../reliability/_runtimes.ts";
import { EXPORT_PIECES } from "../../lib/core/export_pieces.ts";

const ORIGIN = "http://127.0.0.1:8787";
const path = await hostileDb();
const store = await openStore(path);
after(() => store.close());

function handlerFor(options: HandlerOptions = {}, on: SessionStore = store): Handler {
  return createHandler(on, { pollMs: 50, ...options });
}

const handle = handlerFor();

function get(url: string, init: RequestInit = {}, h: Handler = handle): Promise<Response> {
  return h(new Request(url.startsWith("http") ? url : ORIGIN + url, init));
}

async function getJson(url: string, h: Handler = handle) {
  const response = await get(url, {}, h);
  return { status: response.status, body: await response.json() };
}

describe("the page", () => {
  test("createHandler() serves the page with a strict CSP, nosniff and no inline script", async () => {
    const response = await get("/");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/html/);
    const csp = response.headers.get("content-security-policy")!;
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    const html = await response.text();
    for (const tag of html.match(/<script[^>]*>/g) ?? []) assert.match(tag, /src="\/assets\//);
    assert.doesNotMatch(html, /<script>|style="|\son[a-z]+=/);
    assert.doesNotMatch(html, /https?:\/\//, "no third-party request");
    // Before its stream first connects, the live mark does not claim to be live.
    assert.match(html, /<span id="live" class="live"[^>]*>\u25cf connecting<\/span>/);
  });

  test("createHandler() serves the script and style with an ETag, and 304 when it matches", async () => {
    const js = await get("/assets/app.js");
    assert.equal(js.status, 200);
    assert.match(js.headers.get("content-type")!, /javascript/);
    const text = await js.text();
    assert.doesNotMatch(text, /\beval\(|new Function|innerHTML|insertAdjacentHTML|document\.write/);
    const again = await get("/assets/app.js", {
      headers: { "if-none-match": js.headers.get("etag")! },
    });
    assert.equal(again.status, 304);
    assert.equal((await get("/assets/app.css")).status, 200);
  });

  test("createHandler() keeps the first page load (HTML and assets) under 200 KB", async () => {
    let total = 0;
    for (const url of ["/", "/assets/app.js", "/assets/app.css"]) {
      total += (await (await get(url)).arrayBuffer()).byteLength;
    }
    assert.ok(total < 200 * 1024, `first load is ${total} bytes`);
  });

  test("createHandler() answers 404 JSON for unknown paths and traversal attempts", async () => {
    for (
      const url of [
        "/etc/passwd",
        "/assets/../../etc/passwd",
        "/assets/%2e%2e/%2e%2e/etc/passwd",
        "/assets/app.js/x",
        "/api/nope",
      ]
    ) {
      const response = await get(url);
      assert.equal(response.status, 404, url);
      const body = await response.json();
      assert.equal(body.error.status, 404);
    }
  });

  test("createHandler() refuses a method the page does not take", async () => {
    const response = await get("/", { method: "POST", body: "x" });
    assert.equal(response.status, 405);
  });
});

describe("a file that goes away", () => {
  test("createHandler() answers 503 while the read-only file is moved away (its path only in the log), and answers again once it is back", async () => {
    const served = copyFixture("hermes-v11.db");
    const reader = await openStore(served, { readonly: true });
    after(() => reader.close());
    const lines: string[] = [];
    const h = createHandler(reader, { pollMs: 50, logError: (line) => lines.push(line) });
    assert.equal((await get("/api/sessions", {}, h)).status, 200);
    renameSync(served, `${served}.away`);
    await delay(150); // the store looks every 100 ms
    const gone = await get("/api/sessions", {}, h);
    assert.equal(gone.status, 503);
    const body = await gone.json();
    assert.equal(body.error.message, "The database file cannot be read now; try again");
    assert.ok(!JSON.stringify(body).includes(served), "no path leaves the server");
    assert.match(lines.join("\n"), /no such file/);
    renameSync(`${served}.away`, served);
    await delay(150);
    assert.equal((await get("/api/sessions", {}, h)).status, 200);
  });
});

describe("guards", () => {
  test("createHandler() answers 403 to a foreign Host (DNS rebinding)", async () => {
    const response = await get("http://evil.example:8787/api/sessions", {
      headers: { host: "evil.example:8787" },
    });
    assert.equal(response.status, 403);
    assert.match((await response.json()).error.message, /evil\.example/);
    assert.equal((await get("http://localhost:8787/api/config")).status, 200);
  });

  test("createHandler() answers 400 to a Host header that is not a host and port", async () => {
    for (const host of ["a b", "%", "127.0.0.1:99999", "127.0.0.1:abc", "[::1", "127.0.0.1:"]) {
      const response = await get("/api/config", { headers: { host } });
      assert.equal(response.status, 400, host);
      assert.match((await response.json()).error.message, /Host header/);
    }
    for (const host of ["127.0.0.1:8787", "localhost", "[::1]:8787"]) {
      assert.equal((await get("/api/config", { headers: { host } })).status, 200, host);
    }
  });

  test("createHandler() accepts the --public-url host", async () => {
    const h = handlerFor({ publicUrl: "https://state.example.org/" });
    const response = await get("http://state.example.org/api/config", {}, h);
    assert.equal(response.status, 200);
  });

  test("createHandler() refuses a non-loopback bind without a token", () => {
    assert.throws(() => createHandler(store, { host: "0.0.0.0" }), TypeError);
    assert.throws(() => createHandler(store, { host: "192.168.1.5", token: "" }), TypeError);
  });

  test("createHandler() on a non-loopback bind answers 401 without the token and trades it for a cookie", async () => {
    const h = handlerFor({ host: "0.0.0.0", token: "s3cret-token" });
    const base = "http://192.168.1.5:8787";
    assert.equal((await get(`${base}/api/sessions`, {}, h)).status, 401);
    assert.equal((await get(`${base}/`, {}, h)).status, 401);
    assert.equal((await get(`${base}/?token=wrong`, {}, h)).status, 401);
    assert.equal(
      (await get(`${base}/`, { headers: { cookie: "hermes_state_token_8787=wrong" } }, h)).status,
      401,
    );
    // A page of this origin goes on (a redirect would carry another site's navigation, which
    // does not send the SameSite=Strict cookie).
    const exchange = await get(`${base}/?token=s3cret-token&x=1#/usage`, {}, h);
    assert.equal(exchange.status, 200);
    const page = await exchange.text();
    assert.match(page, /<a id="go" href="\/\?x=1">/);
    assert.match(page, /http-equiv="refresh" content="0; url=\/\?x=1"/);
    assert.doesNotMatch(page, /s3cret/, "the token is not in the page");
    const doubled = await (await get(`${base}//evil.example/?token=s3cret-token`, {}, h)).text();
    assert.match(doubled, /<a id="go" href="\/evil\.example\/">/, "never another server's address");
    const script = /<script>([^<]*)<\/script>/.exec(page)![1];
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(script));
    const hash = btoa(String.fromCharCode(...new Uint8Array(digest)));
    assert.match(
      exchange.headers.get("content-security-policy")!,
      new RegExp(`script-src 'sha256-${hash.replace(/[+/]/g, "\\$&")}'`),
    );
    const cookie = exchange.headers.get("set-cookie")!;
    assert.match(cookie, /^hermes_state_token_8787=s3cret-token;/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const ok = await get(`${base}/api/sessions`, {
      headers: { cookie: "hermes_state_token_8787=s3cret-token" },
    }, h);
    assert.equal(ok.status, 200);
    // Another port's server keeps its own cookie: browsers send a host's cookies to all its
    // ports, and under one name a second server's token replaced this one's (401 here).
    const beside = await get(`${base}/api/sessions`, {
      headers: { cookie: "hermes_state_token_8788=another; hermes_state_token_8787=s3cret-token" },
    }, h);
    assert.equal(beside.status, 200);
    const other = await get(`${base}/api/sessions`, {
      headers: { cookie: "hermes_state_token_8788=s3cret-token" },
    }, h);
    assert.equal(other.status, 401, "the cookie of another port's server is not this one's");
    const bearer = await get(`${base}/api/config`, {
      headers: { authorization: "Bearer s3cret-token" },
    }, h);
    assert.equal(bearer.status, 200);
    // A name that is not an address of this machine is still refused before the token.
    assert.equal(
      (await get("http://evil.example/api/sessions", {
        headers: { cookie: "hermes_state_token_8787=s3cret-token" },
      }, h)).status,
      403,
    );
  });

  test("createHandler() is read-only by default: a write is 403 and changes nothing", async () => {
    const response = await get(`/api/sessions/${V11.compressionTip}/title`, {
      method: "PUT",
      body: JSON.stringify({ title: "changed" }),
    });
    assert.equal(response.status, 403);
    assert.equal(await store.getSessionTitle(V11.compressionTip), "my project #3");
  });
});

describe("API", () => {
  test("GET /api/sessions pages the listing and reports whether more follow", async () => {
    const first = await getJson("/api/sessions?limit=5");
    assert.equal(first.status, 200);
    assert.equal(first.body.sessions.length, 5);
    assert.equal(first.body.more, true);
    const second = await getJson("/api/sessions?limit=5&offset=5");
    const ids = new Set(first.body.sessions.map((s: { id: string }) => s.id));
    for (const s of second.body.sessions) assert.ok(!ids.has(s.id));
    const row = first.body.sessions.find((s: { id: string }) => s.id === V11.compressionTip);
    assert.equal(row.lineage_root_id, V11.compressionRoot, "a compression chain is one row");
    assert.equal("system_prompt" in row, false);
  });

  test("GET /api/sessions filters by source, start date and children, and orders by start", async () => {
    const telegram = await getJson("/api/sessions?source=telegram&limit=200");
    assert.ok(telegram.body.sessions.length > 0);
    for (const s of telegram.body.sessions) assert.equal(s.source, "telegram");
    const recent = await getJson("/api/sessions?from=2026-04-25&to=2026-04-27&limit=200");
    assert.ok(recent.body.sessions.length > 0);
    for (const s of recent.body.sessions) {
      assert.ok(
        s.started_at >= Date.UTC(2026, 3, 25) / 1000 && s.started_at < Date.UTC(2026, 3, 27) / 1000,
      );
    }
    // Unix seconds (what the page sends for a day in its reader's time zone): the same bounds.
    const seconds = await getJson(
      `/api/sessions?from=${Date.UTC(2026, 3, 25) / 1000}&to=${
        Date.UTC(2026, 3, 27) / 1000
      }&limit=200`,
    );
    assert.deepEqual(seconds.body, recent.body);
    const [first] = recent.body.sessions.map((s: { started_at: number }) => s.started_at).sort();
    const after = await getJson(`/api/sessions?from=${first + 0.5}&limit=200`);
    assert.ok(after.body.sessions.every((s: { started_at: number }) => s.started_at > first));
    const parents = await getJson("/api/sessions?children=1&limit=200");
    const parentIds = parents.body.sessions.map((
      s: { lineage_root_id: string | null; id: string },
    ) => s.lineage_root_id ?? s.id);
    assert.ok(parentIds.includes(V11.branchParent));
    assert.ok(!parentIds.includes(V11.live));
    const started = await getJson("/api/sessions?order=started&limit=200");
    const starts = started.body.sessions.map((s: { started_at: number }) => s.started_at);
    assert.deepEqual(starts, [...starts].sort((a, b) => b - a));
  });

  test("GET /api/sessions rejects unbounded or bad parameters with a 400 naming them", async () => {
    for (
      const [url, name] of [
        ["limit=500", "limit"],
        ["offset=-1", "offset"],
        ["order=random", "order"],
        ["from=yesterday", "from"],
        ["limit=1e3", "limit"],
        // A page of no rows: it answered one, though the error said 0 was allowed.
        ["limit=0", "limit must be a whole number from 1 to 200"],
      ]
    ) {
      const response = await getJson(`/api/sessions?${url}`);
      assert.equal(response.status, 400, url);
      assert.match(response.body.error.message, new RegExp(name));
    }
    const search = await getJson("/api/search?q=docker&limit=0");
    assert.equal(search.status, 400);
    assert.match(search.body.error.message, /^limit must be a whole number from 1 to 200/);
  });

  test("GET /api/search finds English and CJK text with snippets and session titles", async () => {
    const docker = await getJson("/api/search?q=docker&limit=5");
    assert.equal(docker.status, 200);
    assert.ok(docker.body.hits.length > 0);
    assert.match(docker.body.hits[0].snippet, />>>docker<<</i);
    assert.ok(Array.isArray(docker.body.hits[0].context));
    const cjk = await getJson(`/api/search?q=${encodeURIComponent("记忆")}`);
    assert.ok(cjk.body.hits.length > 0);
    assert.ok(cjk.body.hits.some((h: { title: string | null }) => h.title !== null));
    const snippets = cjk.body.hits.map((h: { snippet: string }) => h.snippet);
    assert.ok(
      snippets.every((s: string) => s.includes(">>>记忆<<<")),
      `a substring match is marked as an FTS5 one is: ${JSON.stringify(snippets)}`,
    );
    // A match in a command line: the call as the page shows it, not the tool_calls JSON.
    const command = await getJson(`/api/search?q=${encodeURIComponent('"system df"')}&limit=50`);
    const shown = command.body.hits.map((h: { snippet: string }) => h.snippet);
    assert.ok(
      shown.includes(
        'Let me look at how much space docker is using first. → terminal {"command": "docker >>>system df<<<"}',
      ),
      JSON.stringify(shown),
    );
  });

  test("GET /api/search refuses a query that starts with NOT, as the CLI does", async () => {
    for (const q of ["NOT docker", "  NOT docker", "NOT", "not 数据库"]) {
      const response = await getJson(`/api/search?q=${encodeURIComponent(q)}`);
      assert.equal(response.status, 400, q);
      assert.match(response.body.error.message, /^a query cannot start with NOT/);
      assert.match(response.body.error.message, /"docker NOT compose"/);
    }
    // FTS5 knows only an upper-case NOT (outside CJK text): "not working" is words.
    for (const q of ["docker NOT compose", "not working"]) {
      const fine = await getJson(`/api/search?q=${encodeURIComponent(q)}`);
      assert.equal(fine.status, 200, q);
    }
  });

  test("GET /api/search sends snippet_parts where the message's own >>> and <<< stay text", async () => {
    await using own = await openStore(tempDbPath());
    await own.createSession("repl", "cli");
    await own.appendMessages("repl", [
      { role: "user", content: "In the REPL: >>> import kraken then tr a-z A-Z <<< kraken done" },
      { role: "user", content: "glued >>>kraken<<< and kraken<<< too" },
    ]);
    const h = handlerFor({}, own);
    const { status, body } = await getJson("/api/search?q=kraken", h);
    assert.equal(status, 200);
    // (The index's text ends with the tool name and calls, empty here: trailing spaces.)
    const parts = body.hits.map((hit: { snippet_parts: string[] }) =>
      hit.snippet_parts.map((part) => part.trimEnd())
    );
    assert.deepEqual(
      parts.find((p: string[]) => p.join("").startsWith("In the REPL")),
      ["In the REPL: >>> import", "kraken", " then tr a-z A-Z <<<", "kraken", " done"],
    );
    assert.deepEqual(
      parts.find((p: string[]) => p.join("").startsWith("glued")),
      ["glued >>>", "kraken", "<<< and", "kraken", "<<< too"],
    );
  });

  test("GET /api/search marks the words of hits read by substring where an index is missing or stale", async () => {
    // A words index marked stale: its messages are read by substring, which marks nothing.
    const stalePath = tempDbPath();
    {
      using db = await SessionDB.open({ path: stalePath });
      db.createSession("s", "cli");
      db.appendMessage("s", { role: "user", content: "prune the docker images" });
      db.setMeta("fts_stale:messages_fts", "test");
    }
    await using stale = await openStore(stalePath, { readonly: true });
    const fresh = await getJson("/api/search?q=docker", handlerFor({}, stale));
    assert.deepEqual(fresh.body.hits.map((hit: { snippet_parts: string[] }) => hit.snippet_parts), [
      ["prune the ", "docker", " images"],
    ]);
    // A v6 file has no trigram index: a CJK word of three or more characters is read by substring.
    await using old = await openStore(copyFixture("hermes-v6.db"), { readonly: true });
    const cjk = await getJson(
      `/api/search?q=${encodeURIComponent("记忆断裂")}&limit=1`,
      handlerFor({}, old),
    );
    assert.ok(
      cjk.body.hits[0].snippet_parts.includes("记忆断裂"),
      JSON.stringify(cjk.body.hits[0]),
    );
  });

  test("GET /api/search never fails on hostile text and bounds the query length", async () => {
    for (const q of ['"unbalanced (', "NEAR(", "*", "AND", "\u0000", "<script>", "🚀", " "]) {
      const response = await getJson(`/api/search?q=${encodeURIComponent(q)}`);
      assert.equal(response.status, 200, JSON.stringify(q));
      assert.ok(Array.isArray(response.body.hits));
    }
    const long = await getJson(`/api/search?q=${"a".repeat(1001)}`);
    assert.equal(long.status, 400);
    assert.match(long.body.error.message, /q is too long/);
  });

  test("GET /api/resolve names the session of an exact id or a unique prefix, as the CLI does, else null", async () => {
    const exact = await getJson(`/api/resolve?id=${V11.toolPaperclip}`);
    assert.equal(exact.status, 200);
    // A tool session, which no listing shows: its preview tells it apart, having no title.
    assert.deepEqual(exact.body, {
      id: V11.toolPaperclip,
      session: {
        id: V11.toolPaperclip,
        title: null,
        preview: "Paperclip task #318: verify the docker image for chatsvc bui...",
        source: "tool",
        started_at: 1776848709.605959,
      },
    });
    const prefix = await getJson("/api/resolve?id=20260422_0905");
    assert.equal(prefix.body.session.id, V11.toolPaperclip);
    const titled = await getJson(`/api/resolve?id=${V11.compressionTip}`);
    assert.deepEqual([titled.body.session.title, titled.body.session.preview], [
      "my project #3",
      "",
    ]);
    // More than one session starts so, none does, or the % is taken literally, as by the CLI.
    for (const id of ["20260422_09", "docker", "2026042_%"]) {
      const none = await getJson(`/api/resolve?id=${encodeURIComponent(id)}`);
      assert.deepEqual([none.status, none.body], [200, { id, session: null }], id);
    }
    for (const id of ["", "x".repeat(10_001)]) {
      const bad = await getJson(`/api/resolve?id=${id}`);
      assert.equal(bad.status, 400);
      assert.match(
        bad.body.error.message,
        /^id must be 1 to 10000 characters: current value is \d+$/,
      );
    }
    const post = await get("/api/resolve?id=x", { method: "POST" });
    assert.deepEqual([post.status, post.headers.get("allow")], [405, "GET, HEAD"]);
  });

  test("GET /api/sessions/:id returns the transcript and the lineage tree", async () => {
    const { status, body } = await getJson(`/api/sessions/${V11.compressionMid}`);
    assert.equal(status, 200);
    assert.equal(body.session.id, V11.compressionMid);
    assert.equal(body.messages.length, body.session.message_count);
    assert.equal(body.lineage.id, V11.compressionRoot);
    const relations = JSON.stringify(body.lineage);
    assert.match(relations, new RegExp(V11.compressionTip));
    assert.match(relations, /"relation":"compression"/);
    assert.match(relations, new RegExp(V11.delegateChild));
  });

  test("GET /api/sessions/:id leaves out the rows a newer Hermes rewound, compacted or hides", async () => {
    const file = copyFixture("hermes-v21.db");
    {
      using raw = await rawOpen(file);
      raw.exec(`ALTER TABLE messages ADD COLUMN display_kind TEXT;
        UPDATE messages SET display_kind = 'hidden' WHERE id = 2`);
    }
    await using newer = await openStore(file, { readonly: true });
    const ids = async (id: string) =>
      (await getJson(`/api/sessions/${id}`, handlerFor({}, newer))).body.messages
        .map((m: { id: number }) => m.id);
    assert.deepEqual(await ids("20260501_090000_live01"), [1, 3, 4]);
    assert.deepEqual(await ids("20260501_110000_rew01"), [7, 8]);
    assert.deepEqual(await ids("20260501_120000_comp01"), [14, 15]);
  });

  test("GET /api/sessions/:id?after&shown sends only the new messages while the drawn ones stay, else all", async () => {
    const file = copyFixture("hermes-v21.db");
    await using newer = await openStore(file, { readonly: true });
    const h = handlerFor({}, newer);
    const id = "20260501_090000_live01";
    const ids = (body: { messages: { id: number }[] }) => body.messages.map((m) => m.id);
    const first = (await getJson(`/api/sessions/${id}`, h)).body;
    assert.deepEqual([ids(first), first.appended, first.newest], [[1, 2, 3, 4], false, 4]);
    const since = (after: number, shown: number) =>
      getJson(`/api/sessions/${id}?after=${after}&shown=${shown}`, h);
    const quiet = (await since(4, 4)).body;
    assert.deepEqual([ids(quiet), quiet.appended, quiet.newest], [[], true, 4]);
    {
      using raw = await rawOpen(file);
      raw.exec(`INSERT INTO messages (session_id, role, content, timestamp)
        VALUES ('${id}', 'user', 'one more, from the gateway', 1777629999)`);
    }
    const more = (await since(4, 4)).body;
    assert.deepEqual([more.appended, more.newest], [true, 16]);
    assert.deepEqual(more.messages.map((m: { content: string }) => m.content), [
      "one more, from the gateway",
    ]);
    {
      // A rewind takes a drawn message back in place: no count of the session moves.
      using raw = await rawOpen(file);
      raw.exec("UPDATE messages SET active = 0 WHERE id = 3");
    }
    const rewound = (await since(more.newest, 5)).body;
    assert.deepEqual([ids(rewound), rewound.appended], [[1, 2, 4, more.newest], false]);
    const bad = await getJson(`/api/sessions/${id}?after=-1&shown=0`, h);
    assert.equal(bad.status, 400);
    assert.match(
      bad.body.error.message,
      /^after must be a whole number .*: current value is "-1"$/,
    );
  });

  test("GET /api/sessions/:id?after&shown&at: the newest message replaced under its id (a backup restored) sends all", async () => {
    // Restored, the file gives the next messages the ids of the lost ones: ids and counts were
    // the same, so the page kept the lost messages' text (appended, with no message).
    const file = v11Copy();
    await using store = await openStore(file, { readonly: true });
    const h = handlerFor({}, store);
    const first = (await getJson(`/api/sessions/${V11.live}`, h)).body;
    assert.equal(typeof first.newest_at, "number");
    const since = (at: number) =>
      getJson(
        `/api/sessions/${V11.live}?after=${first.newest}&shown=${first.messages.length}&at=${at}`,
        h,
      );
    const quiet = (await since(first.newest_at)).body;
    assert.deepEqual([quiet.appended, quiet.messages.length], [true, 0]);
    {
      using raw = await rawOpen(file);
      raw.exec(`UPDATE messages SET content = 'written after the restore',
        timestamp = timestamp + 60 WHERE id = ${first.newest}`);
    }
    const restored = (await since(first.newest_at)).body;
    assert.equal(restored.appended, false);
    assert.equal(restored.messages.at(-1).content, "written after the restore");
    assert.equal(restored.newest_at, first.newest_at + 60);
    assert.equal(
      (await getJson(`/api/sessions/${V11.live}?after=1&shown=1&at=soon`, h)).status,
      400,
    );
  });

  test("GET /api/session?id= opens the sessions a path cannot name (. and ..), and writes take it too", async () => {
    await using own = await openStore(tempDbPath());
    await own.createSession(".", "cli");
    await own.createSession("..", "cli");
    await own.appendMessages("..", [{ role: "user", content: "up one" }]);
    const h = handlerFor({ allowWrites: true }, own);
    const dot = await getJson("/api/session?id=.", h);
    assert.equal(dot.status, 200);
    assert.equal(dot.body.session.id, ".");
    const up = await getJson("/api/session?id=..", h);
    assert.equal(up.body.session.id, "..");
    assert.equal(up.body.messages[0].content, "up one");
    assert.equal((await getJson("/api/session?id=", h)).status, 400);
    assert.equal((await getJson("/api/session?id=nope", h)).status, 404);
    const csrf = (await getJson("/api/config", h)).body.csrf;
    const headers = { "content-type": "application/json", "x-hermes-csrf": csrf };
    const renamed = await get("/api/session/title?id=..", {
      method: "PUT",
      headers,
      body: JSON.stringify({ title: "Parent folder" }),
    }, h);
    assert.equal(renamed.status, 200);
    assert.equal(await own.getSessionTitle(".."), "Parent folder");
    const deleted = await get("/api/session?id=.", {
      method: "DELETE",
      headers,
      body: JSON.stringify({ confirm: "." }),
    }, h);
    assert.equal(deleted.status, 200);
    assert.equal(await own.getSession("."), undefined);
  });

  test("an API route asked with a method it does not take answers 405 with Allow; an unknown one 404", async () => {
    const cases: Array<[string, string, string]> = [
      ["POST", "/api/sessions", "GET, HEAD"],
      ["DELETE", "/api/search?q=x", "GET, HEAD"],
      ["POST", `/api/sessions/${HOSTILE_ID}`, "GET, HEAD, DELETE"],
      ["GET", `/api/sessions/${HOSTILE_ID}/title`, "PUT"],
      ["PATCH", `/api/session?id=${HOSTILE_ID}`, "GET, HEAD, DELETE"],
    ];
    for (const [method, url, allow] of cases) {
      const response = await get(url, { method });
      assert.equal(response.status, 405, `${method} ${url}`);
      assert.equal(response.headers.get("allow"), allow, `${method} ${url}`);
      assert.match(
        (await response.json()).error.message,
        new RegExp(`^Method ${method} is not allowed`),
      );
    }
    assert.equal((await get("/api/nope", { method: "POST" })).status, 404);
  });

  test("GET /api/sessions/:id answers 404 JSON for an unknown id", async () => {
    const { status, body } = await getJson("/api/sessions/nope%2F..%2Fx");
    assert.equal(status, 404);
    assert.match(body.error.message, /not found/);
  });

  test("GET /api/usage groups by day, model and source, and rejects a bad grouping", async () => {
    const days = await getJson("/api/usage?by=day&since=all");
    assert.equal(days.status, 200);
    assert.ok(days.body.rows.some((r: { key: string }) => r.key === "2026-04-20"));
    const models = await getJson("/api/usage?by=model&since=all");
    assert.ok(
      models.body.rows.some((r: { key: string }) => r.key === "anthropic/claude-sonnet-4.5"),
    );
    const bad = await getJson("/api/usage?by=hour");
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /by must be one of/);
  });

  test("GET /api/usage counts the days of the tz it is given, and rejects an unknown zone", async () => {
    const keys = (body: { rows: { key: string; sessions: number }[] }) =>
      body.rows.slice(0, 2).map((r) => `${r.key} ${r.sessions}`);
    const utc = await getJson("/api/usage?by=day&since=all");
    assert.equal(utc.body.time_zone, "UTC");
    assert.deepEqual(keys(utc.body), ["2025-12-21 6", "2026-04-20 3"]);
    const shanghai = await getJson("/api/usage?by=day&since=all&tz=Asia%2FShanghai");
    assert.equal(shanghai.status, 200);
    assert.equal(shanghai.body.time_zone, "Asia/Shanghai");
    assert.deepEqual(keys(shanghai.body), ["2025-12-21 2", "2025-12-22 4"]);
    // A date in since is that zone's midnight.
    const since = await getJson("/api/usage?by=day&since=2026-04-27&tz=Asia%2FShanghai");
    assert.equal(since.body.since, Date.UTC(2026, 3, 26, 16) / 1000);
    const bad = await getJson("/api/usage?tz=Mars%2FOlympus_Mons");
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /^tz: .*"Mars\/Olympus_Mons"/);
  });

  test("GET /api/export streams one standalone HTML file with hostile text escaped", async () => {
    const response = await get(`/api/export?format=html&session=${HOSTILE_ID}`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/html/);
    assert.match(
      response.headers.get("content-disposition")!,
      /attachment; filename="20260430_120000_hostile\.html"/,
    );
    const html = await response.text();
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /<script|<img src=x|<iframe|javascript:[^<]*<\/a>/);
    assert.match(html, /&lt;script&gt;window\.__pwned/);
    assert.match(html, /⟦U\+202E⟧/);
    assert.match(html, /<img class="part-image" alt="image_url" src="data:image\/png;base64,/);
    assert.doesNotMatch(html, /src="https:/);
  });

  test("GET /api/export without a source leaves out the tool sessions, as the listing does", async () => {
    await using own = await openStore(tempDbPath());
    await own.createSession("s_cli", "cli");
    await own.createSession("s_tool", "tool");
    const h = handlerFor({}, own);
    const listed = (await getJson("/api/sessions", h)).body.sessions.map((s: { id: string }) =>
      s.id
    );
    const exported = (await (await get("/api/export?format=jsonl", {}, h)).text())
      .trim().split("\n").map((line) => JSON.parse(line).id);
    assert.deepEqual(exported, listed);
    assert.deepEqual(exported, ["s_cli"]);
    const tools = (await (await get("/api/export?format=jsonl&source=tool", {}, h)).text())
      .trim().split("\n").map((line) => JSON.parse(line).id);
    assert.deepEqual(tools, ["s_tool"]);
  });

  test("GET /api/export writes JSON Lines and Markdown, and refuses an unknown format", async () => {
    const jsonl = await (await get("/api/export?format=jsonl&source=telegram")).text();
    const lines = jsonl.trim().split("\n").map((line) => JSON.parse(line));
    assert.ok(lines.length > 0);
    for (const line of lines) assert.equal(line.source, "telegram");
    const md = await (await get(`/api/export?format=md&session=${V11.compressionTip}`)).text();
    assert.match(md, /^# my project #3/);
    assert.equal((await get("/api/export?format=pdf")).status, 400);
    // The listing's date filters select too (and, as the listing, no tool session).
    const all = await store.exportAll();
    const [from, to] = [parseSince("2026-04-21", 0), parseSince("2026-04-23", 0)];
    const wanted = all.filter((s) => s.started_at >= from && s.started_at < to)
      .filter((s) => s.source !== "tool").map((s) => s.id);
    assert.ok(wanted.length > 2 && wanted.length < all.length - 2);
    const ranged = await (await get("/api/export?format=jsonl&from=2026-04-21&to=2026-04-23"))
      .text();
    // Then the session that continues the compressed one among them (its chain's tip), which
    // the listing shows as that chain's row.
    assert.ok(wanted.includes(V11.compressionMid));
    assert.deepEqual(ranged.trim().split("\n").map((line) => JSON.parse(line).id), [
      ...wanted,
      V11.compressionTip,
    ]);
    assert.equal((await get("/api/export?format=jsonl&from=someday")).status, 400);
  });

  test("GET /api/events sends hello, then change when another connection commits", async () => {
    const response = await get("/api/events");
    assert.match(response.headers.get("content-type")!, /^text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const first = decoder.decode((await reader.read()).value);
    assert.match(first, /event: hello/);
    using other = await SessionDB.open({ path });
    other.appendMessage(V11.live, { role: "user", content: "a new message from the gateway" });
    other.close();
    const next = decoder.decode((await reader.read()).value);
    assert.match(next, /event: change/);
    await reader.cancel();
  });

  test("createHandler() answers a repeated read from its cache until the file changes", async () => {
    const own = await openStore(await hostileDb());
    after(() => own.close());
    const h = handlerFor({}, own);
    const url = "/api/search?q=gateway%20cache%20marker";
    const first = await get(url, {}, h);
    assert.equal(first.headers.get("x-hermes-cache"), "miss");
    assert.deepEqual((await first.json()).hits, []);
    const again = await get(url, {}, h);
    assert.equal(again.headers.get("x-hermes-cache"), "hit");
    assert.equal(again.headers.get("content-security-policy") !== null, true);
    using other = await SessionDB.open({ path: own.target });
    other.appendMessage(V11.live, { role: "user", content: "gateway cache marker" });
    other.close();
    const fresh = await get(url, {}, h);
    assert.equal(fresh.headers.get("x-hermes-cache"), "miss");
    assert.equal((await fresh.json()).hits.length, 1, "the new message is found at once");
    const together = await Promise.all([get(url, {}, h), get(url, {}, h)]);
    for (const response of together) assert.equal((await response.json()).hits.length, 1);
  });

  test("createHandler() answers errors as JSON without a stack trace", async () => {
    await using closed = await openStore(await hostileDb());
    const h = handlerFor({}, closed);
    await closed.close();
    const response = await get("/api/sessions", {}, h);
    assert.equal(response.status, 500);
    const text = await response.text();
    assert.deepEqual(JSON.parse(text), { error: { status: 500, message: "Internal error" } });
  });
});

describe("a locked file", () => {
  test("createHandler() keeps answering reads while a write waits for another connection's lock", async () => {
    const path = await hostileDb();
    const own = await openStore(path, { retry: { timeoutMs: 20_000 } });
    after(() => own.close());
    const h = handlerFor({ allowWrites: true }, own);
    const { csrf } = await (await get("/api/config", {}, h)).json();
    const locker = await rawOpen(path);
    locker.exec("BEGIN IMMEDIATE");
    let settled = false;
    const rename = get(`/api/sessions/${V11.compressionTip}/title`, {
      method: "PUT",
      body: JSON.stringify({ title: "renamed after the lock" }),
      headers: { "x-hermes-csrf": csrf },
    }, h).then((response) => {
      settled = true;
      return response;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(settled, false, "the write waits for the lock");
      const started = performance.now();
      const listing = await get("/api/sessions?limit=5", {}, h);
      assert.equal(listing.status, 200);
      assert.ok(performance.now() - started < 1000, "a read is answered while the write waits");
      assert.equal(settled, false);
    } finally {
      locker.exec("ROLLBACK");
      locker.close();
    }
    const done = await rename;
    assert.equal(done.status, 200);
    assert.equal(await own.getSessionTitle(V11.compressionTip), "renamed after the lock");
  });
});

describe("writes", () => {
  test("createHandler() with allowWrites renames only with the CSRF token, and deletes only when confirmed", async () => {
    const own = await openStore(await hostileDb());
    after(() => own.close());
    const h = handlerFor({ allowWrites: true }, own);
    const config = await (await get("/api/config", {}, h)).json();
    assert.equal(config.allowWrites, true);
    const url = `/api/sessions/${V11.compressionTip}/title`;
    const body = JSON.stringify({ title: "renamed from the page" });
    assert.equal((await get(url, { method: "PUT", body }, h)).status, 403);
    assert.equal(
      (await get(url, { method: "PUT", body, headers: { "x-hermes-csrf": "wrong" } }, h)).status,
      403,
    );
    const foreign = await get(url, {
      method: "PUT",
      body,
      headers: { "x-hermes-csrf": config.csrf, origin: "http://evil.example" },
    }, h);
    assert.equal(foreign.status, 403);
    assert.equal(await own.getSessionTitle(V11.compressionTip), "my project #3");
    const ok = await get(
      url,
      { method: "PUT", body, headers: { "x-hermes-csrf": config.csrf } },
      h,
    );
    assert.equal(ok.status, 200);
    assert.equal(await own.getSessionTitle(V11.compressionTip), "renamed from the page");
    const taken = await get(url, {
      method: "PUT",
      body: JSON.stringify({ title: "my project" }),
      headers: { "x-hermes-csrf": config.csrf },
    }, h);
    assert.equal(taken.status, 409);

    const remove = `/api/sessions/${HOSTILE_ID}`;
    const unconfirmed = await get(remove, {
      method: "DELETE",
      body: "{}",
      headers: { "x-hermes-csrf": config.csrf },
    }, h);
    assert.equal(unconfirmed.status, 400);
    assert.ok((await own.getSession(HOSTILE_ID)) !== undefined);
    const confirmed = await get(remove, {
      method: "DELETE",
      body: JSON.stringify({ confirm: HOSTILE_ID }),
      headers: { "x-hermes-csrf": config.csrf },
    }, h);
    assert.equal(confirmed.status, 200);
    assert.equal(await own.getSession(HOSTILE_ID), undefined);
  });

  test("createHandler() behind an HTTPS proxy accepts writes from the --public-url origin and sets a Secure cookie", async () => {
    const own = await openStore(await hostileDb());
    after(() => own.close());
    const h = handlerFor({
      host: "0.0.0.0",
      token: "s3cret-token",
      publicUrl: "https://box.lan/",
      allowWrites: true,
    }, own);
    // The proxy speaks HTTP to the server; the browser sees https://box.lan.
    const base = "http://box.lan";
    const traded = await get(`${base}/?token=s3cret-token`, {}, h);
    assert.match(traded.headers.get("set-cookie")!, /; Secure$/);
    const auth = { cookie: "hermes_state_token_80=s3cret-token" };
    const config = await (await get(`${base}/api/config`, { headers: auth }, h)).json();
    const url = `${base}/api/sessions/${V11.compressionTip}/title`;
    const body = JSON.stringify({ title: "renamed through the proxy" });
    const write = (origin: string) =>
      get(url, {
        method: "PUT",
        body,
        headers: { ...auth, "x-hermes-csrf": config.csrf, origin },
      }, h);
    assert.equal((await write("https://evil.example")).status, 403);
    assert.equal((await write("http://box.lan:8443")).status, 403);
    const ok = await write("https://box.lan");
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(await own.getSessionTitle(V11.compressionTip), "renamed through the proxy");
  });
});

describe("failures and HEAD", () => {
  /** `store` whose reads fail while `broken.now` is true, as a stopped database's do. */
  function breakable(on: SessionStore, broken: { now: boolean }): SessionStore {
    const failure = new Error(
      "connect ECONNREFUSED: postgres://hermes:s3cret-pw@db.lan:5432/state?password=s3cret-pw",
    );
    return new Proxy(on, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) =>
          broken.now && (name === "dataVersion" || name === "listSessionsRich")
            ? Promise.reject(failure)
            : value.apply(target, args);
      },
    });
  }

  test("createHandler() logs one line, password masked, for a request that fails unexpectedly", async () => {
    const lines: string[] = [];
    const broken = { now: true };
    const h = handlerFor({ logError: (line) => lines.push(line) }, breakable(store, broken));
    const response = await get("/api/sessions?limit=5", {}, h);
    assert.equal(response.status, 500);
    assert.equal((await response.json()).error.message, "Internal error");
    assert.equal(lines.length, 1);
    assert.match(
      lines[0],
      /^hermes-state serve: GET \/api\/sessions failed: Error: connect ECONNREFUSED/,
    );
    assert.doesNotMatch(lines[0], /s3cret-pw|\n/);
    assert.match(lines[0], /postgres:\/\/hermes:\*\*\*@db\.lan/);
    // An expected failure (an unknown route) is the client's, not logged.
    assert.equal((await get("/api/nope", {}, h)).status, 404);
    assert.equal(lines.length, 1);
  });

  test("the live stream says failure while the store cannot be read, then recovered", async () => {
    const broken = { now: false };
    const h = handlerFor({ pollMs: 20 }, breakable(store, broken));
    const controller = new AbortController();
    const response = await get("/api/events", { signal: controller.signal }, h);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const until = async (event: string) => {
      while (!text.includes(`event: ${event}`)) text += (await reader.read()).value ?? "";
    };
    await until("hello");
    broken.now = true;
    await until("failure");
    assert.doesNotMatch(text, /s3cret-pw/);
    broken.now = false;
    await until("recovered");
    await reader.cancel();
    controller.abort();
  });

  test("an export that fails midway cuts the connection (no short file that looks whole) and logs one line", async () => {
    const lines: string[] = [];
    const failure = new Error(
      "connect ECONNREFUSED: postgres://hermes:s3cret-pw@db.lan:5432/state",
    );
    // The first session (or its first piece) comes, then the store fails: as a server stopped
    // or a file gone midway. The download reads the store's export in pieces where it can.
    const failing = new Proxy(store, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (name !== "iterateExport" && name !== EXPORT_PIECES) {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return async function* (...args: unknown[]) {
          for await (const record of value.apply(target, args)) {
            yield record;
            await delay(100); // the status line and the first piece leave meanwhile
            throw failure;
          }
        };
      },
    });
    const server = await listen(handlerFor({ logError: (line) => lines.push(line) }, failing), {
      host: "127.0.0.1",
      port: 0,
    });
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/api/export?format=jsonl`);
      assert.equal(response.status, 200);
      await assert.rejects(response.text());
      assert.equal(lines.length, 1);
      assert.match(
        lines[0],
        /^hermes-state serve: GET \/api\/export failed: Error: connect ECONNREFUSED/,
      );
      assert.doesNotMatch(lines[0], /s3cret-pw|\n/);
    } finally {
      await server.close();
    }
  });

  test("HEAD of the page and its assets says the length GET sends, over a socket too", async () => {
    const server = await listen(handle, { host: "127.0.0.1", port: 0 });
    try {
      for (const path of ["/", "/assets/app.js", "/assets/app.css"]) {
        const body = await (await get(path)).arrayBuffer();
        const head = await get(path, { method: "HEAD" });
        assert.equal(head.headers.get("content-length"), String(body.byteLength), path);
        const url = `http://127.0.0.1:${server.port}${path}`;
        const served = await fetch(url, { method: "HEAD" });
        await served.body?.cancel();
        assert.equal(served.headers.get("content-length"), String(body.byteLength), path);
      }
    } finally {
      await server.close();
    }
  });
});
