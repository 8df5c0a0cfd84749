import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { type RuntimeName, runtimeName } from "../../lib/sqlite/driver/load.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { openStore } from "../../lib/open_store.ts";
import { WriteBusyError } from "../../lib/sqlite/write_busy_error.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { startWorker, type Worker, workerRuntimes } from "./_runtimes.ts";

/** A small real budget: 3 attempts of 50 ms each, 20–40 ms apart (about 190–230 ms). */
const SMALL = { maxAttempts: 3, busyTimeoutMs: 50, minDelayMs: 20, maxDelayMs: 40 } as const;

test("setMeta() fails after about the retry budget with WriteBusyError while another connection holds the lock, then the next write succeeds", async () => {
  const path = tempDbPath();
  using db = await SessionDB.open({ path, retry: SMALL });
  db.setMeta("before", "1");
  using holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  holder.exec("INSERT INTO state_meta (key, value) VALUES ('holder', 'x')");
  const started = performance.now();
  assert.throws(() => db.setMeta("during", "2"), (error) => {
    assert.ok(error instanceof WriteBusyError, String(error));
    assert.equal(error.attempts, 3);
    assert.equal(error.codeName, "SQLITE_BUSY");
    assert.equal(
      error.message,
      "Cannot write: the database stayed locked by another connection through 3 attempts",
    );
    return true;
  });
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 3 * 50 + 2 * 20 - 15, `gave up too early: ${elapsed.toFixed(0)} ms`);
  assert.ok(elapsed < 900, `gave up too late: ${elapsed.toFixed(0)} ms`);
  assert.equal(db.getMeta("during"), undefined);
  holder.exec("COMMIT");
  holder.close();
  db.setMeta("after", "3");
  assert.equal(db.getMeta("after"), "3");
  assert.equal(db.getMeta("holder"), "x");
  assert.equal(db.getMeta("during"), undefined);
});

test("setMeta() waits for a lock another process holds for less than the budget, then writes", async () => {
  const path = tempDbPath();
  using db = await SessionDB.open({
    path,
    retry: { maxAttempts: 15, busyTimeoutMs: 50, minDelayMs: 20, maxDelayMs: 40 },
  });
  const other = workerRuntimes(["bun", "deno"]).find((r) => r !== runtimeName()) ?? runtimeName();
  const locker = startWorker(other, "_locker.ts", [JSON.stringify({ path, holdMs: 600 })]);
  await locker.waitFor((line) => line === "locked", "taking the lock");
  const started = performance.now();
  db.setMeta("waited", "yes");
  const elapsed = performance.now() - started;
  await locker.succeeded();
  assert.ok(locker.lines.includes("released"));
  assert.ok(elapsed > 100, `did not wait: ${elapsed.toFixed(0)} ms`);
  assert.equal(db.getMeta("waited"), "yes");
  assert.equal(db.getMeta("locker"), "held");
});

test("SessionDB.open() rejects a negative retry.busyTimeoutMs with a RangeError and creates nothing", async () => {
  const path = tempDbPath();
  await assert.rejects(
    SessionDB.open({ path, retry: { busyTimeoutMs: -1 } }),
    new RangeError(
      "Cannot open database: retry.busyTimeoutMs must be a non-negative integer: current value is -1",
    ),
  );
  assert.equal(existsSync(path), false);
});

/**
 * Longer than one attempt's busy timeout (1 s), as a WAL recovery of a large `-wal` can be: counted
 * from the go the test gives just after its clock starts and just before it opens, so the open
 * waits that long whatever the holder's line took to arrive.
 */
const LONG_HOLD_MS = 1300;

/** A holder of the whole of a new database file (`_locker.ts`), started on `runtime`. */
interface FileHolder {
  readonly path: string;
  readonly holder: Worker;
  /** Tells the holder to release the file `holdMs` from now. */
  go(): void;
}

/** Makes a database file and starts a holder of it on `runtime`: it waits for its go. */
async function holdNewFile(runtime: RuntimeName, holdMs: number): Promise<FileHolder> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  const goFile = `${path}.go`;
  const holder = startWorker(runtime, "_locker.ts", [
    JSON.stringify({ path, holdMs, exclusive: true, goFile }),
  ]);
  return { path, holder, go: () => writeFileSync(goFile, "") };
}

test("SessionDB.open() waits while another process holds the whole file (as WAL recovery does) for longer than one busy timeout, then opens", async () => {
  const cases = workerRuntimes(["deno", "bun"]).flatMap((runtime) =>
    [false, true].map((readonly) => ({ runtime, readonly }))
  );
  // Every holder starts at once, each on a file of its own; each holds from its go on.
  const holders = await Promise.all(cases.map(({ runtime }) => holdNewFile(runtime, LONG_HOLD_MS)));
  try {
    for (const { holder } of holders) {
      await holder.waitFor((line) => line === "locked", "taking the file");
    }
    for (const [i, { runtime, readonly }] of cases.entries()) {
      const { path, holder, go } = holders[i];
      const started = performance.now();
      go();
      using db = await SessionDB.open({ path, readonly });
      const elapsed = performance.now() - started;
      assert.equal(db.getMeta("locker"), "held", `${runtime}, readonly ${readonly}`);
      db.close();
      await holder.succeeded();
      assert.ok(elapsed > 1000, `did not wait (${runtime}): ${elapsed.toFixed(0)} ms`);
    }
  } finally {
    for (const { holder } of holders) holder.kill("SIGKILL");
  }
});

test("SessionDB.open() gives up with WriteBusyError after its retry budget while another process holds the whole file, then the file opens", async () => {
  // Held 1 s from the go: past the retry budget (about 230 ms) on a loaded machine too.
  const { path, holder, go } = await holdNewFile(runtimeName(), 1000);
  await holder.waitFor((line) => line === "locked", "taking the file");
  go();
  await assert.rejects(SessionDB.open({ path, retry: SMALL }), (error) => {
    assert.ok(error instanceof WriteBusyError, String(error));
    assert.equal(error.attempts, 3);
    return true;
  });
  await holder.succeeded();
  using db = await SessionDB.open({ path, readonly: true });
  assert.equal(db.getMeta("locker"), "held");
});

test("doctor() waits for a file another process holds whole, then checks it; past its lock timeout it fails as busy, saying how long it waited", async () => {
  // Two files, each held from the start: the first for 1 s from its go, the second until killed.
  const [waited, outlasted] = await Promise.all([
    holdNewFile(runtimeName(), 1000),
    holdNewFile(runtimeName(), 30_000),
  ]);
  try {
    await waited.holder.waitFor((line) => line === "locked", "taking the file");
    waited.go();
    const report = await doctor(waited.path, { lockTimeoutMs: 15_000 });
    assert.ok(report.checks.length > 0);
    await waited.holder.succeeded();
    const path = outlasted.path;
    await outlasted.holder.waitFor((line) => line === "locked", "taking the file");
    await assert.rejects(doctor(path, { lockTimeoutMs: 300 }), (error) => {
      assert.ok(error instanceof WriteBusyError, String(error));
      assert.ok((error.waitedMs ?? 0) >= 300, String(error.waitedMs));
      // It only read: the message says so.
      assert.match(error.message, /^Cannot read: the database stayed locked by another connection/);
      return true;
    });
    // A read-only store's open says the same.
    await assert.rejects(
      openStore(path, { readonly: true, retry: { timeoutMs: 300 } }),
      /^WriteBusyError: Cannot read: the database stayed locked/,
    );
  } finally {
    waited.holder.kill("SIGKILL");
    outlasted.holder.kill("SIGKILL");
    await outlasted.holder.exited;
  }
});
