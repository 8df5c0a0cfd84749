/**
 * The library's `maybeAutoPruneAndVacuum` (what an agent runs at start-up)
 * while a Python writer and one of ours append to the same file: it prunes
 * the old ended sessions, never throws, loses no acknowledged write, and
 * leaves the file sound, on the synchronous `SessionDB` and the
 * asynchronous `SessionStore`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { openStore } from "../../lib/open_store.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { tempDir } from "../_helpers.ts";
import { appended, runSeed, startOurWriter, startPythonWriter } from "./_runtimes.ts";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";

const DAY = 86_400;
const OLD = 2000;
const seed = runSeed();

async function buildFile(path: string): Promise<void> {
  const now = Date.now() / 1000;
  const clock = { now };
  using db = await SessionDB.open({ path, clock: () => clock.now });
  for (let i = 0; i < OLD; i++) {
    clock.now = now - 200 * DAY + i;
    db.createSession(`old_${i}`, "cli", i === 5 ? { parentSessionId: "old_4" } : {});
    db.appendMessages(`old_${i}`, [{ role: "user", content: `old ${i} ${"x".repeat(300)}` }]);
    db.endSession(`old_${i}`, "cli_close");
  }
  clock.now = now - DAY;
  db.createSession("kid", "cli", { parentSessionId: "old_7" });
}

for (const kind of ["SessionDB", "SessionStore"] as const) {
  test(`maybeAutoPruneAndVacuum() of a ${kind} beside a Python writer and ours prunes, never throws, loses nothing (seed ${seed})`, async () => {
    const dir = tempDir();
    const path = join(dir, "state.db");
    await buildFile(path);
    const start = join(dir, "start");
    const ours = startOurWriter(runtimeName(), path, seed, start, 2);
    const python = startPythonWriter(path, "p", "py", seed, start);
    try {
      await ours.waitFor((l) => l.startsWith("ready"), "ready");
      await python.waitFor((l) => l.startsWith("ready"), "ready");
      writeFileSync(start, "");
      // Both writing when the prune starts.
      await Promise.all([appended(ours, "w", 1), appended(python, "p", 1)]);
      let result;
      if (kind === "SessionDB") {
        using db = await SessionDB.open({ path });
        result = db.maybeAutoPruneAndVacuum({ retentionDays: 90 });
      } else {
        const store = await openStore(path);
        try {
          result = await store.maybeAutoPruneAndVacuum({ retentionDays: 90 });
        } finally {
          await store.close();
        }
      }
      assert.equal(result.error, undefined, String(result.cause));
      assert.equal(result.pruned, OLD);
      // Each writer gets a few appends in, however little of the machine it had during the prune
      // (a fixed 50 ms more gave Python 5 appends on a loaded machine).
      await Promise.all([appended(ours, "w", 6), appended(python, "p", 6)]);
      ours.kill("SIGKILL");
      python.kill("SIGKILL");
      await Promise.all([ours.exited, python.exited]);
      assert.ok(!python.lines.some((l) => l.startsWith("failed")), python.lines.join("\n"));
      using db = await SessionDB.open({ path, readonly: true });
      assert.deepEqual(db.searchSessions({ limit: 10 }).map((s) => s.id).sort(), [
        "kid",
        "ours",
        "py",
      ]);
      assert.equal(db.getSession("kid")?.parent_session_id, null);
      assert.ok(db.getMeta("last_auto_prune"));
      for (const [worker, session] of [[ours, "ours"], [python, "py"]] as const) {
        const stored = db.getMessages(session).map((m) => String(m.content));
        const acked = worker.lines.filter((l) => l.startsWith("ack ")).map((l) => l.split(" ")[1]);
        assert.ok(acked.length > 5, `${session}: ${acked.length} appends`);
        for (const token of acked) {
          assert.ok(stored.some((c) => c.startsWith(`hello ${token} `)), `${token} lost`);
        }
        assert.equal(db.getSession(session)?.message_count, stored.length);
      }
      const report = await doctor(path);
      const problems = report.checks.filter((c) => c.status !== "ok" && c.name !== "free_pages");
      assert.deepEqual(problems.map((c) => `${c.name}: ${c.summary}`), []);
    } finally {
      ours.kill("SIGKILL");
      python.kill("SIGKILL");
    }
  });
}
