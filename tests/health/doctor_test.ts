import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import process from "node:process";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { doctor, type DoctorReport } from "../../lib/health/doctor.ts";
import type { HealthCheck } from "../../lib/core/health_report.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { migrate } from "../../lib/sqlite/schema/migrate.ts";
import { Writer } from "../../lib/sqlite/write.ts";
import { WriteBusyError } from "../../lib/sqlite/write_busy_error.ts";
import { DoctorFixError } from "../../lib/health/doctor_fix_error.ts";
import type { SearchOptions } from "../../lib/core/search/options.ts";
import { copyFixture, expected, rawOpen, runPython, tempDbPath, tempDir } from "../_helpers.ts";
import {
  emptyFileWithWal,
  fileAndWal,
  fileWithForeignWal,
  indexOutOfStep,
  liveWalOf,
  overwrittenCopy,
  truncatedFileWithWal,
} from "./_damaged_files.ts";
import { buildLargeFile } from "../_large_file.ts";

function check(
  report: DoctorReport,
  name: string,
  when: "before" | "after" = "before",
): HealthCheck {
  const checks = when === "before" ? report.checks : report.after ?? [];
  const found = checks.find((c) => c.name === name);
  assert.ok(found, `no check ${name}`);
  return found;
}

function notOk(checks: readonly HealthCheck[]): string[] {
  return checks.filter((c) => c.status !== "ok").map((c) => `${c.name}: ${c.summary}`);
}

function sha(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

async function smallFile(): Promise<string> {
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  db.createSession("root", "cli");
  db.createSession("child", "cli", { parentSessionId: "root" });
  db.appendMessage("root", { role: "user", content: "deploy docker to staging" });
  db.appendMessage("root", {
    role: "assistant",
    content: null,
    toolCalls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: "{}" } }],
  });
  db.appendMessage("child", { role: "user", content: "记忆断裂排查 again" });
  return path;
}

/** The trigger texts of `table` in the file, by name. */
async function liveTriggers(path: string, table: string): Promise<string[]> {
  const db = await rawOpen(path, true);
  try {
    return db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
      .all().filter((r) => /^(insert|delete|update)$/.test(String(r.name).slice(table.length + 1)))
      .filter((r) => String(r.name).startsWith(`${table}_`)).map((r) => String(r.sql));
  } finally {
    db.close();
  }
}

/** The trigger texts of `table` in the file Python wrote (fixtures' schema.json). */
async function pythonTriggers(table: string): Promise<string[]> {
  const schema = await expected<{ sqlite_master: { type: string; name: string; sql: string }[] }>(
    "schema.json",
  );
  return schema.sqlite_master.filter((o) =>
    o.type === "trigger" && o.name.startsWith(`${table}_`) &&
    /^(insert|delete|update)$/.test(o.name.slice(table.length + 1))
  ).sort((a, b) => (a.name < b.name ? -1 : 1)).map((o) => o.sql);
}

interface SearchEntry {
  ts_args: [string, SearchOptions?];
}

describe("doctor()", () => {
  test("doctor --fix rebuilds no search table of a sound file for a trigger named like theirs", async () => {
    const path = await smallFile();
    {
      using raw = await rawOpen(path);
      raw.exec(`CREATE TABLE audit (id INTEGER);
        CREATE TRIGGER messages_fts_audit_insert AFTER INSERT ON messages
        BEGIN INSERT INTO audit VALUES (new.id); END`);
    }
    const report = await doctor(path, { fix: true });
    assert.deepEqual(notOk(report.checks), []);
    assert.deepEqual(report.repairs.map((r) => r.name).filter((name) => name !== "wal"), []);
  });

  test("doctor --fix rebuilds only the table whose trigger differs, not the words table for a trigram one", async () => {
    const path = await smallFile();
    {
      using raw = await rawOpen(path);
      raw.exec("DROP TRIGGER messages_fts_trigram_update");
    }
    const report = await doctor(path, { fix: true });
    assert.deepEqual(
      report.repairs.map((r) => r.name).filter((name) => name.startsWith("fts:")),
      ["fts:messages_fts_trigram"],
    );
  });

  test("doctor() finds a new file healthy, every check ok, and writes nothing", async () => {
    const path = await smallFile();
    const before = sha(path);
    const report = await doctor(path);
    assert.deepEqual(notOk(report.checks), []);
    assert.equal(report.healthy, true);
    assert.deepEqual(report.repairs, []);
    assert.equal(report.after, undefined);
    assert.equal(sha(path), before);
    assert.equal(existsSync(`${path}-wal`), false, "a check left a -wal behind");
    assert.equal(existsSync(`${path}-shm`), false, "a check left a -shm behind");
    assert.deepEqual(report.checks.map((c) => c.name), [
      "integrity",
      "foreign_keys",
      "fts:messages_fts",
      "coverage:messages_fts",
      "fts:messages_fts_trigram",
      "coverage:messages_fts_trigram",
      "counters",
      "sequence",
      "lineage",
      "schema",
      "wal",
      "free_pages",
      "files",
    ]);
  });

  test("doctor() does not call a search index sound that the integrity check stopped before", async () => {
    // Page 28 of hermes-v11.db is a leaf of messages_fts_data: zeroed, the check stops there.
    const path = overwrittenCopy("hermes-v11.db", { page: 28, offset: 0, length: 4096, fill: 0 });
    const report = await doctor(path, { full: true });
    assert.equal(check(report, "integrity").status, "problem");
    for (const table of ["messages_fts", "messages_fts_trigram"]) {
      // Before: "index sound", the check having stopped before it.
      assert.equal(check(report, `fts:${table}`).status, "warning");
      assert.match(
        check(report, `fts:${table}`).summary,
        /index not checked: the integrity check stopped at the damage it names/,
      );
    }
  });

  test("doctor() does not call a search index sound when the check stopped at its 100 lines", async () => {
    const path = copyFixture("hermes-v11.db");
    // 120 messages SQLite kept out of an index: a line each, past the pragma's limit of 100.
    indexOutOfStep(
      path,
      "idx_messages_session",
      "CREATE INDEX idx_messages_session ON messages(session_id, timestamp) WHERE 0",
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
       INSERT INTO messages (session_id, role, content, timestamp)
       SELECT '20251221_090000_9738df', 'user', 'late ' || i, 9e9 + i FROM n`,
    );
    const report = await doctor(path, { full: true });
    assert.equal(check(report, "integrity").status, "problem");
    assert.equal(check(report, "fts:messages_fts").status, "warning");
    assert.match(check(report, "fts:messages_fts").summary, /index not checked/);
  });

  test("doctor() tells the SQLite 3.40 trigram condition of hermes-v11.db apart from damage, and --fix mends it leaving every search answer as it was", async () => {
    const path = copyFixture("hermes-v11.db");
    const report = await doctor(path);
    const trigram = check(report, "fts:messages_fts_trigram");
    assert.equal(trigram.status, "warning");
    assert.match(
      trigram.summary,
      /which indexed 4 messages holding a NUL character only up to it; search is unaffected, but deleting them may fail, and other damage of that index would not show, until it is rebuilt$/,
    );
    assert.equal(report.healthy, true);
    assert.deepEqual(notOk(report.checks), [`fts:messages_fts_trigram: ${trigram.summary}`]);

    const { entries } = await expected<{ entries: SearchEntry[] }>("search.json");
    const answers = async () => {
      using db = await SessionDB.open({ path, readonly: true });
      return entries.map((e) => db.searchMessages(e.ts_args[0], e.ts_args[1]));
    };
    const searchesBefore = await answers();
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(fixed.repairs.map((r) => r.name), ["fts:messages_fts_trigram", "wal"]);
    assert.deepEqual(notOk(fixed.after!), []);
    assert.deepEqual(await answers(), searchesBefore);
    using db = await rawOpen(path);
    db.exec("INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES('integrity-check')");
    db.close();
    assert.deepEqual(
      await liveTriggers(path, "messages_fts_trigram"),
      await pythonTriggers("messages_fts_trigram"),
    );
  });

  test("doctor() still calls the trigram condition a warning when a newer SQLite indexed some NUL messages whole", async () => {
    const path = copyFixture("hermes-v11.db");
    {
      using db = await SessionDB.open({ path });
      db.appendMessage("20260429_090322_3762ca", {
        role: "user",
        content: [{ type: "text", text: "a multimodal part written by a newer SQLite" }],
      });
    }
    const report = await doctor(path);
    assert.equal(check(report, "fts:messages_fts_trigram").status, "warning");
    assert.match(
      check(report, "fts:messages_fts_trigram").summary,
      /indexed 5 messages holding a NUL/,
    );
  });

  test("doctor() reports counters that differ from the rows, and --fix recounts them", async () => {
    const path = await smallFile();
    using db = await rawOpen(path);
    db.exec("UPDATE sessions SET message_count = 7, tool_call_count = 0 WHERE id = 'root'");
    db.close();
    const report = await doctor(path);
    assert.equal(check(report, "counters").status, "problem");
    assert.match(
      check(report, "counters").details[0],
      /root: message_count 7 \(rows 2\), tool_call_count 0 \(rows 1\)/,
    );
    assert.equal(report.healthy, false);
    const fixed = await doctor(path, { fix: true });
    assert.equal(check(fixed, "counters", "after").status, "ok");
    using after = await SessionDB.open({ path, readonly: true });
    assert.equal(after.getSession("root")!.message_count, 2);
    assert.equal(after.getSession("root")!.tool_call_count, 1);
  });

  test("doctor() reports a missing parent and a cycle, and --fix clears those links only", async () => {
    const path = await smallFile();
    using db = await rawOpen(path);
    db.exec("PRAGMA foreign_keys = OFF");
    db.exec(
      "INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('lost', 'cli', 5, 'gone')",
    );
    db.exec(
      "INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('a', 'cli', 1, 'b')",
    );
    db.exec(
      "INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES ('b', 'cli', 2, 'a')",
    );
    db.close();
    const report = await doctor(path);
    const lineage = check(report, "lineage");
    assert.equal(lineage.status, "problem");
    assert.equal(lineage.summary, "1 sessions name a missing parent, 1 cycles of parent links");
    const fixed = await doctor(path, { fix: true });
    assert.equal(check(fixed, "lineage", "after").status, "ok");
    using after = await SessionDB.open({ path, readonly: true });
    assert.equal(after.getSession("lost")!.parent_session_id, null);
    assert.equal(after.getSession("a")!.parent_session_id, null); // the earliest started
    assert.equal(after.getSession("b")!.parent_session_id, "a");
    assert.equal(after.getSession("child")!.parent_session_id, "root");
  });

  test("doctor() reports an FTS table marked stale with its triggers gone, and --fix rebuilds it with the v11 triggers and removes the marker", async () => {
    const path = await smallFile();
    using db = await rawOpen(path);
    for (const e of ["insert", "delete", "update"]) db.exec(`DROP TRIGGER messages_fts_${e}`);
    db.exec(
      "INSERT INTO state_meta (key, value) VALUES ('fts_stale:messages_fts', 'database disk image is malformed')",
    );
    db.exec(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('root', 'user', 'kubernetes rollout', 9)",
    );
    db.exec("UPDATE sessions SET message_count = 3 WHERE id = 'root'");
    db.close();
    const report = await doctor(path);
    const fts = check(report, "fts:messages_fts");
    assert.equal(fts.status, "problem");
    assert.equal(
      fts.summary,
      "messages_fts: marked stale in state_meta: database disk image is malformed",
    );
    assert.ok(fts.details.includes("trigger messages_fts_insert is missing"));
    assert.equal(check(report, "coverage:messages_fts").status, "problem");
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(notOk(fixed.after!), []);
    using after = await SessionDB.open({ path, readonly: true });
    assert.equal(after.getMeta("fts_stale:messages_fts"), undefined);
    assert.equal(after.searchMessages("kubernetes").length, 1);
    assert.deepEqual(
      await liveTriggers(path, "messages_fts"),
      await pythonTriggers("messages_fts"),
    );
  });

  test("doctor() writes its counts with thousands grouped, as the rest of the CLI does", async () => {
    const path = tempDbPath();
    await buildLargeFile(path, { messages: 1234 });
    using raw = await rawOpen(path);
    raw.exec("DELETE FROM messages_fts");
    raw.close();
    const report = await doctor(path);
    assert.equal(
      check(report, "coverage:messages_fts").summary,
      "messages_fts: 1,234 messages have no row",
    );
    const fixed = await doctor(path, { fix: true });
    assert.match(
      fixed.repairs.find((r) => r.name === "fts:messages_fts")!.summary,
      /^rebuilt messages_fts \(1,234 messages, [\d,]+ transactions\); v11 triggers restored$/,
    );
  });

  test("doctor() reports FTS rows missing, wrong or without a message, and --fix rebuilds both tables", async () => {
    const path = await smallFile();
    using db = await rawOpen(path);
    db.exec("DELETE FROM messages_fts WHERE rowid = 1");
    db.exec("INSERT INTO messages_fts (rowid, content) VALUES (99, 'ghost')");
    db.exec("UPDATE messages_fts_trigram SET content = 'other text' WHERE rowid = 2");
    db.close();
    const report = await doctor(path);
    assert.equal(
      check(report, "coverage:messages_fts").summary,
      "messages_fts: 1 message has no row, 1 row has no message",
    );
    assert.equal(
      check(report, "coverage:messages_fts_trigram").summary,
      "messages_fts_trigram: 1 row holds other text than their message",
    );
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(fixed.repairs.map((r) => r.name).slice(0, 2), [
      "fts:messages_fts",
      "fts:messages_fts_trigram",
    ]);
    assert.deepEqual(notOk(fixed.after!), []);
  });

  test("doctor() reports a missing FTS table, and --fix creates it with its triggers, filled", async () => {
    const path = await smallFile();
    using db = await rawOpen(path);
    for (const e of ["insert", "delete", "update"]) {
      db.exec(`DROP TRIGGER messages_fts_trigram_${e}`);
    }
    db.exec("DROP TABLE messages_fts_trigram");
    db.close();
    const report = await doctor(path);
    assert.equal(
      check(report, "fts:messages_fts_trigram").summary,
      "messages_fts_trigram is missing: search cannot find anything",
    );
    assert.equal(check(report, "schema").status, "problem");
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(notOk(fixed.after!), []);
    using after = await SessionDB.open({ path, readonly: true });
    assert.equal(after.searchMessages("记忆断裂排查").length, 1);
  });

  test("doctor() reports an upgrade interrupted while filling the search tables, and --fix finishes it", async () => {
    const path = copyFixture("hermes-v6.db");
    {
      using db = await rawOpen(path);
      db.exec("PRAGMA journal_mode = WAL");
      new Writer(db).run(() => migrate(db)); // the first step of the upgrade only
    }
    const report = await doctor(path);
    assert.match(check(report, "schema").summary, /an upgrade to 11 was interrupted/);
    assert.equal(check(report, "schema").fixable, true);
    assert.match(
      check(report, "fts:messages_fts").summary,
      /still being filled, interrupted \(an upgrade or doctor --fix\): message ids 1–\d+ left/,
    );
    const fixed = await doctor(path, { fix: true });
    assert.equal(fixed.repairs[0].name, "schema");
    assert.deepEqual(notOk(fixed.after!), []);
    using db = await SessionDB.open({ path, readonly: true });
    assert.equal(db.getMeta("fts_backfill:messages_fts"), undefined);
    assert.ok(db.searchMessages("docker").length > 0);
  });

  test("doctor() samples the coverage above sampleAbove messages unless full", async () => {
    const path = await smallFile();
    const report = await doctor(path, { sampleAbove: 1 });
    assert.match(check(report, "coverage:messages_fts").summary, /1 message in 3 sampled/);
    const full = await doctor(path, { sampleAbove: 1, full: true });
    assert.doesNotMatch(check(full, "coverage:messages_fts").summary, /sampled/);
    assert.equal(check(full, "integrity").summary, "integrity_check: ok");
  });

  test("doctor() recreates the session of messages that belong to none", async () => {
    const path = await smallFile();
    using db = await rawOpen(path);
    db.exec("PRAGMA foreign_keys = OFF");
    db.exec(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('vanished', 'user', 'orphan text', 42)",
    );
    db.close();
    const report = await doctor(path);
    assert.equal(check(report, "foreign_keys").summary, "1 message belongs to no session");
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(notOk(fixed.after!), []);
    using after = await SessionDB.open({ path, readonly: true });
    assert.equal(after.getSession("vanished")!.source, "unknown");
    assert.equal(after.getSession("vanished")!.started_at, 42);
    assert.equal(after.getSession("vanished")!.message_count, 1);
  });

  test("doctor() reports a missing index and a leftover rebuild table, and --fix restores the schema", async () => {
    const path = await smallFile();
    using db = await rawOpen(path);
    db.exec("DROP INDEX idx_messages_session");
    db.exec("CREATE VIRTUAL TABLE messages_fts_rebuild USING fts5(content)");
    db.close();
    const report = await doctor(path);
    assert.equal(check(report, "schema").summary, "index idx_messages_session is missing");
    assert.ok(
      check(report, "schema").details.includes(
        "table messages_fts_rebuild: left by an interrupted doctor --fix",
      ),
    );
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(notOk(fixed.after!), []);
  });

  test("doctor() says the extra objects of a newer Hermes (hermes-v21.db) are fine", async () => {
    const path = copyFixture("hermes-v21.db");
    const report = await doctor(path);
    const schema = check(report, "schema");
    assert.equal(schema.status, "ok");
    assert.match(
      schema.summary,
      /^schema version 21, every v11 object present; schema 21 \(a newer Hermes\): its \d+ extra objects are fine$/,
    );
  });

  test("doctor() warns about files others may read, and --fix sets 0600", async () => {
    const path = await smallFile();
    chmodSync(path, 0o644);
    const report = await doctor(path);
    assert.equal(check(report, "files").status, "warning");
    await doctor(path, { fix: true });
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  test(
    "doctor() reports a -shm another user owns, and --fix (as root) gives it the owner of state.db",
    {
      skip: process.getuid?.() !== 0 ? "needs root to chown" : false,
    },
    async () => {
      const path = await smallFile();
      using db = await SessionDB.open({ path });
      db.appendMessage("root", { role: "user", content: "keeps -wal and -shm in place" });
      chownSync(`${path}-shm`, 65534, 65534);
      const report = await doctor(path);
      const files = check(report, "files");
      assert.equal(files.status, "problem");
      assert.match(files.summary, /-shm not owned by the owner of state\.db/);
      const fixed = await doctor(path, { fix: true });
      assert.equal(check(fixed, "files", "after").status, "ok");
      assert.equal(statSync(`${path}-shm`).uid, statSync(path).uid);
      db.appendMessage("root", { role: "user", content: "still writable" });
    },
  );

  test("doctor() reports a damaged file and --fix then repairs nothing", async () => {
    const path = await smallFile();
    {
      using db = await rawOpen(path);
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    const { openSync, writeSync, closeSync } = await import("node:fs");
    const fd = openSync(path, "r+");
    const page = 4096;
    writeSync(fd, new Uint8Array(page).fill(0x5a), 0, page, page * 2);
    closeSync(fd);
    const report = await doctor(path, { fix: true });
    assert.equal(check(report, "integrity").status, "problem");
    assert.deepEqual(report.repairs, []);
    assert.equal(report.healthy, false);
    // Every fix offered goes through recover: --fix writes nothing to a damaged file.
    for (const finding of report.checks) {
      assert.ok(!finding.fix?.includes("doctor --fix ("), `${finding.name}: ${finding.fix}`);
    }
  });

  test("doctor() names the sessions sharing a title without the unique index, and --fix renames the later ones in the lineage style and creates the index", async () => {
    const path = await smallFile();
    {
      using db = await rawOpen(path);
      db.exec("DROP INDEX idx_sessions_title_unique");
      db.exec(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('a', 'cli', 1, 'notes')",
      );
      db.exec(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('b', 'cli', 2, 'notes')",
      );
      db.exec(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('c', 'cli', 3, 'notes')",
      );
      db.exec(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('d', 'cli', 0, 'notes #2')",
      );
    }
    const report = await doctor(path);
    assert.equal(
      check(report, "schema").summary,
      'title "notes" is shared by 3 sessions (a, b, c): the unique title index cannot be created',
    );
    assert.match(check(report, "schema").fix!, /"… #2"/);
    const fixed = await doctor(path, { fix: true });
    const schema = fixed.repairs.find((r) => r.name === "schema")!;
    assert.match(
      schema.summary,
      /renamed 2 sessions sharing a title: b "notes" → "notes #3", c "notes" → "notes #4"/,
    );
    assert.deepEqual(notOk(fixed.after!), []);
    using db = await rawOpen(path, true);
    assert.deepEqual(
      db.prepare("SELECT id, title FROM sessions WHERE id IN ('a','b','c','d') ORDER BY id").all()
        .map((r) => `${r.id}=${r.title}`),
      ["a=notes", "b=notes #3", "c=notes #4", "d=notes #2"],
    );
  });

  test("doctor() advises migrate on a v6 file, and --fix migrates it once, then has nothing left to do", async () => {
    const path = copyFixture("hermes-v6.db");
    chmodSync(path, 0o600);
    const report = await doctor(path);
    assert.equal(
      check(report, "schema").summary,
      "schema version 6: hermes-state migrate upgrades it to 11",
    );
    assert.match(check(report, "schema").fix!, /^hermes-state migrate/);
    const fixed = await doctor(path, { fix: true });
    assert.equal(fixed.repairs[0].summary, "upgraded schema 6 → 11 (both search tables rebuilt)");
    assert.deepEqual(notOk(fixed.after!).filter((line) => !line.startsWith("free_pages")), []);
    const again = await doctor(path, { fix: true });
    assert.deepEqual(again.repairs.map((r) => r.name).filter((n) => n !== "wal"), []);
  });

  test("doctor() with fix waits lockTimeoutMs for a lock another connection holds, then stops with the findings and how long it waited", async () => {
    const path = await smallFile();
    using holder = await rawOpen(path);
    holder.exec("INSERT INTO state_meta (key, value) VALUES ('fts_stale:messages_fts', 'test')");
    holder.exec("BEGIN IMMEDIATE");
    const started = performance.now();
    const error = await doctor(path, { fix: true, lockTimeoutMs: 400 }).then(
      () => assert.fail("no error"),
      (e) => e,
    );
    const took = performance.now() - started;
    holder.exec("ROLLBACK");
    assert.ok(error instanceof DoctorFixError, String(error));
    assert.ok(error.cause instanceof WriteBusyError);
    assert.ok(
      error.cause.waitedMs! >= 350 && error.cause.waitedMs! < 2000,
      `${error.cause.waitedMs}`,
    );
    assert.ok(took < 4000, `${took} ms`);
    assert.equal(
      check({ ...error, after: undefined } as unknown as DoctorReport, "fts:messages_fts").status,
      "problem",
    );
  });

  test("doctor() leaves out the -wal and -shm its own connection made, and says nothing of a WAL on a rollback-journal file", async () => {
    const path = await smallFile();
    {
      using db = await rawOpen(path);
      db.exec("PRAGMA journal_mode = DELETE");
    }
    chmodSync(path, 0o644);
    const report = await doctor(path);
    assert.deepEqual(check(report, "files").details, [
      `${path}: mode 0644, owner ${statSync(path).uid}:${statSync(path).gid}`,
    ]);
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(fixed.repairs.map((r) => `${r.name}: ${r.summary}`), [
      "files: set mode 0600 on 1 files",
    ]);
  });

  test("doctor() calls a fill whose mark outlived it done, not a reversed range of ids", async () => {
    const path = await smallFile();
    {
      using db = await rawOpen(path);
      db.exec(
        `INSERT INTO state_meta (key, value) VALUES ('fts_backfill:messages_fts', '{"next": 4, "upto": 3}')`,
      );
    }
    const report = await doctor(path);
    assert.equal(
      check(report, "fts:messages_fts").summary,
      "messages_fts: filled, but the mark of an interrupted fill (upgrade or doctor --fix) is still set",
    );
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(notOk(fixed.after!), []);
  });

  test("doctor() refuses a missing file with an OpenError naming it", async () => {
    const path = tempDbPath();
    await assert.rejects(doctor(path), {
      name: "OpenError",
      message: new RegExp(`${path}.*no such file`),
    });
  });

  test("doctor() with fix refuses a file beside another file's live -wal and changes neither", async () => {
    const path = await fileWithForeignWal();
    const before = fileAndWal(path);
    await assert.rejects(doctor(path, { fix: true }), {
      name: "OpenError",
      message:
        /-wal beside it .* belongs to another database.*nothing was changed .*hermes-state recover/,
    });
    assert.deepEqual(fileAndWal(path), before, "the file or its -wal changed");
  });

  test("doctor() with fix leaves a cut file and its live -wal byte for byte as they were, and repairs nothing", async () => {
    const path = truncatedFileWithWal();
    const before = fileAndWal(path);
    const report = await doctor(path, { fix: true });
    assert.equal(check(report, "integrity").status, "problem");
    assert.deepEqual(report.repairs, []);
    assert.deepEqual(fileAndWal(path), before, "the file or its -wal changed");
  });

  test("doctor() refuses a 0-byte file whose -wal holds commits, with and without fix, and keeps the -wal", async () => {
    const path = emptyFileWithWal();
    const before = fileAndWal(path);
    for (const fix of [false, true]) {
      await assert.rejects(doctor(path, { fix }), {
        name: "OpenError",
        message:
          /the file is empty but its -wal holds \d+ bytes of commits; .*hermes-state recover/,
      });
      assert.deepEqual(fileAndWal(path), before, "the file or its -wal changed");
    }
  });

  test("doctor() says a 0-byte file is empty, with and without fix, and leaves it as it was", async () => {
    const path = tempDbPath();
    writeFileSync(path, "");
    const past = new Date("2024-01-02T03:04:05Z");
    utimesSync(path, past, past);
    for (const fix of [false, true]) {
      await assert.rejects(doctor(path, { fix }), {
        name: "OpenError",
        message: `Cannot open database "${path}": the file is empty (0 bytes), not a Hermes ` +
          "database; there is nothing to check or repair (it was left as it was)",
      });
    }
    assert.equal(statSync(path).size, 0);
    assert.equal(statSync(path).mtimeMs, past.getTime());
    for (const suffix of ["-wal", "-shm", "-journal"]) {
      assert.equal(existsSync(`${path}${suffix}`), false, suffix);
    }
  });

  test("doctor() names the file and recover when it is not SQLite at all", async () => {
    const path = tempDbPath();
    writeFileSync(path, "hello, not sqlite\n".repeat(1000));
    await assert.rejects(doctor(path), {
      name: "OpenError",
      message: new RegExp(`"${path}": file is not a database; .*hermes-state recover`),
    });
  });

  test("doctor() reports bytes overwritten in messages_fts_data as index damage (not file damage), and --fix rebuilds it", async () => {
    const path = tempDbPath();
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
    }
    {
      using raw = await rawOpen(path);
      raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
        INSERT INTO messages (session_id, role, content, timestamp)
        SELECT 's', 'user', 'word' || i || ' deploy kangaroo ' || (i * 7919 % 1000), i FROM n`);
      raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    const stdout = runPython([
      "import sqlite3, sys",
      "c = sqlite3.connect(sys.argv[1])",
      "print(' '.join(str(r[0]) for r in c.execute(\"SELECT pageno FROM dbstat WHERE name = 'messages_fts_data' AND pagetype = 'leaf' ORDER BY pageno\")))",
    ], path);
    const leaves = stdout.trim().split(" ").map(Number);
    assert.ok(leaves.length >= 3, `${leaves.length} leaf pages`);
    const page = leaves[Math.floor(leaves.length / 2)];
    const fd = openSync(path, "r+");
    writeSync(fd, new Uint8Array(200).fill(0x41), 0, 200, (page - 1) * 4096 + 300);
    closeSync(fd);
    const report = await doctor(path);
    assert.equal(check(report, "integrity").status, "ok", check(report, "integrity").summary);
    assert.equal(check(report, "fts:messages_fts").status, "problem");
    assert.match(check(report, "fts:messages_fts").summary, /integrity-check: fts5: /);
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(notOk(fixed.after ?? []), []);
    assert.equal(fixed.healthy, true);
  });

  test("doctor() accepts a migrated v10 file without sqlite_sequence (Python's migration keeps no AUTOINCREMENT)", async () => {
    const path = copyFixture("hermes-v10-external.db");
    (await SessionDB.open({ path })).close();
    const report = await doctor(path);
    assert.equal(check(report, "schema").status, "ok", check(report, "schema").details.join("\n"));
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(notOk(fixed.after ?? []), []);
  });
});

test("doctor() through a symbolic link measures the -wal beside the file the link leads to", async () => {
  const path = copyFixture("hermes-v11.db");
  chmodSync(path, 0o600);
  liveWalOf(path, "UPDATE messages SET content = content || ' and more'");
  const link = join(tempDir(), "link.db");
  symlinkSync(path, link);
  const wal = (report: DoctorReport) => report.checks.find((c) => c.name === "wal")?.summary;
  const direct = wal(await doctor(path));
  assert.match(direct ?? "", /^WAL 0\.[1-9]/);
  assert.equal(wal(await doctor(link)), direct);
});
