// Field notes of the web server: what exploratory requests against a running server found,
// each kept as a test of the handler, called without a socket, on a copy of the v11 fixture.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { createHandler, DATA_VERSION_HEADER } from "../../lib/web/handler.ts";
import { copyFixture } from "../_helpers.ts";
import { listen } from "../../lib/web/listen.ts";
import { rawRequest } from "./_serve_hardening_raw.ts";

const ORIGIN = "http://127.0.0.1:8787";
const store = await openStore(copyFixture("hermes-v11.db"));
after(() => store.close());
const handle = createHandler(store, { pollMs: 50 });

function request(path: string, init: RequestInit = {}): Promise<Response> {
  return handle(new Request(ORIGIN + path, init));
}

describe("field notes: HEAD says what GET says", () => {
  test("HEAD of a cached read route carries GET's change marker and length", async () => {
    for (const path of ["/api/sessions?limit=2", "/api/sources", "/api/usage?by=model"]) {
      const get = await request(path);
      const body = new Uint8Array(await get.arrayBuffer());
      const head = await request(path, { method: "HEAD" });
      assert.equal(head.status, 200, path);
      assert.equal(await head.text(), "", `${path}: a HEAD sent a body`);
      assert.equal(head.headers.get("content-type"), get.headers.get("content-type"), path);
      assert.equal(head.headers.get("content-length"), String(body.byteLength), path);
      assert.equal(
        head.headers.get(DATA_VERSION_HEADER),
        get.headers.get(DATA_VERSION_HEADER),
        `${path}: the HEAD answer has no ${DATA_VERSION_HEADER}`,
      );
      assert.notEqual(head.headers.get(DATA_VERSION_HEADER), null, path);
    }
  });

  test("HEAD of a missing session is GET's 404 without the body", async () => {
    const head = await request("/api/sessions/no-such-session", { method: "HEAD" });
    assert.equal(head.status, 404);
    assert.equal(await head.text(), "");
    assert.match(head.headers.get("content-type")!, /^application\/json/);
  });
});

describe("field notes: the page's 405 and its revalidation", () => {
  test("a 405 of the page or an asset names the methods it takes in Allow", async () => {
    for (const [method, path] of [["POST", "/"], ["DELETE", "/"], ["PUT", "/assets/app.js"]]) {
      const response = await request(path, { method });
      assert.equal(response.status, 405, `${method} ${path}`);
      assert.equal(response.headers.get("allow"), "GET, HEAD", `${method} ${path}`);
      assert.equal((await response.json()).error.status, 405);
    }
  });

  test("If-None-Match as a list, weak or * answers 304; another tag answers 200", async () => {
    const first = await request("/assets/app.js");
    await first.arrayBuffer();
    const etag = first.headers.get("etag")!;
    assert.match(etag, /^"/);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, `"a",W/${etag} `, "*"]) {
      const again = await request("/assets/app.js", { headers: { "if-none-match": header } });
      assert.equal(again.status, 304, `If-None-Match: ${header}`);
      assert.equal(await again.text(), "");
    }
    const other = await request("/assets/app.js", { headers: { "if-none-match": '"other"' } });
    assert.equal(other.status, 200);
    await other.arrayBuffer();
  });
});

describe("field notes: the answer cache and the clock", () => {
  test("a relative period named percent-encoded (%73ince=1h) moves with the clock", async () => {
    let clock = 1_800_000_000;
    const timed = createHandler(store, { pollMs: 50, now: () => clock });
    const since = async (query: string) => {
      const response = await timed(new Request(`${ORIGIN}/api/usage?${query}`));
      assert.equal(response.status, 200, query);
      return (await response.json()).since;
    };
    for (const query of ["since=1h", "%73ince=1h", "by=day&%73%69nce=2h"]) {
      const first = await since(query);
      clock += 7200;
      assert.equal(
        await since(query),
        first + 7200,
        `${query}: a cached answer kept the old period`,
      );
    }
  });
});

describe("field notes: a rename's refusals", () => {
  test("a title too long is a 400; a title another session holds stays a 409", async () => {
    const path = copyFixture("hermes-v11.db");
    await using writable = await openStore(path);
    const writes = createHandler(writable, { pollMs: 50, allowWrites: true });
    const config = await (await writes(new Request(`${ORIGIN}/api/config`))).json();
    const [one, two] = (await writable.listSessionsRich({ limit: 2 })).map((row) => row.id);
    const rename = (id: string, title: string) =>
      writes(
        new Request(`${ORIGIN}/api/sessions/${encodeURIComponent(id)}/title`, {
          method: "PUT",
          headers: { "content-type": "application/json", "x-hermes-csrf": config.csrf },
          body: JSON.stringify({ title }),
        }),
      );
    const long = await rename(one, "t".repeat(101));
    assert.deepEqual([long.status, (await long.json()).error.message], [
      400,
      "Title too long (101 chars, max 100)",
    ]);
    assert.equal((await rename(one, "field notes")).status, 200);
    const taken = await rename(two, "field notes");
    assert.equal(taken.status, 409);
    assert.match((await taken.json()).error.message, /already in use/);
  });
});

describe("field notes: a request target in absolute form", () => {
  test("GET http://own-host/path is answered; another host is refused by its own name", async () => {
    const server = await listen(handle, { host: "127.0.0.1", port: 0 });
    try {
      const own = `127.0.0.1:${server.port}`;
      const ask = (target: string) =>
        rawRequest(
          server.port,
          `GET ${target} HTTP/1.1\r\nHost: ${own}\r\nConnection: close\r\n\r\n`,
        );
      const answered = await ask(`http://${own}/api/config`);
      assert.equal(answered.status, 200, answered.body);
      assert.match(answered.body, /"engine"/);
      const other = await ask("http://evil.example/api/config");
      if ("Bun" in globalThis) {
        // Bun's server builds the URL from the Host header (checked) and drops the target's host.
        assert.equal(other.status, 200, other.body);
      } else {
        assert.equal(other.status, 403, other.body);
        assert.match(other.body, /host \\"evil\.example\\"/);
      }
    } finally {
      await server.close();
    }
  });

  test('OPTIONS * (the asterisk form) is asked of /*, not refused for a host "0.0.0.0*"', async () => {
    const server = await listen(handle, { host: "127.0.0.1", port: 0 });
    try {
      const answer = await rawRequest(
        server.port,
        `OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`,
      );
      assert.notEqual(answer.status, 403, answer.body);
      assert.doesNotMatch(answer.body, /0\.0\.0\.0/);
    } finally {
      await server.close();
    }
  });
});

describe("field notes: the listing's filters", () => {
  test("children= takes 1 or 0; anything else is a 400 naming it, not ignored", async () => {
    const all = await request("/api/sessions?limit=200");
    const parents = await request("/api/sessions?children=1&limit=200");
    const zero = await request("/api/sessions?children=0&limit=200");
    assert.equal(parents.status, 200);
    const count = async (response: Response) => (await response.json()).sessions.length;
    const [allCount, parentCount] = [await count(all), await count(parents)];
    assert.ok(parentCount > 0 && parentCount < allCount, `${parentCount} of ${allCount}`);
    assert.equal(await count(zero), allCount);
    for (const value of ["true", "yes", ""]) {
      const refused = await request(`/api/sessions?children=${value}`);
      assert.equal(refused.status, 400, value);
      assert.match(
        (await refused.json()).error.message,
        /^children must be 1 or 0: current value is "/,
      );
    }
  });
});
