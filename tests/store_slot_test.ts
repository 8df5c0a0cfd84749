import { test } from "node:test";
import assert from "node:assert/strict";
import {
  copyFileSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { openConnection } from "../lib/sqlite/open.ts";
import { Store } from "../lib/sqlite/store.ts";
import { type Opened, StoreSlot } from "../lib/sqlite/store_slot.ts";
import { fileState } from "../lib/sqlite/file_state.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture, FIXTURES, rawOpen, tempDbPath } from "./_helpers.ts";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import { driverOptionsFor } from "../lib/sqlite/read_access.ts";
import { Writer } from "../lib/sqlite/write.ts";
import { OpenError } from "../lib/core/errors.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { delay } from "./reliability/_runtimes.ts";

/** Opens `path` read-only as a real store, watched by `by`, which gave `was` at the open. */
async function opened(path: string, by: () => string, was: string): Promise<Opened> {
  const { db, writer } = await openConnection({ path, readonly: true });
  return { store: new Store(db, writer, { path, readonly: true }), watched: { by, was } };
}

function messageCount(store: Store): number {
  return Number(store.statement("SELECT count(*) AS n FROM messages").get()?.n);
}

/** A slot over a real file whose "file state" the test moves, and the stores it opened. */
async function slotOver(path: string) {
  let state = "first";
  const stores: Store[] = [];
  const queue: Opened[] = [];
  const view = () => state;
  const first = await opened(path, view, "first");
  stores.push(first.store);
  // Each reopen hands over a store opened beforehand (openConnection is asynchronous).
  for (let i = 0; i < 3; i++) queue.push(await opened(path, view, `state ${i + 1}`));
  const slot = new StoreSlot(first, () => {
    const next = queue.shift()!;
    stores.push(next.store);
    return next;
  });
  return { slot, stores, move: (to: string) => void (state = to) };
}

test("StoreSlot returns the same store while the watched file state holds, and opens it again (closing the old one) when it moves", async () => {
  const { slot, stores, move } = await slotOver(copyFixture("hermes-v11.db"));
  assert.equal(slot.current(), stores[0]);
  assert.equal(slot.current(), stores[0]);
  assert.equal(slot.reopens, 0);
  move("state 1");
  const second = slot.current();
  assert.equal(second, stores[1]);
  assert.equal(slot.reopens, 1);
  assert.throws(() => messageCount(stores[0]), "the replaced store is closed");
  assert.ok(messageCount(second) > 0);
  assert.equal(slot.current(), second, "the new store's own state now holds");
  slot.close();
  move("elsewhere");
  assert.equal(slot.current(), second, "a closed slot never opens the file again");
  assert.throws(() => messageCount(second));
});

test("StoreSlot keeps a store an iteration holds open until the iteration ends, then closes it", async () => {
  const { slot, stores, move } = await slotOver(copyFixture("hermes-v11.db"));
  const iteration = slot.pinned(function* (store) {
    yield messageCount(store);
    yield messageCount(store);
  });
  const total = iteration.next().value;
  move("state 1");
  assert.equal(slot.current(), stores[1]);
  assert.equal(iteration.next().value, total, "the pinned store still reads");
  assert.equal(iteration.next().done, true);
  assert.throws(() => messageCount(stores[0]), "closed once the iteration ended");

  const abandoned = slot.pinned(function* (store) {
    yield messageCount(store);
    yield messageCount(store);
  });
  abandoned.next();
  move("state 2");
  assert.equal(slot.current(), stores[2]);
  assert.ok(messageCount(stores[1]) > 0, "held by the unfinished iteration");
  slot.close();
  assert.throws(() => messageCount(stores[1]), "closed with the slot");
});

test("fileState() holds across reads, and moves with a commit, a -journal beside the file, or a file put in its place", async () => {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path });
    db.createSession("s1", "cli");
  }
  const quiet = fileState(path);
  {
    using reader = await SessionDB.open({ path, readonly: true });
    reader.getSession("s1");
  }
  assert.equal(fileState(path), quiet, "a read changes nothing");
  {
    using db = await SessionDB.open({ path });
    db.createSession("s2", "cli");
  }
  const written = fileState(path);
  assert.notEqual(written, quiet, "a commit moves it");
  writeFileSync(`${path}-journal`, "");
  assert.notEqual(fileState(path), written, "a writer's -journal moves it");
  rmSync(`${path}-journal`);
  assert.equal(fileState(path), written);
  copyFileSync(path, `${path}.copy`);
  utimesSync(`${path}.copy`, statSync(path).atime, statSync(path).mtime);
  renameSync(`${path}.copy`, path);
  assert.notEqual(fileState(path), written, "another file in its place moves it");
  assert.equal(fileState(`${path}.missing`), "missing");
});

test("A read-only SessionDB follows a file put in its place (a restore by mv), and says so while none is there", async () => {
  const path = copyFixture("hermes-v11.db");
  using reader = await SessionDB.open({ path, readonly: true });
  const sessions = reader.sessionCount();
  const marker = reader.dataVersion();
  const restored = `${path}.restored`;
  copyFileSync(path, restored);
  {
    using db = await SessionDB.open({ path: restored });
    db.createSession("put-in-place", "cli");
  }
  renameSync(restored, path);
  await delay(150); // it looks every 100 ms
  assert.equal(reader.getSession("put-in-place")?.source, "cli");
  assert.equal(reader.sessionCount(), sessions + 1);
  assert.notEqual(reader.dataVersion(), marker);
  rmSync(path);
  await delay(150);
  assert.throws(() => reader.sessionCount(), (error: Error) => {
    assert.ok(error instanceof OpenError && error.kind === "not_found", String(error));
    return true;
  });
  copyFileSync(`${FIXTURES}hermes-v11.db`, path);
  await delay(150);
  assert.equal(reader.sessionCount(), sessions, "read again once a file is back");
});

test("A read-only SessionDB reads a file copied over its own (cp of a backup), instead of pages it cached of the old one", async () => {
  const path = copyFixture("hermes-v11.db");
  const other = `${path}.other`;
  copyFileSync(path, other);
  {
    using db = await SessionDB.open({ path: other });
    db.createSession("copied-over", "cli");
    for (let i = 0; i < 200; i++) {
      db.appendMessage("copied-over", { role: "user", content: `line ${i} ${"x".repeat(400)}` });
    }
  }
  using reader = await SessionDB.open({ path, readonly: true });
  const sessions = reader.sessionCount();
  const listed = reader.listSessionsRich({ limit: 1000 }).length; // pages in its cache
  const inode = statSync(path).ino;
  copyFileSync(other, path); // written in place: the same file, other pages
  assert.equal(statSync(path).ino, inode);
  await delay(150); // it looks every 100 ms
  assert.equal(reader.sessionCount(), sessions + 1);
  assert.equal(reader.getMessages("copied-over").length, 200);
  assert.equal(reader.listSessionsRich({ limit: 1000 }).length, listed + 1);
});

test("StoreSlot.read runs again, on the file opened anew, a read without locks that failed as the owner wrote the file under it; other failures are thrown", async () => {
  const path = copyFixture("hermes-v11.db");
  // What the owner's checkpoint leaves: the file with half its messages, its pages laid out anew.
  const after = copyFixture("hermes-v11.db");
  let expected: number[];
  {
    using raw = await rawOpen(after);
    raw.exec(
      "DELETE FROM messages WHERE id % 2 = 0; CREATE TABLE pad (x); " +
        "INSERT INTO pad SELECT randomblob(3000) FROM messages; VACUUM",
    );
    const count = (sql: string) => Number(raw.prepare(sql).get()?.n);
    expected = [
      count("SELECT count(*) AS n FROM sessions"),
      count("SELECT count(*) AS n FROM messages"),
    ];
  }
  // Closed: its pages are all in the file, none left in a -wal.
  assert.ok(!existsSync(`${after}-wal`));
  const open = await loadDriver();
  // Opened as SessionDB opens a file this user may not write: immutable, watched by its state.
  const immutable = (): Opened => {
    const was = fileState(path);
    const db = open(path, driverOptionsFor("immutable"));
    return {
      store: new Store(db, new Writer(db), { path, readonly: true }),
      watched: { by: fileState, was },
    };
  };
  const slot = new StoreSlot(immutable(), immutable);
  let runs = 0;
  const counted = slot.read((store) => {
    // The pages of the messages of the file as it was, cached; then the owner writes it in place.
    const before = messageCount(store);
    if (++runs === 1) writeFileSync(path, readFileSync(after));
    // SQLite takes the mix of cached and new pages for a malformed file.
    const sessions = Number(store.statement("SELECT count(*) AS n FROM sessions").get()?.n);
    return [sessions, before];
  });
  assert.equal(runs, 2, "run again once");
  assert.deepEqual(counted, expected, "on the file as it is now");
  assert.equal(slot.reopens, 1);
  // A failure while the file stays as it was is the read's own: thrown, not run again.
  let tries = 0;
  assert.throws(() =>
    slot.read(() => {
      tries++;
      throw new RangeError("the read's own");
    }), /the read's own/);
  assert.equal(tries, 1);
  slot.close();
});

test("a read-only SessionDB whose reopen fails for a moment while the file moves opens it again, instead of failing the read", async () => {
  const path = copyFixture("hermes-v11.db");
  const real = await loadDriver();
  let opens = 0;
  // The second open (the reopen after the file moved) lands where the owner's -wal is made and its
  // -shm not yet: the driver fails it, and the owner writes on meanwhile (the file moves again).
  const openDriver: typeof real = (file, options) => {
    if (++opens === 2) {
      const later = new Date(Date.now() + 60_000);
      utimesSync(path, later, later);
      throw new SqliteError("unable to open database file", 14);
    }
    return real(file, options);
  };
  using db = await SessionDB.open({ path, readonly: true, openDriver });
  const count = db.messageCount();
  // The owner writes: the store opens the file again at the next call (once it looks).
  const moved = new Date(Date.now() + 30_000);
  utimesSync(path, moved, moved);
  await delay(250);
  assert.equal(db.messageCount(), count);
  assert.equal(opens, 3, "the failed reopen was tried again");
});
