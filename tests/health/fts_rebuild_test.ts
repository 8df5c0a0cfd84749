import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { SqliteConnection } from "../../lib/sqlite/driver/types.ts";
import process from "node:process";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { doctor } from "../../lib/health/doctor.ts";
import { rebuildFtsTable } from "../../lib/health/fts_rebuild.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { rawOpen, ROOT, tempDbPath } from "../_helpers.ts";
import { buildLargeFile } from "../_large_file.ts";
import { caseSkip, delay, runtimeBinary } from "../reliability/_runtimes.ts";
import { copiesOf } from "../_built_once.ts";

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

  /** How a kill is placed, and the file it is placed on. */
  interface KillPoint {
    /** What the file is given before `doctor --fix` runs. */
    readonly damage: string;
    /** True once the child reached the point (read on another connection). */
    readonly reached: (watcher: SqliteConnection) => boolean;
  }

  const killPoints: Record<string, KillPoint> = {
    "the damaged table was just replaced, nothing copied yet": {
      damage: "INSERT INTO state_meta (key, value) VALUES ('fts_stale:messages_fts', 'test')",
      reached: (watcher) => backfillNext(watcher) !== undefined,
    },
    "half the messages copied into the replacement": {
      damage: "INSERT INTO state_meta (key, value) VALUES ('fts_stale:messages_fts', 'test')",
      reached: (watcher) => (backfillNext(watcher) ?? 0) > 15_000,
    },
    "a sound table with its triggers missing is being rebuilt beside": {
      damage: "DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_update; " +
        "DELETE FROM messages_fts WHERE rowid <= 100",
      reached: (watcher) =>
        watcher.prepare(
          "SELECT count(*) AS n FROM sqlite_master WHERE name = 'messages_fts_rebuild'",
        ).get()!.n === 1,
    },
  };

  function backfillNext(watcher: SqliteConnection): number | undefined {
    const row = watcher.prepare(
      "SELECT value FROM state_meta WHERE key = 'fts_backfill:messages_fts'",
    ).get();
    return row === undefined ? undefined : JSON.parse(String(row.value)).next;
  }

  /** The file each kill is placed on: 30,000 messages, built once. */
  const builtFile = copiesOf((path) => buildLargeFile(path, { messages: 30_000 }));

  // Each point under one of Deno, Bun and Node (`caseSkip`): the rebuild's steps are SQLite's
  // transactions, the same whatever runs the command.
  for (const [index, [name, point]] of Object.entries(killPoints).entries()) {
    test(
      `doctor --fix killed (SIGKILL) when ${name} leaves the v11 triggers, so a later write is found, and the next --fix finishes the job`,
      { timeout: 300_000, skip: caseSkip(index) },
      async () => {
        const path = await builtFile();
        {
          using db = await rawOpen(path);
          db.exec(point.damage);
        }
        const runtime = runtimeName();
        const binary = runtimeBinary(runtime) ?? process.execPath;
        const cli = join(ROOT, "cli.ts");
        const argv = runtime === "deno" ? ["run", "-A", "--no-lock", cli] : [cli];
        const child = spawn(binary, [...argv, "--db", path, "doctor", "--fix"], {
          stdio: "ignore",
        });
        const exited = new Promise((resolve) => child.on("close", resolve));
        const watcher = await rawOpen(path, true);
        try {
          for (let i = 0; i < 3000 && !point.reached(watcher); i++) await delay(10);
          assert.ok(point.reached(watcher), `${name}: never reached`);
        } finally {
          watcher.close();
        }
        child.kill("SIGKILL");
        await exited;
        {
          using raw = await rawOpen(path);
          const triggers = raw.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name",
          ).all().map((row) => String(row.name)).filter((n) => /^messages_fts_[a-z]+$/.test(n));
          assert.deepEqual(
            triggers,
            ["messages_fts_delete", "messages_fts_insert", "messages_fts_update"],
            name,
          );
          // A writer that knows nothing of the rebuild (Python's insert): its row is indexed.
          raw.exec("INSERT INTO sessions (id, source, started_at) VALUES ('after', 'cli', 1)");
          raw.exec(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('after', 'user', 'written after the kill', 2)",
          );
          const hits = raw.prepare(
            "SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'kill'",
          ).get()!.n;
          assert.equal(Number(hits), 1, `${name}: the write after the kill is not indexed`);
        }
        {
          using db = await SessionDB.open({ path, readonly: true });
          assert.equal(db.searchMessages("kill").length, 1, name);
        }
        const fixed = await doctor(path, { fix: true });
        assert.deepEqual(
          fixed.after!.filter((c) => c.status !== "ok" && c.name !== "free_pages").map((c) =>
            c.name
          ),
          [],
          name,
        );
        using db = await SessionDB.open({ path, readonly: true });
        assert.equal(db.searchMessages("kill").length, 1, name);
        assert.equal(db.messageCount(), 30_001, name);
      },
    );
  }
});
