/**
 * An export in pieces keeps the sessions `keep` accepts (`readExportPieces`): asked of each
 * session's row as its first piece would carry it (`last_active` when a list is exported),
 * before its messages are read; the pieces are those of the export without it, less the
 * sessions it refused, on a SQLite file (held or not), on PostgreSQL, and on a store without a
 * reader of its own (its whole records cut in pieces).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDbPath } from "./_helpers.ts";
import { freshSchema, openPgStore, PG_SKIP } from "./store/_pg.ts";
import { openStore } from "../lib/open_store.ts";
import type { SessionStore } from "../lib/core/session_store.ts";
import type { SessionRow } from "../lib/core/types.ts";
import {
  EXPORT_PIECES,
  type ExportPiece,
  type ExportPiecesOptions,
  type ExportSelection,
  readExportPieces,
} from "../lib/core/export_pieces.ts";

/** Sessions of two sources, 3 messages each, written in this order (listed the other way). */
const SESSIONS = [["a", "cli"], ["b", "telegram"], ["c", "cli"], ["d", "telegram"]] as const;

async function fill(store: SessionStore): Promise<void> {
  for (const [id, source] of SESSIONS) {
    await store.createSession(id, source);
    await store.appendMessages(id, [
      { role: "user", content: `${id} 1` },
      { role: "assistant", content: `${id} 2` },
      { role: "user", content: `${id} 3` },
    ]);
  }
}

/** Every piece of an export. */
async function piecesOf(
  store: SessionStore,
  selection: ExportSelection,
  options: ExportPiecesOptions,
): Promise<ExportPiece[]> {
  const pieces: ExportPiece[] = [];
  for await (const piece of readExportPieces(store, selection, options)) pieces.push(piece);
  return pieces;
}

/** `pieces` without the sessions `keep` refuses, nor their messages. */
function keptOf(pieces: readonly ExportPiece[], keep: (row: SessionRow) => boolean) {
  let keeping = true;
  return pieces.filter((piece) => "session" in piece ? keeping = keep(piece.session) : keeping);
}

/** `store` without a reader of its own: its export is read as whole records. */
function withoutReader(store: SessionStore): SessionStore {
  return new Proxy(store, {
    get(target, name) {
      if (name === EXPORT_PIECES) return undefined;
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** An engine: a store on a fresh place, and how to open another connection to that place. */
interface Engine {
  readonly name: string;
  readonly skip: string | false;
  open(): Promise<{ store: SessionStore; another(): Promise<SessionStore> }>;
}

const ENGINES: readonly Engine[] = [{
  name: "a SQLite file",
  skip: false,
  async open() {
    const path = tempDbPath();
    return { store: await openStore(path), another: () => openStore(path, { readonly: true }) };
  },
}, {
  name: "PostgreSQL",
  skip: PG_SKIP,
  async open() {
    const schema = freshSchema();
    return { store: await openPgStore({}, schema), another: () => openPgStore({}, schema) };
  },
}];

/** Whether another connection sees session `id`: nothing was left held or uncommitted. */
async function seenElsewhere(another: () => Promise<SessionStore>, id: string): Promise<boolean> {
  await using other = await another();
  return (await other.getSession(id)) !== undefined;
}

for (const engine of ENGINES) {
  describe(`readExportPieces() with keep, on ${engine.name}`, { skip: engine.skip }, () => {
    for (const reader of ["its own reader", "whole records"] as const) {
      for (const holdSnapshot of [false, true]) {
        test(`readExportPieces() leaves out what keep refuses (${reader}, held: ${holdSnapshot})`, async () => {
          const { store: opened, another } = await engine.open();
          await using _closed = opened;
          await fill(opened);
          const store = reader === "whole records" ? withoutReader(opened) : opened;
          const asked: SessionRow[] = [];
          const rule = (row: SessionRow) => row.source === "cli" && row.id !== "c";
          const keep = (row: SessionRow) => {
            asked.push(row);
            return rule(row);
          };
          for (const selection of [{ filter: {} }, { filter: { source: "cli" } }]) {
            asked.length = 0;
            const all = await piecesOf(store, selection, { chunk: 2, holdSnapshot });
            const kept = await piecesOf(store, selection, { chunk: 2, holdSnapshot, keep });
            assert.deepEqual(kept, keptOf(all, rule));
            assert.deepEqual(kept.flatMap((piece) => "session" in piece ? piece.session.id : []), [
              "a",
            ]);
            // Asked of each listed row, as its piece carries it (with last_active).
            const rows = all.flatMap((piece) => "session" in piece ? piece.session : []);
            assert.deepEqual(asked, rows);
            assert.ok(asked.every((row) => "last_active" in row));
          }
          for (const id of ["a", "c", "nope"]) {
            const all = await piecesOf(store, { id }, { chunk: 2, holdSnapshot });
            const kept = await piecesOf(store, { id }, { chunk: 2, holdSnapshot, keep });
            assert.deepEqual(kept, id === "a" ? all : []);
          }
          // Nothing held after a refused session: the store writes, another connection sees it.
          await opened.createSession("e", "cli");
          assert.ok(await seenElsewhere(another, "e"));
        });
      }
    }

    test("readExportPieces() ends with what keep throws, and the store reads on", async () => {
      const { store, another } = await engine.open();
      await using _closed = store;
      await fill(store);
      for (const holdSnapshot of [false, true]) {
        const failure = new Error("no");
        const keep = (row: SessionRow) => {
          if (row.id === "b") throw failure;
          return true;
        };
        await assert.rejects(piecesOf(store, { filter: {} }, { holdSnapshot, keep }), failure);
        await store.createSession(`after-${holdSnapshot}`, "cli");
        assert.ok(await seenElsewhere(another, `after-${holdSnapshot}`));
        const pieces = await piecesOf(store, { filter: {} }, { holdSnapshot });
        assert.equal(pieces.filter((piece) => "session" in piece).length, 5 + Number(holdSnapshot));
      }
    });
  });
}
