/**
 * The library's export on PostgreSQL gives each session as one state of
 * the server, as the SQLite engine gives it from a file: `iterateExport`
 * read its listing first and each page's messages later, so a session
 * written to in between came with the listing's row (`message_count` 2,
 * three messages) and a session deleted in between came as its row with no
 * messages, where the SQLite engine leaves it out; `exportSession` read the
 * row and the messages in two statements.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "../_helpers.ts";
import { openPgStore, pgEngineSkip } from "./_pg.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";

const SKIP = pgEngineSkip(import.meta.url);

/**
 * `big` (2,000 messages: a page of its own, listed first as the newest) and
 * two small sessions of 2 messages, `keep` and `gone`.
 */
async function fill(store: SessionStore): Promise<void> {
  for (const id of ["gone", "keep"]) {
    await store.createSession(id, "cli");
    await store.appendMessages(id, [
      { role: "user", content: `${id} question` },
      { role: "assistant", content: `${id} answer` },
    ]);
  }
  await store.createSession("big", "cli");
  await store.appendMessages(
    "big",
    Array.from({ length: 2000 }, (_, i) => ({ role: "user", content: `line ${i}` })),
  );
}

/** What `iterateExport` gives when `keep` is written to and `gone` deleted after the first session. */
async function exportedMeanwhile(store: SessionStore) {
  const got: { id: string; count: unknown; messages: number }[] = [];
  for await (const session of store.iterateExport()) {
    got.push({ id: session.id, count: session.message_count, messages: session.messages.length });
    if (session.id === "big") {
      await store.appendMessage("keep", { role: "user", content: "a third" });
      await store.deleteSession("gone");
    }
  }
  return got;
}

describe("the library's export gives one state of each session", () => {
  test("on a SQLite file", async () => {
    await using store = await openStore(tempDbPath());
    await fill(store);
    assert.deepEqual(await exportedMeanwhile(store), [
      { id: "big", count: 2000, messages: 2000 },
      { id: "keep", count: 3, messages: 3 },
    ]);
  });

  test("on PostgreSQL, as on the file", { skip: SKIP }, async () => {
    await using store = await openPgStore();
    await fill(store);
    assert.deepEqual(await exportedMeanwhile(store), [
      { id: "big", count: 2000, messages: 2000 },
      { id: "keep", count: 3, messages: 3 },
    ]);
    const one = await store.exportSession("keep");
    assert.equal(one?.message_count, one?.messages.length);
  });
});
