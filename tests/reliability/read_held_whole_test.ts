/**
 * Reads of a file another process holds whole (a Python process: in WAL
 * mode in `locking_mode = EXCLUSIVE`, as a connection recovering a crashed
 * writer's WAL holds it; in a rollback-journal file, as a writer writing its
 * pages holds it) wait as writes do, up to the store's `retry.timeoutMs`,
 * and then fail with the one error a lock given up on is
 * (`WriteBusyError`, its action `"read"`), which the CLI names as the lock
 * line. A read that waited returns the rows as the file holds them once it
 * is let go. The file is taken and let go at set points (before a call, at
 * the store's first pause), never after a timed wait.
 *
 * A WAL file cannot be taken whole while a store has it open (every
 * connection to it holds a shared lock on it): only the open meets that
 * hold; a rollback-journal file is taken between any two reads.
 */
import { afterEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openSqliteStore } from "../../lib/sqlite/sqlite_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { WriteBusyError } from "../../lib/sqlite/write_busy_error.ts";
import { readExportPieces } from "../../lib/core/export_pieces.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { tempDbPath } from "../_helpers.ts";
import { toRollbackJournal, WholeFileHolder } from "../_held_whole_child.ts";

/** A give-up time far below any test's timeout, far above one attempt. */
const SHORT_MS = 150;
/** A wait no test reaches: the holder lets go at the store's first pause. */
const LONG_MS = 120_000;

/** A state.db of sessions `s1` (two messages, a child `s2`) and `s3`, and a meta key. */
async function stateDb(): Promise<string> {
  const path = tempDbPath();
  const db = await SessionDB.open({ path });
  try {
    db.createSession("s1", "cli", { model: "m1" });
    db.appendMessage("s1", { role: "user", content: "hello held world" });
    db.appendMessage("s1", { role: "assistant", content: "an answer" });
    db.createSession("s2", "cli", { parentSessionId: "s1" });
    db.createSession("s3", "telegram");
    db.setMeta("key", "value");
  } finally {
    db.close();
  }
  return path;
}

/** Every read a user reaches (the CLI's read commands and the web browser call these). */
const READS: ReadonlyArray<readonly [string, (store: SessionStore) => Promise<unknown>]> = [
  ["getSession", (store) => store.getSession("s1")],
  ["getMeta", (store) => store.getMeta("key")],
  ["listSessionsRich", (store) => store.listSessionsRich()],
  ["sessionCount", (store) => store.sessionCount()],
  ["getMessages", (store) => store.getMessages("s1")],
  ["searchMessages", (store) => store.searchMessages("hello")],
  ["getAncestors", (store) => store.getAncestors("s2")],
  ["usageReport", (store) => store.usageReport()],
  ["inspect", (store) => store.inspect()],
  ["pruneCandidates", (store) => store.pruneCandidates({ olderThanDays: 0 })],
  ["dataVersion", (store) => store.dataVersion()],
  ["exportSession", (store) => store.exportSession("s1")],
  ["iterateExport", async (store) => {
    const ids = [];
    for await (const record of store.iterateExport()) ids.push(record.id);
    return ids;
  }],
  ["export pieces", async (store) => {
    const pieces = [];
    for await (const piece of readExportPieces(store, { filter: {} }, { chunk: 1 })) {
      pieces.push(piece);
    }
    return pieces.length;
  }],
];

/** Asserts that `error` is a read given up on after `timeoutMs`. */
function readGivenUp(error: unknown, timeoutMs: number): true {
  assert.ok(error instanceof WriteBusyError, String(error));
  assert.equal(error.action, "read");
  assert.equal(error.codeName, "SQLITE_BUSY");
  assert.ok((error.waitedMs ?? 0) >= timeoutMs, `waited ${error.waitedMs} ms`);
  assert.match(error.message, /^Cannot read: /);
  return true;
}

let holder: WholeFileHolder | undefined;
afterEach(async () => {
  await holder?.stop();
  holder = undefined;
});

describe("a rollback-journal file a writer holds whole between two reads", () => {
  test("every read of a read-only store waits retry.timeoutMs, then fails with WriteBusyError", async () => {
    const path = await stateDb();
    await toRollbackJournal(path);
    await using store = await openSqliteStore(path, {
      readonly: true,
      retry: { timeoutMs: SHORT_MS },
    });
    holder = await WholeFileHolder.start(path, "journal");
    for (const [name, read] of READS) {
      holder.take();
      await assert.rejects(read(store), (error) => readGivenUp(error, SHORT_MS), name);
      holder.release();
    }
    // Let go, the same store reads again.
    assert.equal(await store.getMeta("key"), "value");
  });

  test("every read that waited returns what the writer committed as it let go", async () => {
    const path = await stateDb();
    await toRollbackJournal(path);
    const pauses: string[] = [];
    let reading = "";
    const letGo = () => {
      pauses.push(reading);
      holder!.release({ commit: true });
      return Promise.resolve();
    };
    await using store = await openSqliteStore(path, {
      readonly: true,
      retry: { timeoutMs: LONG_MS, sleep: letGo },
    });
    holder = await WholeFileHolder.start(path, "journal");
    const answers = new Map<string, unknown>();
    for (const [name, read] of READS) {
      reading = name;
      holder.take();
      answers.set(name, await read(store));
    }
    // Each read met the held file, and waited.
    assert.deepEqual(pauses, READS.map(([name]) => name));
    assert.equal((answers.get("getSession") as { title: string }).title, "held by python");
    assert.equal(answers.get("getMeta"), "value");
    assert.deepEqual(
      (answers.get("listSessionsRich") as { id: string; title: string | null }[])
        .map((row) => [row.id, row.title]).sort(),
      // s2, a child, is listed under its parent.
      [["s1", "held by python"], ["s3", null]],
    );
    assert.equal(answers.get("sessionCount"), 3);
    assert.deepEqual(
      (answers.get("getMessages") as { content: string }[]).map((row) => row.content),
      ["hello held world", "an answer"],
    );
    assert.deepEqual(
      (answers.get("searchMessages") as { session_id: string }[]).map((hit) => hit.session_id),
      ["s1"],
    );
    assert.deepEqual(
      (answers.get("getAncestors") as { id: string }[]).map((row) => row.id),
      ["s2", "s1"],
    );
    assert.equal(
      (answers.get("exportSession") as { title: string; messages: unknown[] }).title,
      "held by python",
    );
    assert.deepEqual([...(answers.get("iterateExport") as string[])].sort(), ["s1", "s2", "s3"]);
    // Three session rows and two messages, one a piece.
    assert.equal(answers.get("export pieces"), 5);
  });

  test("an export taken part-way, between two sessions, waits and carries every session", async () => {
    const path = await stateDb();
    await toRollbackJournal(path);
    let pauses = 0;
    await using store = await openSqliteStore(path, {
      readonly: true,
      retry: {
        timeoutMs: LONG_MS,
        sleep: () => (pauses++, holder!.release({ commit: true }), Promise.resolve()),
      },
    });
    holder = await WholeFileHolder.start(path, "journal");
    const records = [];
    for await (const record of store.iterateExport()) {
      if (records.length === 0) holder.take();
      records.push(record);
    }
    assert.equal(pauses > 0, true, "the export never met the held file");
    assert.deepEqual(records.map((record) => record.id).sort(), ["s1", "s2", "s3"]);
  });
});

describe("a WAL file held whole (locking_mode = EXCLUSIVE) when a store opens", () => {
  for (const readonly of [true, false]) {
    const kind = readonly ? "a read-only" : "a read-write";
    test(`${kind} open waits retry.timeoutMs, then fails with WriteBusyError`, async () => {
      const path = await stateDb();
      holder = await WholeFileHolder.start(path, "wal");
      holder.take();
      await assert.rejects(
        openSqliteStore(path, { readonly, retry: { timeoutMs: SHORT_MS } }),
        (error) => readGivenUp(error, SHORT_MS),
      );
    });

    test(`${kind} open that waited reads what the holder committed as it let go`, async () => {
      const path = await stateDb();
      holder = await WholeFileHolder.start(path, "wal");
      holder.take();
      let pauses = 0;
      await using store = await openSqliteStore(path, {
        readonly,
        retry: {
          timeoutMs: LONG_MS,
          sleep: () => (pauses++, holder!.release({ commit: true }), Promise.resolve()),
        },
      });
      assert.equal(pauses > 0, true, "the open never met the held file");
      assert.equal((await store.getSession("s1"))?.title, "held by python");
      assert.deepEqual((await store.getMessages("s1")).map((row) => row.content), [
        "hello held world",
        "an answer",
      ]);
    });
  }

  test("no other process can take it whole while a store has it open", async () => {
    const path = await stateDb();
    await using store = await openSqliteStore(path, { readonly: true });
    assert.equal(await store.getMeta("key"), "value");
    holder = await WholeFileHolder.start(path, "wal");
    // The store's shared lock keeps the holder out: it gives up (its busy timeout), refused.
    assert.throws(() => holder!.take(), /database is locked/);
    assert.equal(await store.getMeta("key"), "value");
  });
});
