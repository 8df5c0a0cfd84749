/**
 * `hermes-state prune` killed with SIGKILL at random moments while one of
 * our writers appends to the same file: after each kill the file is sound
 * (doctor finds nothing), each old session is there whole or gone whole,
 * every acknowledged message is kept, and the same prune run again
 * finishes the job.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { mulberry32 } from "../_random.ts";
import { rawOpen } from "../_helpers.ts";
import { copiesOf } from "../_built_once.ts";
import {
  delay,
  runSeed,
  startOurWriter,
  startWorker,
  type Worker,
  workerRuntimes,
  workersSpanRuntimes,
} from "./_runtimes.ts";

const DAY = 86_400;
const OLD = 12_000;
const PER_SESSION = 4;
const ROUNDS = 5;
const seed = runSeed();

/**
 * OLD old ended sessions of PER_SESSION messages (every tenth the parent of
 * the next), written in one transaction by SQL; one young child of the last.
 */
async function buildFile(path: string, now: number): Promise<void> {
  const start = now - 100 * DAY;
  (await SessionDB.open({ path })).close();
  using db = await rawOpen(path);
  db.exec("BEGIN IMMEDIATE");
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${OLD - 1})
    INSERT INTO sessions (id, source, started_at, ended_at, end_reason, message_count, parent_session_id)
    SELECT printf('old_%05d', i), 'cli', ${start} + i, ${start} + i + 1, 'cli_close', ${PER_SESSION},
      CASE WHEN i % 10 = 1 THEN printf('old_%05d', i - 1) END FROM n`);
  db.exec(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${
      OLD * PER_SESSION - 1
    })
    INSERT INTO messages (session_id, role, content, timestamp)
    SELECT printf('old_%05d', i / ${PER_SESSION}), 'user', 'old words ' || i, ${start} + i / ${PER_SESSION} FROM n`,
  );
  db.exec(`INSERT INTO sessions (id, source, started_at, parent_session_id, message_count)
    VALUES ('young', 'cli', ${now - DAY}, printf('old_%05d', ${OLD - 1}), 1)`);
  db.exec(
    `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('young', 'user', 'young words', ${now})`,
  );
  db.exec("COMMIT");
}

/** Copies of one {@linkcode buildFile} (its times relative to its build): one per runtime's test. */
const fileCopy = copiesOf((path) => buildFile(path, Date.now() / 1000));

/** The numbers the queries give, read in one transaction. */
async function counts(path: string, sqls: readonly string[]): Promise<number[]> {
  using db = await rawOpen(path, true);
  // Beside a writer, and just after a kill: the first read may wait for SQLite's WAL recovery.
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("BEGIN");
  try {
    return sqls.map((sql) => Number(Object.values(db.prepare(sql).get()!)[0]));
  } finally {
    db.exec("COMMIT");
  }
}

async function count(path: string, sql: string): Promise<number> {
  return (await counts(path, [sql]))[0];
}

/** The state after a kill: sound, whole sessions only, every acknowledged message kept. */
async function assertConsistent(path: string, writer: Worker, when: string): Promise<number> {
  const report = await doctor(path);
  // Free pages after a prune are expected: `vacuum` gives them back.
  const problems = report.checks.filter((c) => c.status !== "ok" && c.name !== "free_pages");
  assert.deepEqual(problems.map((c) => `${c.name}: ${c.summary}`), [], when);
  // One read transaction: the writer goes on appending meanwhile.
  const [messages, fts, trigram] = await counts(path, [
    "SELECT count(*) FROM messages",
    "SELECT count(*) FROM messages_fts",
    "SELECT count(*) FROM messages_fts_trigram",
  ]);
  assert.deepEqual([fts, trigram], [messages, messages], when);
  const halfOld = await count(
    path,
    `SELECT count(*) FROM sessions s WHERE id LIKE 'old\\_%' ESCAPE '\\'
       AND (SELECT count(*) FROM messages m WHERE m.session_id = s.id) != ${PER_SESSION}`,
  );
  assert.equal(halfOld, 0, `${when}: an old session lost part of its messages`);
  assert.equal(
    await count(
      path,
      "SELECT count(*) FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)",
    ),
    0,
    when,
  );
  const db = await SessionDB.open({ path, readonly: true });
  try {
    const stored = new Set(db.getMessages("ours").map((m) => String(m.content)));
    for (const line of writer.lines.filter((l) => l.startsWith("ack "))) {
      const token = line.split(" ")[1];
      assert.ok([...stored].some((c) => c.startsWith(`hello ${token} `)), `${when}: ${token} lost`);
    }
    assert.equal(db.getSession("young")?.message_count, 1, when);
  } finally {
    db.close();
  }
  return await oldLeft(path);
}

/** The old sessions left. */
async function oldLeft(path: string): Promise<number> {
  return await count(path, "SELECT count(*) FROM sessions WHERE id LIKE 'old\\_%' ESCAPE '\\'");
}

for (const runtime of workerRuntimes(["deno", "bun", "node"])) {
  test(
    `prune on ${runtime} killed with SIGKILL at random moments beside a writer leaves whole sessions, and again finishes (seed ${seed})`,
    { skip: workersSpanRuntimes() },
    async () => {
      const path = await fileCopy();
      const dir = dirname(path);
      const start = join(dir, "start");
      const writer = startOurWriter(runtime, path, seed, start, 2);
      const random = mulberry32(seed);
      const prune = ["--db", path, "prune", "--older-than", "90", "--yes"];
      try {
        await writer.waitFor((l) => l.startsWith("ready"), "ready");
        writeFileSync(start, "");
        let left = OLD;
        let kills = 0;
        for (let round = 0; round < ROUNDS && left > 0; round++) {
          const run = startWorker(runtime, "../../cli.ts", prune);
          // Killed once it has deleted something (or has ended), then a random while later.
          let ended = false;
          void run.exited.then(() => ended = true);
          while (!ended && await oldLeft(path) === left) await delay(2);
          await delay(Math.floor(random() * 300));
          run.kill("SIGKILL");
          const exit = await run.exited;
          if (exit.signal === "SIGKILL") kills++;
          left = await assertConsistent(path, writer, `after kill ${round + 1} (${exit.signal})`);
        }
        assert.ok(kills > 0, "at least one prune was killed while it ran");
        const last = startWorker(runtime, "../../cli.ts", [...prune, "--json"]);
        const lines = await last.succeeded();
        assert.equal(JSON.parse(lines.join("\n")).pruned, left);
        writer.kill("SIGKILL");
        await writer.exited;
        assert.equal(await assertConsistent(path, writer, "after the last prune"), 0);
        assert.equal(await count(path, "SELECT count(*) FROM sessions"), 2);
        assert.equal(
          await count(path, "SELECT count(*) FROM sessions WHERE parent_session_id IS NOT NULL"),
          0,
        );
      } finally {
        writer.kill("SIGKILL");
      }
    },
  );
}
