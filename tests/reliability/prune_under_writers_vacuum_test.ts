/**
 * `hermes-state vacuum` beside a live writer of ours, a Python writer and a
 * reader: no acknowledged write is lost, the reader never fails nor sees
 * the counts go back, a vacuum either succeeds or fails with one clear
 * "locked" line, and the file stays sound.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { tempDir } from "../_helpers.ts";
import {
  appended,
  delay,
  runSeed,
  startOurWriter,
  startPythonWriter,
  startWorker,
  workerRuntimes,
  workersSpanRuntimes,
} from "./_runtimes.ts";
import type { RuntimeName } from "../../lib/sqlite/driver/load.ts";

const seed = runSeed();

/** 400 sessions of 5 messages, every other one deleted again: pages for VACUUM to give back. */
async function buildFile(path: string): Promise<void> {
  using db = await SessionDB.open({ path });
  for (let i = 0; i < 400; i++) {
    db.createSession(`s${i}`, "cli");
    db.appendMessages(
      `s${i}`,
      Array.from(
        { length: 5 },
        (_, n) => ({ role: "user", content: `hello ${i} ${n} ${"x".repeat(400)}` }),
      ),
    );
    db.endSession(`s${i}`, "cli_close");
  }
  for (let i = 0; i < 400; i += 2) db.deleteSession(`s${i}`);
}

/** The CLI, run to its end: its exit code and stderr. */
function cli(runtime: RuntimeName, args: string[]) {
  const worker = startWorker(runtime, "../../cli.ts", args);
  return worker.exited.then((exit) => ({ exit, err: worker.stderr, out: worker.lines }));
}

for (const runtime of workerRuntimes(["deno", "bun", "node"])) {
  test(
    `vacuum on ${runtime} beside a writer, a Python writer and a reader loses nothing and fails only clearly (seed ${seed})`,
    { skip: workersSpanRuntimes() },
    async () => {
      const dir = tempDir();
      const path = join(dir, "state.db");
      await buildFile(path);
      const start = join(dir, "start");
      const stop = join(dir, "stop");
      const ours = startOurWriter(runtime, path, seed, start, 3);
      const python = startPythonWriter(path, "p", "py", seed, start);
      const reader = startWorker(runtime, "_reader.ts", [JSON.stringify({ path, stopFile: stop })]);
      try {
        await ours.waitFor((l) => l.startsWith("ready"), "ready");
        await python.waitFor((l) => l.startsWith("ready"), "ready");
        await reader.waitFor((l) => l.startsWith("ready"), "ready");
        writeFileSync(start, "");
        await delay(100);
        const runs = [];
        for (let i = 0; i < 3; i++) {
          runs.push(await cli(runtime, ["--db", path, "--json", "vacuum"]));
          await delay(50);
        }
        // Each writer gets a few appends in, however little of the machine it had meanwhile.
        await Promise.all([appended(ours, "w", 11), appended(python, "p", 11)]);
        writeFileSync(stop, "");
        const read = (await reader.succeeded()).find((line) => line.startsWith("reads "));
        assert.match(read ?? "", /^reads \d+ \d+/, reader.stderr);
        ours.kill("SIGKILL");
        python.kill("SIGKILL");
        await Promise.all([ours.exited, python.exited]);
        assert.ok(!python.lines.some((l) => l.startsWith("failed")), python.lines.join("\n"));
        for (const run of runs) {
          if (run.exit.code === 0) continue;
          assert.equal(run.exit.code, 1, run.err);
          assert.match(run.err, /^hermes-state: [^\n]*(locked|busy)[^\n]*\n$/, run.err);
        }
        assert.ok(runs.some((run) => run.exit.code === 0), runs.map((r) => r.err).join(""));
        const db = await SessionDB.open({ path, readonly: true });
        try {
          for (const [worker, session] of [[ours, "ours"], [python, "py"]] as const) {
            const stored = db.getMessages(session).map((m) => String(m.content));
            const acked = worker.lines.filter((l) => l.startsWith("ack ")).map((l) =>
              l.split(" ")[1]
            );
            assert.ok(acked.length > 10, `${session}: ${acked.length} appends`);
            for (const token of acked) {
              assert.ok(stored.some((c) => c.startsWith(`hello ${token} `)), `${token} lost`);
            }
          }
          assert.equal(db.sessionCount(), 202);
        } finally {
          db.close();
        }
        const report = await doctor(path);
        const problems = report.checks.filter((c) => c.status !== "ok");
        assert.deepEqual(problems.map((c) => `${c.name}: ${c.summary}`), []);
        assert.ok(existsSync(path));
      } finally {
        writeFileSync(stop, "");
        ours.kill("SIGKILL");
        python.kill("SIGKILL");
      }
    },
  );
}
