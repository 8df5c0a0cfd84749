/**
 * An export in pieces (`readExportPieces`) of a list of sessions reads each
 * session's row again with the list of its messages, in one snapshot, on
 * PostgreSQL as on a SQLite file: the server's gave the row the listing had
 * read, before a write, beside the messages read after it (a session's
 * `message_count` said 2 where 3 messages followed, a state the server
 * never held), and a session deleted after the listing as its row with no
 * messages, where the SQLite engine leaves it out. Asked to hold each
 * session's snapshot (`holdSnapshot`, as the CLI's `export` asks), the
 * server's reader did not: a session cleared and written again while its
 * chunks were read came as its first old message alone.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "../_helpers.ts";
import { openPgStore, pgEngineSkip } from "./_pg.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { type ExportPiece, readExportPieces } from "../../lib/core/export_pieces.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** Two sessions of two messages each; `late` is written last, so it is listed first. */
async function fill(store: SessionStore): Promise<void> {
  for (const id of ["early", "late"]) {
    await store.createSession(id, "cli");
    await store.appendMessages(id, [
      { role: "user", content: `${id} question` },
      { role: "assistant", content: `${id} answer` },
    ]);
  }
}

/** The sessions of an export's pieces: each row with the contents of the messages that followed it. */
function sessionsOf(pieces: readonly ExportPiece[]) {
  const sessions: { id: string; message_count: unknown; contents: unknown[] }[] = [];
  for (const piece of pieces) {
    if ("session" in piece) {
      const { id, message_count } = piece.session;
      sessions.push({ id, message_count, contents: [] });
    } else sessions.at(-1)!.contents.push(...piece.messages.map((m) => m.content));
  }
  return sessions;
}

/**
 * Reads the export of every session in pieces, running `between` once the
 * first session's row came (the listing has then been read).
 */
async function piecesAround(
  store: SessionStore,
  between: () => Promise<void>,
): Promise<ExportPiece[]> {
  const pieces: ExportPiece[] = [];
  let ran = false;
  for await (const piece of readExportPieces(store, { filter: {} }, { chunk: 1 })) {
    pieces.push(piece);
    if (!ran) {
      ran = true;
      await between();
    }
  }
  return pieces;
}

const stores: SessionStore[] = [];
after(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** A SQLite file and a PostgreSQL schema, each with {@linkcode fill}'s sessions. */
async function engines(): Promise<[string, SessionStore][]> {
  const file = await openStore(tempDbPath());
  const server = await openPgStore();
  stores.push(file, server);
  for (const store of [file, server]) await fill(store);
  return [["sqlite", file], ["postgres", server]];
}

describe("export in pieces after a write that followed its listing", { skip: SKIP }, () => {
  test("a session appended to after the listing: its row and its messages from one state", async () => {
    for (const [engine, store] of await engines()) {
      const pieces = await piecesAround(store, async () => {
        await store.appendMessages("early", [{ role: "user", content: "early follow-up" }]);
      });
      const early = sessionsOf(pieces).find((s) => s.id === "early")!;
      assert.equal(early.contents.length, 3, engine);
      assert.equal(early.message_count, 3, engine);
    }
  });

  test("a session deleted after the listing is left out, as a SQLite file leaves it out", async () => {
    for (const [engine, store] of await engines()) {
      const pieces = await piecesAround(store, async () => {
        assert.equal(await store.deleteSession("early"), true);
      });
      assert.deepEqual(sessionsOf(pieces).map((s) => s.id), ["late"], engine);
    }
  });

  test("held: a session rewritten while its chunks are read comes as it was, as on a SQLite file", async () => {
    for (const [engine, store] of await engines()) {
      const contents: unknown[] = [];
      let rewritten = false;
      const pieces = readExportPieces(store, { id: "early" }, { chunk: 1, holdSnapshot: true });
      for await (const piece of pieces) {
        if ("messages" in piece) contents.push(...piece.messages.map((m) => m.content));
        if ("messages" in piece && !rewritten) {
          rewritten = true;
          // Another connection (a sync pass writing the session again): not this store's.
          await using writer = await openStore(store.target);
          await writer.clearMessages("early");
          await writer.appendMessages("early", [{ role: "user", content: "rewritten" }]);
        }
      }
      assert.deepEqual(contents, ["early question", "early answer"], engine);
      const now = (await store.getMessages("early")).map((m) => m.content);
      assert.deepEqual(now, ["rewritten"], engine);
    }
  });
});
