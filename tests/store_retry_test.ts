import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { WriteBusyError } from "../lib/sqlite/write_busy_error.ts";
import { openStore } from "../lib/open_store.ts";
import { retryWhileBusy } from "../lib/sqlite/store_retry.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { startWorker, workerRuntimes } from "./reliability/_runtimes.ts";

test("SessionStore.setMeta() waits for another process's write lock while timers on the same event loop keep firing, then writes", async () => {
  const path = tempDbPath();
  await using store = await openStore(path);
  await store.setMeta("before", "1");
  const other = workerRuntimes(["bun", "deno"]).find((r) => r !== runtimeName()) ?? runtimeName();
  const locker = startWorker(other, "_locker.ts", [JSON.stringify({ path, holdMs: 600 })]);
  await locker.waitFor((line) => line === "locked", "taking the lock");
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  try {
    await store.setMeta("waited", "yes");
  } finally {
    clearInterval(timer);
  }
  const elapsed = performance.now() - started;
  await locker.succeeded();
  assert.ok(elapsed > 100, `did not wait: ${elapsed.toFixed(0)} ms`);
  // A blocking wait (busy_timeout, Atomics.wait) would let no tick through.
  assert.ok(ticks >= Math.floor(elapsed / 10 / 3), `${ticks} ticks in ${elapsed.toFixed(0)} ms`);
  assert.equal(await store.getMeta("waited"), "yes");
  assert.equal(await store.getMeta("locker"), "held");
});

test("SessionStore.setMeta() gives up after retry.timeoutMs with WriteBusyError and writes nothing", async () => {
  const path = tempDbPath();
  await using store = await openStore(path, {
    retry: { timeoutMs: 200, minDelayMs: 10, maxDelayMs: 20 },
  });
  using holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  const started = performance.now();
  await assert.rejects(store.setMeta("during", "x"), (error) => {
    assert.ok(error instanceof WriteBusyError, String(error));
    assert.ok(error.attempts > 3, `only ${error.attempts} attempts`);
    assert.equal(error.codeName, "SQLITE_BUSY");
    return true;
  });
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 190 && elapsed < 1000, `gave up after ${elapsed.toFixed(0)} ms`);
  holder.exec("ROLLBACK");
  holder.close();
  assert.equal(await store.getMeta("during"), undefined);
  await store.setMeta("after", "y");
  assert.equal(await store.getMeta("after"), "y");
});

test("retryWhileBusy() does not retry an error that is not busy", async () => {
  let calls = 0;
  const failure = new SqliteError("constraint failed", 19);
  await assert.rejects(
    retryWhileBusy(() => {
      calls++;
      throw failure;
    }),
    (error) => error === failure,
  );
  assert.equal(calls, 1);
});

test("openStore() opens sqlite:PATH as the file PATH, and iterates its export asynchronously", async () => {
  const path = tempDbPath();
  await using store = await openStore(`sqlite:${path}`);
  assert.equal(store.engine, "sqlite");
  assert.equal(store.target, path);
  await store.createSession("s1", "cli");
  const exported = [];
  for await (const session of store.iterateExport()) exported.push(session.id);
  assert.deepEqual(exported, ["s1"]);
});

test("appends not awaited one by one land in the order they were called while another connection holds the lock", async () => {
  const path = tempDbPath();
  await using store = await openStore(path, {
    retry: { timeoutMs: 5_000, minDelayMs: 5, maxDelayMs: 40 },
  });
  await store.createSession("s", "cli");
  using holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  const appends = Array.from(
    { length: 12 },
    (_, i) => store.appendMessage("s", { role: "user", content: String(i) }),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  holder.exec("ROLLBACK");
  const ids = await Promise.all(appends);
  assert.deepEqual([...ids].sort((a, b) => a - b), ids, "ids in call order");
  const contents = (await store.getMessages("s")).map((m) => m.content);
  assert.deepEqual(contents, Array.from({ length: 12 }, (_, i) => String(i)));
});

test("writes queued behind one waiting for the lock each give up retry.timeoutMs after their own call", async () => {
  const path = tempDbPath();
  await using store = await openStore(path, {
    retry: { timeoutMs: 300, minDelayMs: 10, maxDelayMs: 20 },
  });
  using holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  const attempts = new Map<string, number>();
  const waited = new Map<string, number>();
  const calledAt = performance.now();
  const writes = ["a", "b", "c"].map((key) =>
    store.setMeta(key, "x").then(
      () => assert.fail(`${key} was written under another's lock`),
      (error) => {
        assert.ok(error instanceof WriteBusyError, String(error));
        attempts.set(key, error.attempts);
        waited.set(key, performance.now() - calledAt);
      },
    )
  );
  await Promise.all(writes);
  holder.exec("ROLLBACK");
  // The first tried for its 300 ms; the two behind it, called with it, found their time all but
  // spent when their turn came: a try or two each (a busy machine may run the first's first try
  // late, leaving them a pause's worth), never 300 ms more each in turn (600 and 900 ms).
  assert.ok(attempts.get("a")! > 3, `a: ${attempts.get("a")} attempts`);
  for (const key of ["b", "c"]) {
    assert.ok(waited.get(key)! >= 300, `${key} waited ${waited.get(key)} ms`);
    assert.ok(waited.get(key)! < 600, `${key} waited ${waited.get(key)} ms`);
  }
  await store.setMeta("after", "y");
  assert.equal(await store.getMeta("after"), "y");
  assert.equal(await store.getMeta("a"), undefined);
});

test("a write queued behind one waiting for the lock counts its wait from its own call in WriteBusyError.waitedMs", async () => {
  const path = tempDbPath();
  await using store = await openStore(path, {
    retry: { timeoutMs: 200, minDelayMs: 5, maxDelayMs: 10 },
  });
  using holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  const failed = (key: string) =>
    store.setMeta(key, "x").then(
      () => assert.fail(`${key} was written under another's lock`),
      (error) => {
        assert.ok(error instanceof WriteBusyError, String(error));
        return error.waitedMs ?? -1;
      },
    );
  // The second waits behind the first (at least its 200 ms) before it tries at all.
  const [first, second] = await Promise.all([failed("a"), failed("b")]);
  holder.exec("ROLLBACK");
  assert.ok(first >= 200, `the first waited ${first} ms`);
  assert.ok(second >= 200, `the second waited ${second} ms, said its error`);
});

test("a write called once the one that waited for the lock has ended runs at once: a read called after it sees it", async () => {
  const path = tempDbPath();
  await using store = await openStore(path, {
    retry: { timeoutMs: 5_000, minDelayMs: 5, maxDelayMs: 10 },
  });
  await store.createSession("s", "cli");
  using holder = await rawOpen(path);
  holder.exec("BEGIN IMMEDIATE");
  const released = new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
    holder.exec("ROLLBACK")
  );
  await store.appendMessage("s", { role: "user", content: "waited" });
  // No write waits now: this one is not awaited, and the read called after it finds it.
  const atOnce = store.appendMessage("s", { role: "user", content: "at once" });
  const contents = (await store.getMessages("s")).map((m) => m.content);
  await Promise.all([atOnce, released]);
  assert.deepEqual(contents, ["waited", "at once"]);
});

test("a write called after one that failed at once (not for the lock) runs at once: a read called after it sees it", async () => {
  const path = tempDbPath();
  await using store = await openStore(path);
  await store.createSession("s", "cli");
  // deno-lint-ignore no-explicit-any -- a caller without types
  const refused = store.appendMessage("s", { role: 42 as any, content: "refused" });
  const atOnce = store.appendMessage("s", { role: "user", content: "at once" });
  const contents = (await store.getMessages("s")).map((m) => m.content);
  await assert.rejects(refused, TypeError);
  await atOnce;
  assert.deepEqual(contents, ["at once"]);
});
