/**
 * The download of the listing's selection (`/api/export` with a source, dates, `children=1`)
 * reads no message of a session it leaves out: which sessions it keeps is asked of each
 * session's row before its messages are read (`keep`, `readExportPieces`). It read every
 * session of the filter, messages and all, then dropped those not kept: a `children=1` export
 * of 11 MB took about as long as the whole 75 MB store.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "../_helpers.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { EXPORT_PIECES, type ExportPiece } from "../../lib/core/export_pieces.ts";
import { createHandler } from "../../lib/web/handler.ts";
import { openPgStore, PG_SKIP } from "../store/_pg.ts";

const PARENT = "20260601_090000_parent";
const CHILD = "20260601_091000_child";
const LONE = "20260601_100000_lone";
/** A subagent's own session: the listing leaves out the `tool` source when no source is asked. */
const TOOL = "20260601_110000_tool";

/** The ids of the sessions whose messages the store's export reader gave, in order. */
const messagesRead: string[] = [];

/**
 * `inner`, its export in pieces watched: each session whose messages it read (a piece of
 * messages after that session's row) is written down in {@linkcode messagesRead}.
 */
function watched(inner: SessionStore): SessionStore {
  return new Proxy(inner, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== EXPORT_PIECES) return typeof value === "function" ? value.bind(target) : value;
      return async function* (...args: unknown[]): AsyncGenerator<ExportPiece> {
        let current = "";
        for await (const piece of value.apply(target, args) as AsyncIterable<ExportPiece>) {
          if ("session" in piece) current = piece.session.id;
          else if (messagesRead.at(-1) !== current) messagesRead.push(current);
          yield piece;
        }
      };
    },
  });
}

/** Writes the sessions: a parent with its child, a lone one, a tool session; 2 messages each. */
async function fill(writer: SessionStore): Promise<void> {
  await writer.createSession(PARENT, "cli");
  await writer.createSession(CHILD, "cli", { parentSessionId: PARENT });
  await writer.createSession(LONE, "cli");
  await writer.createSession(TOOL, "tool");
  for (const id of [PARENT, CHILD, LONE, TOOL]) {
    await writer.appendMessages(id, [
      { role: "user", content: `question of ${id}` },
      { role: "assistant", content: `answer of ${id}` },
    ]);
  }
}

/** The session ids of the JSON Lines export `query` asks for, and those whose messages were read. */
async function exported(
  store: SessionStore,
  query: string,
): Promise<{ sessions: string[]; read: string[] }> {
  messagesRead.length = 0;
  const handle = createHandler(watched(store), { pollMs: 1000 });
  const response = await handle(
    new Request(`http://127.0.0.1:8787/api/export?format=jsonl${query}`),
  );
  assert.equal(response.status, 200, query);
  const lines = (await response.text()).split("\n").filter((line) => line !== "");
  const records = lines.map((line) => JSON.parse(line));
  for (const record of records) assert.equal(record.messages.length, 2, record.id);
  return { sessions: records.map((record) => record.id).sort(), read: [...messagesRead].sort() };
}

const ENGINES = [
  { name: "a SQLite file", open: () => openStore(tempDbPath()), skip: false as const },
  { name: "PostgreSQL", open: () => openPgStore(), skip: PG_SKIP },
];

for (const engine of ENGINES) {
  describe(`the download of a filtered set on ${engine.name} and the sessions it leaves out`, {
    skip: engine.skip,
  }, () => {
    let store: SessionStore;
    before(async () => {
      store = await engine.open();
      await fill(store);
    });
    after(async () => {
      await store?.close();
    });

    test("exportStoreStream() reads no message of a session children=1 leaves out", async () => {
      assert.deepEqual(await exported(store, "&children=1"), {
        sessions: [PARENT],
        read: [PARENT],
      });
      assert.deepEqual(await exported(store, "&source=cli&children=1"), {
        sessions: [PARENT],
        read: [PARENT],
      });
    });

    test("exportStoreStream() reads no message of a tool session when no source is asked", async () => {
      const kept = [CHILD, LONE, PARENT].sort();
      assert.deepEqual(await exported(store, ""), { sessions: kept, read: kept });
      assert.deepEqual(await exported(store, "&source=tool"), { sessions: [TOOL], read: [TOOL] });
    });
  });
}
