import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB, storeOf } from "../../lib/sqlite/session_db.ts";
import { pruneSessions, pruneSessionsAsync } from "../../lib/sqlite/prune.ts";
import { writeInBatches } from "../../lib/sqlite/batches.ts";
import { retryWhileBusy } from "../../lib/sqlite/store_retry.ts";
import type { RetryOptions } from "../../lib/sqlite/write.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";

const DAY = 86_400;

/** Ten ended sessions started 100 days before "now", three messages each; s1 parents s2. */
async function oldSessions(retry?: RetryOptions): Promise<SessionDB> {
  let now = 1_000_000;
  const db = await SessionDB.open({ path: tempDbPath(), clock: () => now, retry });
  for (let i = 0; i < 10; i++) {
    const id = `s${i}`;
    db.createSession(id, "cli", i === 2 ? { parentSessionId: "s1" } : {});
    db.appendMessages(id, [1, 2, 3].map((n) => ({ role: "user", content: `${id} docker ${n}` })));
    db.endSession(id, "done");
  }
  now += 100 * DAY;
  db.createSession("live", "cli", { parentSessionId: "s3" });
  return db;
}

function orphanMessages(db: SessionDB): number {
  const row = storeOf(db).db.prepare(
    "SELECT count(*) AS n FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)",
  ).get();
  return Number(row?.n);
}

test("pruneSessions() deletes in several short transactions, pausing between them, with the same result", async () => {
  using db = await oldSessions();
  const pauses: number[] = [];
  const pruned = pruneSessions(storeOf(db), { olderThanDays: 90 }, {
    batch: { holdMs: 0, pauseMs: 7, sleep: (ms) => pauses.push(ms) },
  });
  assert.equal(pruned, 10);
  assert.deepEqual(pauses, Array(9).fill(7), "one session per transaction, a pause between two");
  assert.equal(db.messageCount(), 0);
  assert.equal(db.getSession("live")?.parent_session_id, null);
  assert.equal(db.searchMessages("docker").length, 0);
  const check = storeOf(db).db.prepare(
    "INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')",
  );
  check.run();
});

test("a prune stopped between two transactions leaves whole sessions, and the next prune finishes", async () => {
  using db = await oldSessions();
  let transactions = 0;
  assert.throws(
    () =>
      pruneSessions(storeOf(db), { olderThanDays: 90 }, {
        batch: {
          holdMs: 0,
          sleep: () => {
            if (++transactions === 4) throw new Error("killed between two transactions");
          },
        },
      }),
    /killed/,
  );
  assert.equal(db.sessionCount(), 11 - 4);
  assert.equal(db.messageCount(), 3 * 6);
  assert.equal(orphanMessages(db), 0);
  for (const session of db.searchSessions({ limit: 100 })) {
    assert.equal(db.messageCount(session.id), session.message_count);
  }
  assert.equal(db.pruneSessions({ olderThanDays: 90 }), 6);
  assert.equal(db.sessionCount(), 1);
});

test("pruneSessions() keeps a session that was reopened after the candidates were listed", async () => {
  using db = await oldSessions();
  const pruned = pruneSessions(storeOf(db), { olderThanDays: 90 }, {
    batch: {
      holdMs: 0,
      sleep: () => db.reopenSession("s9"), // another process resumes the newest one mid-prune
    },
  });
  assert.equal(pruned, 9);
  assert.ok(db.getSession("s9"));
});

test("writeInBatches() puts items in one transaction until holdMs has passed, never splitting one", async () => {
  using db = await SessionDB.open({ path: tempDbPath() });
  let now = 0;
  const committed: number[][] = [];
  const store = storeOf(db);
  const report = writeInBatches((fn) => store.write(fn), [1, 2, 3, 4, 5], {
    holdMs: 10,
    clock: () => now,
    sleep: () => {},
    each: (n) => {
      now += 4;
      db.setMeta(`k${n}`, String(n));
      return n !== 3;
    },
    afterCommit: (done) => committed.push([...done]),
  });
  assert.deepEqual(committed, [[1, 2], [4, 5]]);
  assert.deepEqual(report, { done: 4, transactions: 2, longestMs: 12 });
  assert.equal(db.getMeta("k5"), "5");
});

function timer(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** As the SQLite SessionStore opens its connection: a locked file fails at once. */
const ONE_ATTEMPT = { maxAttempts: 1, busyTimeoutMs: 0 };

test("pruneSessionsAsync() awaits its pauses: a timer keeps firing between the transactions of a prune", async () => {
  let ticks = 0;
  const interval = setInterval(() => ticks++, 1);
  try {
    using blocking = await oldSessions();
    const seenSync: number[] = [];
    pruneSessions(storeOf(blocking), { olderThanDays: 90 }, {
      batch: { holdMs: 0, pauseMs: 5, sleep: () => seenSync.push(ticks) },
    });
    blocking.close();
    assert.deepEqual(seenSync, Array(9).fill(seenSync[0]), "the blocking prune lets no timer run");

    using db = await oldSessions();
    const seen: number[] = [];
    const pruned = await pruneSessionsAsync(storeOf(db), { olderThanDays: 90 }, {
      step: (fn) => retryWhileBusy(fn),
      batch: {
        holdMs: 0,
        pauseMs: 5,
        sleep: async (ms) => {
          seen.push(ticks);
          await timer(ms);
        },
      },
    });
    assert.equal(pruned, 10);
    assert.equal(seen.length, 9, "one session per transaction, a pause between two");
    for (let i = 1; i < seen.length; i++) {
      assert.ok(seen[i] > seen[i - 1], `the timer fired during pause ${i}: ${seen.join(",")}`);
    }
    assert.equal(db.messageCount(), 0);
    assert.equal(db.getSession("live")?.parent_session_id, null);
    storeOf(db).db.prepare("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")
      .run();
  } finally {
    clearInterval(interval);
  }
});

test("pruneSessionsAsync() waits out a lock taken between two transactions and counts every session", async () => {
  using db = await oldSessions(ONE_ATTEMPT);
  using other = await rawOpen(db.path);
  let pauses = 0;
  let waits = 0;
  const pruned = await pruneSessionsAsync(storeOf(db), { olderThanDays: 90 }, {
    step: (fn) =>
      retryWhileBusy(fn, {
        minDelayMs: 5,
        maxDelayMs: 10,
        sleep: (ms) => (waits++, timer(ms)),
      }),
    batch: {
      holdMs: 0,
      pauseMs: 1,
      sleep: async (ms) => {
        if (++pauses === 3) {
          other.exec("BEGIN IMMEDIATE"); // another process writes for 40 ms
          setTimeout(() => other.exec("COMMIT"), 40);
        }
        await timer(ms);
      },
    },
  });
  assert.equal(pruned, 10, "the sessions of the transactions before the lock are counted");
  assert.ok(waits > 0, "the fourth transaction found the file locked and waited");
  assert.equal(db.sessionCount(), 1);
  assert.equal(orphanMessages(db), 0);
});
