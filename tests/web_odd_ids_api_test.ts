// The web API with sessions whose ids are unusual (URL syntax, markup, NUL, emoji, ".", "..",
// 5,000 characters, bytes that are not UTF-8): each one the listing shows opens, resolves and
// exports, under a file name a browser saves; one that cannot be opened says why, as JSON.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, rawOpen } from "./_helpers.ts";
import { serve, type Served } from "./web/_served.ts";

const LONG_ID = "L".repeat(5000);
/** Ids a URL or a page could trip on, each with one message. */
const ODD_IDS = [
  "odd/slash",
  "odd?q=1",
  "odd#frag",
  "odd%pct",
  "odd%2Fenc",
  "..",
  ".",
  "odd with spaces",
  "odd+plus",
  "odd&amp=1",
  `odd"dq'sq\`bt`,
  "<script>alert(1)</script>",
  "odd😀中文",
  "a\u0000b",
  LONG_ID,
];

let served: Served;

before(async () => {
  const path = copyFixture("hermes-v11.db");
  using db = await rawOpen(path);
  const session = db.prepare(
    "INSERT INTO sessions (id, source, started_at, title) VALUES (?, 'odd', ?, ?)",
  );
  const message = db.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
  );
  ODD_IDS.forEach((id, i) => {
    session.run(id, 1766300000 + i * 60, `title ${id}`);
    message.run(id, `question ${i}`, 1766300001 + i * 60);
  });
  db.exec(
    "INSERT INTO sessions (id, source, started_at) VALUES (CAST(X'61FF62' AS TEXT), 'bad', 1)",
  );
  served = await serve(path);
});

after(async () => {
  await served?.close();
});

function get(path: string): Promise<Response> {
  return fetch(`${served.origin}${path}`);
}

describe("odd session ids over the API", () => {
  test("the listing shows each, and each opens by the id it shows", async () => {
    const listing = await (await get("/api/sessions?source=odd&limit=200")).json();
    const shown = listing.sessions.map((row: { id: string }) => row.id);
    assert.deepEqual(new Set(shown), new Set(ODD_IDS));
    for (const id of ODD_IDS) {
      const response = await get(`/api/session?id=${encodeURIComponent(id)}`);
      assert.equal(response.status, 200, `opens ${JSON.stringify(id.slice(0, 20))}`);
      const body = await response.json();
      assert.equal(body.session.id, id);
      assert.equal(body.messages.length, 1);
      const resolved = await (await get(`/api/resolve?id=${encodeURIComponent(id)}`)).json();
      assert.equal(resolved.session?.id, id);
    }
  });

  test("each exports whole, under a file name a browser saves", async () => {
    for (const id of ODD_IDS) {
      const response = await get(`/api/export?format=jsonl&session=${encodeURIComponent(id)}`);
      assert.equal(response.status, 200);
      const name = /filename="([^"]*)"/.exec(response.headers.get("content-disposition") ?? "")
        ?.[1];
      assert.ok(name !== undefined);
      assert.match(name, /^[A-Za-z0-9_-][\w.-]{0,99}\.jsonl$/, `file name of ${id.slice(0, 20)}`);
      const record = JSON.parse(await response.text());
      assert.equal(record.id, id);
      assert.equal(record.messages.length, 1);
    }
  });

  test("an id with letters beyond ASCII is also offered under its own name (filename*), UTF-8", async () => {
    const response = await get(`/api/export?format=md&session=${encodeURIComponent("odd😀中文")}`);
    assert.equal(response.status, 200);
    const disposition = response.headers.get("content-disposition") ?? "";
    await response.body?.cancel();
    assert.match(disposition, /^attachment; filename="[\w.-]+\.md"; filename\*=UTF-8''[\w.%-]+$/);
    const given = /filename\*=UTF-8''(.*)$/.exec(disposition)![1];
    assert.equal(decodeURIComponent(given), "odd_中文.md");
    // An ASCII id says it all in filename="…".
    const plain = await get(
      `/api/export?format=md&session=${encodeURIComponent("odd with spaces")}`,
    );
    await plain.body?.cancel();
    assert.equal(
      plain.headers.get("content-disposition"),
      'attachment; filename="odd_with_spaces.md"',
    );
  });

  test('"." and ".." are saved as session.*, not as hidden or refused names', async () => {
    for (const id of [".", ".."]) {
      const response = await get(`/api/export?format=md&session=${encodeURIComponent(id)}`);
      assert.equal(
        response.headers.get("content-disposition"),
        'attachment; filename="session.md"',
      );
      await response.body?.cancel();
    }
  });

  test("an id beyond the API's bound is a 400 naming its length", async () => {
    const response = await get(`/api/session?id=${"x".repeat(10_001)}`);
    assert.equal(response.status, 400);
    assert.match((await response.json()).error.message, /current value is 10001$/);
  });

  test("a listed id that is not UTF-8 is a 404 that says why it cannot be opened", async () => {
    const listing = await (await get("/api/sessions?source=bad")).json();
    const [row] = listing.sessions;
    assert.equal(row.id, "a\uFFFDb");
    for (const path of ["/api/session?id=", "/api/export?session="]) {
      const response = await get(`${path}${encodeURIComponent(row.id)}`);
      assert.equal(response.status, 404);
      assert.match((await response.json()).error.message, /not UTF-8 text/);
    }
    const plain = await get("/api/session?id=nothing-here");
    assert.equal((await plain.json()).error.message, "Session 'nothing-here' not found");
  });
});
