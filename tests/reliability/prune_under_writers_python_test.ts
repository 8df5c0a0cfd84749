/**
 * `hermes-state prune` (a separate process, as a user runs it) while Python
 * processes write the same file as Hermes does: to a child of a pruned
 * session, to an unrelated session, to an old session they resume, to an
 * old ended session without resuming it. Only the old ended sessions go;
 * every acknowledged message of a kept session stays; counters, both FTS
 * tables and the lineage stay consistent (doctor finds nothing).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { rawOpen, tempDir } from "../_helpers.ts";
import {
  appended,
  delay,
  startWorker,
  Worker,
  workerEnv,
  workerRuntimes,
  workersSpanRuntimes,
} from "./_runtimes.ts";

const DAY = 86_400;
const OLD = 600;

/**
 * A Python writer as Hermes writes (1 s busy timeout, BEGIN IMMEDIATE,
 * retried while locked). Mode `append` appends to the session; `resume`
 * first reopens it (as Hermes resuming an old session) and stops with
 * `gone` when it no longer exists. Prints `ack <token>` after each commit.
 */
const PYTHON_WRITER = `
import os, random, sqlite3, sys, time
path, session, mode, start = sys.argv[1:5]
db = sqlite3.connect(path, timeout=1.0, isolation_level=None)
db.execute("PRAGMA foreign_keys=ON")
def tx(fn):
    for attempt in range(200):
        try:
            db.execute("BEGIN IMMEDIATE")
            result = fn()
            db.execute("COMMIT")
            return result
        except sqlite3.OperationalError as error:
            try:
                db.execute("ROLLBACK")
            except sqlite3.OperationalError:
                pass
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            time.sleep(random.uniform(0.01, 0.05))
    raise RuntimeError("locked for good")
print("ready", flush=True)
while not os.path.exists(start):
    time.sleep(0.002)
if mode == "resume":
    n = tx(lambda: db.execute(
        "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", (session,)).rowcount)
    print("resumed" if n else "gone", flush=True)
    if not n:
        sys.exit(0)
i = 0
while True:
    token = f"{session}x{i}"
    def append():
        db.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (session, f"hello {token}", time.time()))
        db.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (session,))
    try:
        tx(append)
    except sqlite3.IntegrityError as error:
        try:
            db.execute("ROLLBACK")
        except sqlite3.OperationalError:
            pass
        print(f"gone {error}", flush=True)
        sys.exit(0)
    print(f"ack {token}", flush=True)
    i += 1
    time.sleep(random.uniform(0, 0.004))
`;

function oldId(i: number): string {
  return `old_${String(i).padStart(3, "0")}`;
}

/** The file: OLD old ended sessions (3 messages each), children, young, open and unrelated ones. */
async function buildFile(path: string, now: number): Promise<void> {
  const clock = { now: now - 100 * DAY };
  using db = await SessionDB.open({ path, clock: () => clock.now });
  for (let i = 0; i < OLD; i++) {
    clock.now = now - 100 * DAY + i;
    db.createSession(oldId(i), "cli");
    db.appendMessages(
      oldId(i),
      [1, 2, 3].map((n) => ({ role: "user", content: `old words ${i} ${n}` })),
    );
    db.endSession(oldId(i), "cli_close");
  }
  db.createSession("old_open", "cli");
  db.appendMessage("old_open", { role: "user", content: "still running" });
  clock.now = now - 10 * DAY;
  db.createSession("young_ended", "cli");
  db.appendMessage("young_ended", { role: "user", content: "young words" });
  db.endSession("young_ended", "cli_close");
  clock.now = now - DAY;
  db.createSession("kid_live", "cli", { parentSessionId: oldId(10) });
  db.createSession("kid_ended", "cli", { parentSessionId: oldId(500) });
  db.appendMessage("kid_ended", { role: "user", content: "kid words" });
  db.endSession("kid_ended", "cli_close");
  db.createSession("unrelated", "python");
}

function startPython(path: string, session: string, mode: string, start: string): Worker {
  const child = spawn("python3", ["-c", PYTHON_WRITER, path, session, mode, start], {
    stdio: ["ignore", "pipe", "pipe"],
    env: workerEnv(),
  });
  return new Worker("deno", child);
}

/** One number from a raw query. */
async function count(path: string, sql: string): Promise<number> {
  using db = await rawOpen(path, true);
  // Beside the writers: a read may wait for a writer's checkpoint or WAL recovery.
  db.exec("PRAGMA busy_timeout = 10000");
  return Number(Object.values(db.prepare(sql).get()!)[0]);
}

for (const runtime of workerRuntimes(["deno", "bun", "node"])) {
  test(
    `prune on ${runtime} while Python writers append deletes only old ended sessions and keeps every acknowledged message`,
    { skip: workersSpanRuntimes() },
    async () => {
      const dir = tempDir();
      const path = join(dir, "state.db");
      const now = Date.now() / 1000;
      await buildFile(path, now);
      const early = join(dir, "start-early");
      const late = join(dir, "start-late");
      const writers = {
        kid: startPython(path, "kid_live", "append", early),
        unrelated: startPython(path, "unrelated", "append", early),
        resumedBefore: startPython(path, oldId(300), "resume", early),
        resumedDuring: startPython(path, oldId(OLD - 1), "resume", late),
        endedAppend: startPython(path, oldId(100), "append", early),
      };
      const all = Object.values(writers);
      try {
        for (const writer of all) await writer.waitFor((l) => l === "ready", "ready");
        writeFileSync(early, "");
        await writers.resumedBefore.waitFor((l) => l === "resumed", "resumed");
        await writers.kid.waitFor((l) => l.startsWith("ack "), "a first append");
        const before = await count(path, "SELECT count(*) FROM sessions");
        const prune = startWorker(runtime, "../../cli.ts", [
          "--db",
          path,
          "--json",
          "prune",
          "--older-than",
          "90",
          "--yes",
        ]);
        // The late writer resumes the newest old session once the prune has begun deleting.
        let ended = false;
        void prune.exited.then(() => ended = true);
        while (!ended && await count(path, "SELECT count(*) FROM sessions") === before) {
          await delay(1);
        }
        writeFileSync(late, "");
        await prune.exited;
        const lines = await prune.succeeded();
        // The writers go on a little after the prune: the kid's a few appends in, however little of
        // the machine it had meanwhile (a fixed 100 ms left it 5 or fewer on a loaded machine).
        await appended(writers.kid, "kid_live", 6);
        for (const writer of all) writer.kill("SIGKILL");
        await Promise.all(all.map((writer) => writer.exited));

        const resumedDuring = writers.resumedDuring.lines.includes("resumed");
        const kept = [oldId(300), ...(resumedDuring ? [oldId(OLD - 1)] : [])];
        assert.deepEqual(JSON.parse(lines.join("\n")), { pruned: OLD - kept.length });
        const db = await SessionDB.open({ path, readonly: true });
        const left = db.searchSessions({ limit: 1000 }).map((s) => s.id).sort();
        assert.deepEqual(
          left,
          [...kept, "kid_ended", "kid_live", "old_open", "unrelated", "young_ended"].sort(),
        );
        assert.equal(db.getSession("kid_live")?.parent_session_id, null);
        assert.equal(db.getSession("kid_ended")?.parent_session_id, null);
        // Every acknowledged message of a kept session is there.
        for (const [name, writer] of Object.entries(writers)) {
          const acked = writer.lines.filter((l) => l.startsWith("ack ")).map((l) => l.slice(4));
          const session = acked[0]?.split("x")[0];
          if (session === undefined || !left.includes(session)) continue;
          const stored = new Set(db.getMessages(session).map((m) => String(m.content)));
          for (const token of acked) {
            assert.ok(stored.has(`hello ${token}`), `${name}: acknowledged ${token} is missing`);
          }
        }
        assert.ok(writers.kid.lines.filter((l) => l.startsWith("ack ")).length > 5);
        // Counters, FTS rows and lineage agree with the rows.
        const messages = await count(path, "SELECT count(*) FROM messages");
        assert.equal(await count(path, "SELECT count(*) FROM messages_fts"), messages);
        assert.equal(await count(path, "SELECT count(*) FROM messages_fts_trigram"), messages);
        assert.equal(
          await count(
            path,
            "SELECT count(*) FROM sessions s WHERE message_count != (SELECT count(*) FROM messages m WHERE m.session_id = s.id)",
          ),
          0,
        );
        db.close();
        const report = await doctor(path);
        const problems = report.checks.filter((c) => c.status !== "ok");
        assert.deepEqual(problems.map((c) => `${c.name}: ${c.summary}`), []);
      } finally {
        for (const writer of all) writer.kill("SIGKILL");
      }
    },
  );
}
