import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { loadDriver } from "../lib/sqlite/driver/load.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";
import { WriteBusyError } from "../lib/sqlite/write_busy_error.ts";
import { CHECKPOINT_EVERY, sleepSync, Writer } from "../lib/sqlite/write.ts";
import { tempDbPath } from "./_helpers.ts";

/** Two connections on one new WAL file (`b` never waits); both are closed when test `t` ends. */
async function pair(t: TestContext): Promise<[SqliteConnection, SqliteConnection]> {
  const open = await loadDriver();
  const path = tempDbPath();
  const a = open(path);
  t.after(() => a.close());
  a.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT)");
  const b = open(path);
  t.after(() => b.close());
  b.exec("PRAGMA busy_timeout = 0");
  return [a, b];
}

function count(db: SqliteConnection): number {
  return Number(db.prepare("SELECT count(*) AS n FROM t").get()!.n);
}

test("Writer.run() commits the work and returns its result", async (t) => {
  const [a, b] = await pair(t);
  const writer = new Writer(b);
  const result = writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("x").changes);
  assert.equal(result, 1);
  assert.equal(count(a), 1);
});

test("Writer.run() rolls back everything when the work throws", async (t) => {
  const [a, b] = await pair(t);
  const writer = new Writer(b);
  assert.throws(() =>
    writer.run(() => {
      b.prepare("INSERT INTO t VALUES (?)").run("half");
      throw new RangeError("bad value");
    }), RangeError);
  assert.equal(count(a), 0);
});

test("Writer.run() retries with a 20–150 ms jitter while the lock is held, then succeeds", async (t) => {
  const [a, b] = await pair(t);
  const pauses: number[] = [];
  const randoms = [0, 0.5, 0.999];
  a.exec("BEGIN IMMEDIATE");
  const writer = new Writer(b, {
    random: () => randoms[pauses.length % randoms.length],
    sleep: (ms) => {
      pauses.push(ms);
      if (pauses.length === 3) a.exec("COMMIT");
    },
  });
  writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("after wait"));
  assert.deepEqual(pauses.map(Math.round), [20, 85, 150]);
  assert.equal(count(a), 1);
});

test("Writer.run() gives up after 15 attempts with WriteBusyError and writes nothing", async (t) => {
  const [a, b] = await pair(t);
  a.exec("BEGIN IMMEDIATE");
  let pauses = 0;
  const writer = new Writer(b, { sleep: () => void pauses++ });
  assert.throws(() => writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("x")), (error) => {
    assert.ok(error instanceof WriteBusyError);
    assert.ok(error instanceof SqliteError);
    assert.equal(error.attempts, 15);
    assert.equal(error.codeName, "SQLITE_BUSY");
    return true;
  });
  assert.equal(pauses, 14);
  a.exec("COMMIT");
  assert.equal(count(a), 0);
  writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("next one works"));
  assert.equal(count(a), 1);
});

test("Writer.run() does not retry an error that is not busy", async (t) => {
  const [, b] = await pair(t);
  let pauses = 0;
  const writer = new Writer(b, { sleep: () => void pauses++ });
  assert.throws(() => writer.run(() => b.exec("INSERT INTO missing VALUES (1)")), SqliteError);
  assert.equal(pauses, 0);
});

test("Writer.run() nested inside another write joins the outer transaction", async (t) => {
  const [a, b] = await pair(t);
  const writer = new Writer(b);
  assert.throws(() =>
    writer.run(() => {
      writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("inner"));
      throw new Error("outer fails");
    })
  );
  assert.equal(count(a), 0);
});

test(`Writer.run() checkpoints the WAL after every ${CHECKPOINT_EVERY} writes`, async (t) => {
  const [, b] = await pair(t);
  const statements: string[] = [];
  const recording: SqliteConnection = {
    kind: b.kind,
    exec: (sql) => {
      statements.push(sql);
      b.exec(sql);
    },
    prepare: (sql) => b.prepare(sql),
    close: () => b.close(),
    [Symbol.dispose]: () => b.close(),
  };
  const writer = new Writer(recording);
  const insert = b.prepare("INSERT INTO t VALUES (?)");
  const checkpoints = () => statements.filter((sql) => sql.includes("wal_checkpoint")).length;
  for (let i = 0; i < CHECKPOINT_EVERY - 1; i++) writer.run(() => insert.run(String(i)));
  assert.equal(checkpoints(), 0);
  writer.run(() => insert.run("fiftieth"));
  assert.equal(checkpoints(), 1);
  for (let i = 0; i < CHECKPOINT_EVERY; i++) writer.run(() => insert.run(String(i)));
  assert.equal(checkpoints(), 2);
});

test("sleepSync() blocks for about the time asked", () => {
  const start = performance.now();
  sleepSync(30);
  assert.ok(performance.now() - start >= 25);
});

/** `db` whose next `failures` ROLLBACKs fail without running, as a disk error would. */
function rollbackFails(db: SqliteConnection, failures: number): SqliteConnection {
  let left = failures;
  return {
    kind: db.kind,
    exec: (sql) => {
      if (sql === "ROLLBACK" && left > 0) {
        left--;
        throw new SqliteError("disk I/O error", 10);
      }
      db.exec(sql);
    },
    prepare: (sql) => db.prepare(sql),
    close: () => db.close(),
    [Symbol.dispose]: () => db.close(),
  };
}

test("Writer.run() whose ROLLBACK fails once rolls back again and leaves the lock free", async (t) => {
  const [a, b] = await pair(t);
  const writer = new Writer(rollbackFails(b, 1));
  assert.throws(() =>
    writer.run(() => {
      b.prepare("INSERT INTO t VALUES (?)").run("half");
      throw new RangeError("bad value");
    }), RangeError);
  a.exec("PRAGMA busy_timeout = 0");
  a.prepare("INSERT INTO t VALUES (?)").run("other connection");
  writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("next write"));
  assert.deepEqual(a.prepare("SELECT v FROM t ORDER BY rowid").all(), [
    { v: "other connection" },
    { v: "next write" },
  ]);
});

test("Writer.run() after a transaction no ROLLBACK could end ends it before the next write", async (t) => {
  const [a, b] = await pair(t);
  const writer = new Writer(rollbackFails(b, 2));
  assert.throws(() =>
    writer.run(() => {
      b.prepare("INSERT INTO t VALUES (?)").run("half");
      throw new RangeError("bad value");
    }), RangeError);
  writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("next write"));
  assert.deepEqual(a.prepare("SELECT v FROM t").all(), [{ v: "next write" }]);
});

test("Writer.run() reports why when the transaction left open still cannot be rolled back", async (t) => {
  const [a, b] = await pair(t);
  const writer = new Writer(rollbackFails(b, 3));
  assert.throws(() =>
    writer.run(() => {
      b.prepare("INSERT INTO t VALUES (?)").run("half");
      throw new RangeError("bad value");
    }), RangeError);
  assert.throws(() => writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("x")), {
    name: "SqliteError",
    message: "disk I/O error",
  });
  writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("third write"));
  assert.deepEqual(a.prepare("SELECT v FROM t").all(), [{ v: "third write" }]);
});

test("Writer.run() when SQLite has already rolled back throws the work's error and writes on", async (t) => {
  const [a, b] = await pair(t);
  const writer = new Writer(b);
  assert.throws(() =>
    writer.run(() => {
      b.prepare("INSERT INTO t VALUES (?)").run("half");
      b.exec("ROLLBACK");
      throw new RangeError("bad value");
    }), RangeError);
  a.exec("PRAGMA busy_timeout = 0");
  a.prepare("INSERT INTO t VALUES (?)").run("other connection");
  writer.run(() => b.prepare("INSERT INTO t VALUES (?)").run("next write"));
  assert.deepEqual(a.prepare("SELECT v FROM t ORDER BY rowid").all(), [
    { v: "other connection" },
    { v: "next write" },
  ]);
});
