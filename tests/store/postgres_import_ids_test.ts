/**
 * Importing into PostgreSQL keeps a record's message ids when they are free,
 * and then moves the id sequence past them: sessions imported side by side
 * (`copy` runs three at once) must leave it past every kept id, or the next
 * append takes an id that exists and fails on a duplicate key. Records
 * racing for one title are both imported, one under the lineage's next title.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { adminSql, freshSchema, openPgStore, pgEngineSkip } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A session record whose messages keep the ids `first`…`first + count - 1`. */
function record(id: string, first: number, count: number) {
  return {
    id,
    source: "cli",
    started_at: 1_700_000_000 + first,
    messages: Array.from({ length: count }, (_, i) => ({
      id: first + i,
      role: "user",
      content: `message ${first + i}`,
      timestamp: 1_700_000_000 + first + i,
    })),
  };
}

describe("PostgreSQL import keeps message ids", { skip: SKIP }, () => {
  test("sessions imported side by side leave the sequence past every kept id", {
    timeout: 120_000,
  }, async () => {
    for (let round = 0; round < 20; round++) {
      const schema = freshSchema();
      await using store = await openPgStore({ max: 8 }, schema);
      // Newest ids first, as a newest-first export hands them over: each import's highest id
      // is lower than the one before it, so a late, stale "is it behind?" moves it back.
      const sessions = Array.from({ length: 24 }, (_, i) => record(`s${i}`, (23 - i) * 3 + 1, 3));
      const results = await Promise.all(sessions.map((s) => store.importSession(s)));
      assert.ok(results.every((r) => r.outcome === "imported"));
      const [kept] = await adminSql(`SELECT max(id) AS top FROM "${schema}".messages`);
      assert.equal(Number(kept.top), 72, "every id kept");
      await store.createSession("after", "cli");
      const id = await store.appendMessage("after", { role: "user", content: "next" });
      assert.ok(id > 72, `the append after the import took id ${id}`);
    }
  });

  test("an append handed an id an import wrote meanwhile takes the next one, and fails nothing", async () => {
    const schema = freshSchema();
    await using store = await openPgStore({}, schema);
    await store.createSession("s", "cli");
    const first = await store.appendMessage("s", { role: "user", content: "first" });
    // What an import that keeps ids writes while the sequence is still behind them (the race
    // of the test below, made certain): the sequence's next value, taken.
    await adminSql(
      `INSERT INTO "${schema}".messages (id, session_id, role, content, timestamp)
       VALUES (${first + 1}, 's', 'user', 'kept', 1)`,
    );
    const next = await store.appendMessage("s", { role: "user", content: "next" });
    assert.equal(next, first + 2);
    const [two] = await store.appendMessages("s", [{ role: "user", content: "batch" }]);
    assert.equal(two, first + 3);
  });

  test("an agent appending while a session is imported is never handed a kept id", {
    timeout: 120_000,
  }, async () => {
    await using store = await openPgStore({ max: 4 });
    await store.createSession("live", "cli");
    // Ids from 101: the appends that race the import's first statements take 2, 3… below them
    // (unless a slow machine lets them reach 101 first: then the import must give new ids).
    await store.appendMessage("live", { role: "user", content: "before" });
    const imported = store.importSession(record("big", 101, 3_000));
    let done = false;
    void imported.finally(() => done = true).catch(() => {});
    const appended: number[] = [];
    const failures: string[] = [];
    while (!done) {
      try {
        appended.push(await store.appendMessage("live", { role: "user", content: "meanwhile" }));
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    assert.equal((await imported).outcome, "imported");
    assert.deepEqual(failures, [], "every append went through");
    assert.ok(appended.length > 0, "appends ran while the import did");
    const ids = (await store.getMessages("big")).map((m) => m.id);
    assert.equal(new Set([...ids, ...appended]).size, ids.length + appended.length);
    const inRange = appended.filter((id) => id >= 101 && id <= 3_100);
    if (ids[0] === 101) {
      assert.deepEqual(ids, Array.from({ length: 3_000 }, (_, i) => i + 101), "the ids were kept");
      assert.deepEqual(inRange, [], "no append was handed a kept id");
    } else {
      // New ids only because an append had taken one of the record's before it looked.
      assert.ok(inRange.length > 0, `ids not kept (${ids.slice(0, 3)}…) with the range free`);
    }
  });
});

describe("PostgreSQL import of a taken title", { skip: SKIP }, () => {
  test("importSession() racing for one title: both import, one under the lineage's next title", async () => {
    for (let round = 0; round < 5; round++) {
      await using store = await openPgStore({ max: 4 });
      const record = (id: string) => ({
        id,
        source: "cli",
        started_at: 1,
        title: "Raced",
        messages: [{ role: "user", content: id, timestamp: 1 }],
      });
      const results = await Promise.all([
        store.importSession(record("a")),
        store.importSession(record("b")),
      ]);
      assert.deepEqual(results.map((r) => r.outcome), ["imported", "imported"]);
      assert.deepEqual(results.map((r) => r.renamedTo).sort(), ["Raced #2", null]);
      const titles = [await store.getSessionTitle("a"), await store.getSessionTitle("b")];
      assert.deepEqual(titles.sort(), ["Raced", "Raced #2"]);
      assert.equal(await store.sessionCount(), 2);
      assert.equal(await store.messageCount(), 2);
    }
  });
});
