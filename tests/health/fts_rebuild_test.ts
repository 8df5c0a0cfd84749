import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { rebuildFtsTable } from "../../lib/health/fts_rebuild.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { rawOpen, ROOT, tempDbPath, tempDir } from "../_helpers.ts";
import { buildLargeFile } from "../_large_file.ts";
import { delay, runtimeBinary } from "../reliability/_runtimes.ts";

describe("rebuildFtsTable()", () => {
  test("rebuildFtsTable() keeps rows written, changed and deleted between its batches", async () => {
    const path = tempDbPath();
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
      db.appendMessages(
        "s",
        Array.from({ length: 2000 }, (_, i) => ({ role: "user", content: `word${i + 1} alpha` })),
      );
    }
    using db = await rawOpen(path);
    db.exec("PRAGMA busy_timeout = 1000");
    let step = 0;
    // Between two transactions of the rebuild, another connection writes.
    using other = await rawOpen(path);
    const result = await rebuildFtsTable(db, "messages_fts", {
      batchBudgetMs: 0.001,
      pauseMs: 0,
      sleep: () => {
        step++;
        if (step === 2) {
          other.exec(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'latecomer beta', 99)",
          );
        }
        if (step === 3) other.exec("UPDATE messages SET content = 'changed gamma' WHERE id = 1500");
        if (step === 4) other.exec("DELETE FROM messages WHERE id = 1800");
        return Promise.resolve();
      },
    });
    other.close();
    assert.ok(result.transactions >= 4, `${result.transactions} transactions`);
    const hits = (q: string) =>
      db.prepare("SELECT rowid AS id FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid")
        .all(q).map((r) => Number(r.id));
    assert.deepEqual(hits("latecomer"), [2001]);
    assert.deepEqual(hits("gamma"), [1500]);
    assert.deepEqual(hits("word1500"), []);
    assert.deepEqual(hits("word1800"), []);
    assert.equal(hits("alpha").length, 1998);
    db.exec("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')");
    db.close();
    const report = await doctor(path, { full: true });
    assert.deepEqual(report.checks.filter((c) => c.status !== "ok").map((c) => c.name), []);
  });

  test(
    "doctor --fix killed in the middle of a rebuild leaves a file that loses nothing, and the next --fix finishes the job",
    { timeout: 120_000 },
    async () => {
      const path = join(tempDir(), "state.db");
      await buildLargeFile(path, { messages: 30_000 });
      {
        using db = await rawOpen(path);
        db.exec("INSERT INTO state_meta (key, value) VALUES ('fts_stale:messages_fts', 'test')");
      }
      const runtime = runtimeName();
      const binary = runtimeBinary(runtime) ?? process.execPath;
      const cli = join(ROOT, "cli.ts");
      const argv = runtime === "deno" ? ["run", "-A", "--no-lock", cli] : [cli];
      const child = spawn(binary, [...argv, "--db", path, "doctor", "--fix"], { stdio: "ignore" });
      const exited = new Promise((resolve) => child.on("close", resolve));
      const watcher = await rawOpen(path, true);
      try {
        const building = watcher.prepare(
          "SELECT count(*) AS n FROM sqlite_master WHERE name = 'messages_fts_rebuild'",
        );
        for (let i = 0; i < 600 && Number(building.get()!.n) === 0; i++) await delay(20);
        assert.equal(Number(building.get()!.n), 1, "the rebuild never started");
        await delay(200);
      } finally {
        watcher.close();
      }
      child.kill("SIGKILL");
      await exited;
      {
        using db = await SessionDB.open({ path });
        db.createSession("after", "cli");
        db.appendMessage("after", { role: "user", content: "written after the kill" });
        assert.equal(db.messageCount(), 30_001);
      }
      const report = await doctor(path);
      const schema = report.checks.find((c) => c.name === "schema")!;
      assert.ok(
        schema.details.includes("table messages_fts_rebuild: left by an interrupted doctor --fix"),
        JSON.stringify(schema),
      );
      assert.equal(report.checks.find((c) => c.name === "fts:messages_fts")!.status, "problem");
      const fixed = await doctor(path, { fix: true });
      assert.deepEqual(
        fixed.after!.filter((c) => c.status !== "ok" && c.name !== "free_pages").map((c) => c.name),
        [],
      );
      using db = await SessionDB.open({ path, readonly: true });
      assert.equal(db.searchMessages("kill").length, 1);
    },
  );
});
