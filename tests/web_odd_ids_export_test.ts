// The web server's export downloads when a session id is one no export can carry (bytes that
// are not UTF-8): the server says so at once, as JSON, instead of cutting a download it began;
// an export that leaves that session out is whole.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture, rawOpen } from "./_helpers.ts";
import { serve, type Served } from "./web/_served.ts";

/** The id as the server reads it: U+FFFD where the byte 0xFF is stored. */
const SHOWN_ID = "a\uFFFDb";
const ODD_SOURCE = "odd-source";

let served: Served;

before(async () => {
  const path = copyFixture("hermes-v11.db");
  {
    using db = await rawOpen(path);
    db.exec(
      "INSERT INTO sessions (id, source, started_at, title) " +
        `VALUES (CAST(X'61FF62' AS TEXT), '${ODD_SOURCE}', 1766300000, 'bad id')`,
    );
    db.exec(
      "INSERT INTO messages (session_id, role, content, timestamp) " +
        "VALUES (CAST(X'61FF62' AS TEXT), 'user', 'hello', 1766300001)",
    );
  }
  served = await serve(path);
});

after(async () => {
  await served?.close();
});

/** The error a JSON answer carries. */
async function errorOf(response: Response): Promise<{ status: number; message: string }> {
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  return (await response.json()).error;
}

describe("export of every session when one id is not UTF-8", () => {
  for (const format of ["jsonl", "md", "html"]) {
    test(`${format}: a 409 naming the session, not a cut connection`, async () => {
      const response = await fetch(`${served.origin}/api/export?format=${format}`);
      assert.equal(response.status, 409);
      const error = await errorOf(response);
      assert.equal(error.status, 409);
      assert.match(
        error.message,
        new RegExp(`^Cannot export session "${SHOWN_ID}": its id is not valid UTF-8 text`),
      );
    });
  }

  test("its source alone is refused the same way, and HEAD says so too", async () => {
    const only = await fetch(`${served.origin}/api/export?format=jsonl&source=${ODD_SOURCE}`);
    assert.equal(only.status, 409);
    await only.body?.cancel();
    const head = await fetch(`${served.origin}/api/export?format=html`, { method: "HEAD" });
    assert.equal(head.status, 409);
  });
});

describe("an export that leaves that session out", () => {
  test("is whole: every session of the source, the first one included", async () => {
    const wanted: string[] = [];
    for await (const record of served.store.iterateExport({ source: "cli" })) {
      wanted.push(record.id);
    }
    assert.ok(wanted.length > 1, "the fixture has cli sessions");
    const response = await fetch(`${served.origin}/api/export?format=jsonl&source=cli`);
    assert.equal(response.status, 200);
    const lines = (await response.text()).trimEnd().split("\n");
    assert.deepEqual(lines.map((line) => JSON.parse(line).id), wanted);
  });

  test("HEAD of it is a 200 with no body, and the server answers on after it", async () => {
    for (let i = 0; i < 3; i++) {
      const head = await fetch(`${served.origin}/api/export?format=md&source=cli`, {
        method: "HEAD",
      });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), "");
    }
    const md = await fetch(`${served.origin}/api/export?format=md&source=cli`);
    assert.equal(md.status, 200);
    assert.match(await md.text(), /^# /);
  });

  test("an empty selection is a whole, empty export", async () => {
    const jsonl = await fetch(`${served.origin}/api/export?format=jsonl&source=nobody`);
    assert.equal(jsonl.status, 200);
    assert.equal(await jsonl.text(), "");
    const html = await fetch(`${served.origin}/api/export?format=html&source=nobody`);
    assert.equal(html.status, 200);
    const page = await html.text();
    assert.match(page, /^<!doctype html>/);
    assert.match(page, /<\/html>\s*$/);
  });
});
