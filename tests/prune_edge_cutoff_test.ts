/**
 * `hermes-state prune` deletes what it listed and asked about: its age
 * cutoff is fixed when it lists the candidates, not moved on by the time
 * the question waits for an answer or the steps before the last one take.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, recordingIo, withDb } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

const NOW = 1_800_000_000;
const DAY = 86_400;

/** One ended session started `ageSeconds` before NOW, with a message. */
function endedSession(db: SessionDB, clock: { now: number }, id: string, ageSeconds: number) {
  clock.now = NOW - ageSeconds;
  db.createSession(id, "cli");
  db.appendMessage(id, { role: "user", content: `hello from ${id}` });
  db.endSession(id, "cli_close");
}

/**
 * Runs `prune ARGS` answering yes; while the question waits, `meanwhile`
 * runs (another process writing) and the clock moves on by `waitSeconds`.
 */
async function pruneWhileAsked(
  path: string,
  args: readonly string[],
  waitSeconds: number,
  meanwhile: (db: SessionDB, at: number) => void,
) {
  let now = NOW;
  const io = recordingIo({ now: () => now });
  io.readLine = async () => {
    const db = await SessionDB.open({ path, clock: () => now + waitSeconds / 2 });
    try {
      meanwhile(db, now + waitSeconds / 2);
    } finally {
      db.close();
    }
    now += waitSeconds;
    return "y";
  };
  const code = await main(["--db", path, "prune", ...args], io);
  return { code, out: io.out, err: io.err };
}

test("prune --older-than 0 keeps a session that started while the question waited", async () => {
  const path = await buildDb((db, clock) => endedSession(db, clock, "before", 60), {
    start: NOW - DAY,
  });
  const run = await pruneWhileAsked(path, ["--older-than", "0"], 600, (db) => {
    db.createSession("started_later", "cli");
    db.appendMessage("started_later", { role: "user", content: "new work" });
    db.endSession("started_later", "cli_close");
  });
  assert.equal(run.code, 0, run.err);
  assert.match(run.err, /^Delete 1 session \(1 message\)/);
  assert.equal(run.out, "Pruned 1 session.\n");
  const left = await withDb(path, (db) => [db.getSession("before")?.id, db.messageCount()]);
  assert.deepEqual(left, [undefined, 1], "the session started after the question is kept");
  assert.equal(
    await withDb(path, (db) => db.getSession("started_later")?.message_count),
    1,
  );
});

test("prune --older-than 30 deletes only the sessions it counted, not those that aged meanwhile", async () => {
  const path = await buildDb((db, clock) => {
    endedSession(db, clock, "old", 40 * DAY);
    endedSession(db, clock, "almost_old", 30 * DAY - 300); // 30 days old 5 minutes later
  }, { start: NOW - 50 * DAY });
  const run = await pruneWhileAsked(path, ["--older-than", "30"], 600, () => {});
  assert.equal(run.code, 0, run.err);
  assert.match(run.err, /^Delete 1 session \(1 message\)/);
  assert.equal(run.out, "Pruned 1 session.\n");
  assert.deepEqual(
    await withDb(path, (db) => [db.getSession("old")?.id, db.getSession("almost_old")?.id]),
    [undefined, "almost_old"],
  );
});
