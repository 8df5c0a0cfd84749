/**
 * The web API's rename and its export of a set of sessions, over HTTP on a real store: the file
 * name of a set's export is made as a single session's is (a source beyond ASCII kept in
 * `filename*`), and a rename answers 400 for a title no session may hold, 409 for one another
 * session holds, and 404 for a session deleted (by the CLI, another connection) while it ran.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFixture } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { serve, type Served } from "./_served.ts";

const NAMED = "20260503_090000_named";
const DOOMED = "20260503_100000_doomed";
/** A source beyond ASCII: letters an ASCII file name loses. */
const SOURCE = "日本";

let path: string;
let served: Served;
/** Another connection to the same file: the CLI's. */
let cli: SessionStore;
/** The session the CLI deletes as soon as the server has found it, if any. */
let deleteOnceFound: string | undefined;

before(async () => {
  path = copyFixture("hermes-v11.db");
  cli = await openStore(path);
  await cli.createSession(NAMED, SOURCE);
  await cli.setSessionTitle(NAMED, "a title in use");
  await cli.appendMessages(NAMED, [{ role: "user", content: "words" }]);
  await cli.createSession(DOOMED, "cli");
  served = await serve(path, { allowWrites: true }, (handler) => handler);
  // The server's store, with its lookup of a session followed by the CLI's delete of it: the
  // rename's write then finds no row.
  const found = served.store.getSession.bind(served.store);
  served.store.getSession = async (id: string) => {
    const row = await found(id);
    if (id === deleteOnceFound) {
      deleteOnceFound = undefined;
      await cli.deleteSession(id);
    }
    return row;
  };
});

after(async () => {
  await served?.close();
  await cli?.close();
});

/** The page's CSRF token. */
async function csrf(): Promise<string> {
  return (await (await fetch(`${served.origin}/api/config`)).json()).csrf;
}

/** Renames `id` to `title` as the page does; the status and the error's message. */
async function rename(id: string, title: string): Promise<[number, string]> {
  const response = await fetch(
    `${served.origin}/api/session/title?id=${encodeURIComponent(id)}`,
    {
      method: "PUT",
      headers: { "content-type": "application/json", "x-hermes-csrf": await csrf() },
      body: JSON.stringify({ title }),
    },
  );
  const body = await response.json();
  return [response.status, body.error?.message ?? ""];
}

describe("the web API's rename and export names", () => {
  test("an export of a source's sessions keeps the source's letters in its file name", async () => {
    const response = await fetch(
      `${served.origin}/api/export?format=md&source=${encodeURIComponent(SOURCE)}`,
    );
    await response.body?.cancel();
    assert.equal(response.status, 200);
    assert.equal(
      response.headers.get("content-disposition"),
      `attachment; filename="sessions-__.md"; filename*=UTF-8''sessions-${
        encodeURIComponent(SOURCE)
      }.md`,
    );
  });

  test("an export of every session is named sessions", async () => {
    const response = await fetch(`${served.origin}/api/export?format=jsonl`);
    await response.body?.cancel();
    assert.equal(
      response.headers.get("content-disposition"),
      'attachment; filename="sessions.jsonl"',
    );
  });

  test("a rename answers 400 for a title too long and 409 for one in use", async () => {
    const [long, why] = await rename(DOOMED, "t".repeat(500));
    assert.equal(long, 400);
    assert.match(why, /Title too long/);
    const [taken, whose] = await rename(DOOMED, "a title in use");
    assert.equal(taken, 409);
    assert.match(whose, new RegExp(NAMED));
  });

  test("a rename of a session the CLI deletes meanwhile answers 404, not a renamed session", async () => {
    deleteOnceFound = DOOMED;
    const [status, why] = await rename(DOOMED, "renamed too late");
    assert.equal(status, 404);
    assert.match(why, /not found/);
    assert.equal(await cli.getSession(DOOMED), undefined);
  });
});
