/**
 * Damage only in an index (the table data whole): `doctor` says REINDEX
 * mends it, and `doctor --fix` rebuilds exactly those indexes, in one
 * transaction, checks again, and changes no row. Damage anywhere else
 * still goes to `recover`. Real files, damaged by SQLite itself
 * (`indexOutOfStep`).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { doctor, type DoctorReport } from "../../lib/health/doctor.ts";
import { damagedIndexes } from "../../lib/health/index_check.ts";
import type { HealthCheck } from "../../lib/core/health_report.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { indexOutOfStep } from "./_damaged_files.ts";

function check(
  report: DoctorReport,
  name: string,
  when: "before" | "after" = "before",
): HealthCheck {
  const found = (when === "before" ? report.checks : report.after ?? []).find((c) =>
    c.name === name
  );
  assert.ok(found, `no check ${name}`);
  return found;
}

function notOk(checks: readonly HealthCheck[]): string[] {
  return checks.filter((c) => c.status !== "ok").map((c) => `${c.name}: ${c.summary}`);
}

async function smallFile(): Promise<string> {
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  db.createSession("a", "cli");
  db.createSession("b", "cli");
  db.setSessionTitle("a", "notes");
  db.appendMessage("a", { role: "user", content: "deploy docker to staging" });
  db.appendMessage("a", { role: "assistant", content: "done" });
  db.appendMessage("b", { role: "user", content: "记忆断裂排查" });
  return path;
}

/** Every row of the two tables, and what SQLite's whole-file check says. */
async function state(path: string): Promise<{ rows: string; integrity: string[] }> {
  using db = await rawOpen(path, true);
  const rows = JSON.stringify([
    db.prepare("SELECT * FROM sessions ORDER BY id").all(),
    db.prepare("SELECT * FROM messages ORDER BY id").all(),
  ]);
  const integrity = db.prepare("PRAGMA integrity_check").all().map((r) =>
    String(Object.values(r)[0])
  );
  return { rows, integrity };
}

/** A message SQLite kept out of `idx_messages_session` (its count bumped with it). */
function messageMissingFromIndex(path: string): void {
  indexOutOfStep(
    path,
    "idx_messages_session",
    "CREATE INDEX idx_messages_session ON messages(session_id, timestamp) WHERE 0",
    `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('b', 'user', 'late', 9e9);
     UPDATE sessions SET message_count = message_count + 1 WHERE id = 'b';`,
  );
}

describe("doctor() on damage only in an index", () => {
  test("doctor() says the table data is whole and --fix rebuilds it (REINDEX), not recover", async () => {
    const path = await smallFile();
    messageMissingFromIndex(path);
    const { integrity: lines } = await state(path);
    assert.ok(lines.includes("row 4 missing from index idx_messages_session"), lines.join("\n"));
    // The quick check (the default) sees the count; the full one each row.
    for (const full of [false, true]) {
      const report = await doctor(path, { full });
      const integrity = check(report, "integrity");
      assert.equal(integrity.status, "problem");
      assert.equal(integrity.fixable, true);
      assert.equal(
        integrity.summary,
        "1 index no longer matches its table (idx_messages_session); the table data is whole",
      );
      assert.match(integrity.fix ?? "", /^hermes-state doctor --fix \(.*REINDEX\)$/);
      assert.doesNotMatch(integrity.fix ?? "", /recover/);
      assert.equal(report.healthy, false);
    }
  });

  test("doctor() with fix rebuilds exactly the damaged index in one transaction, checks it again, and changes no row", async () => {
    const path = await smallFile();
    messageMissingFromIndex(path);
    const before = await state(path);
    const report = await doctor(path, { fix: true, full: true });
    assert.deepEqual(report.repairs.map((r) => r.name), ["integrity", "wal"]);
    assert.equal(
      report.repairs[0].summary,
      "rebuilt idx_messages_session (REINDEX, one transaction); " +
        "integrity_check of their tables: ok",
    );
    // The counters read through the index looked wrong; read through the rebuilt one, they match.
    assert.deepEqual(notOk(report.after ?? []), []);
    assert.equal(report.healthy, true);
    const after = await state(path);
    assert.equal(after.rows, before.rows);
    assert.deepEqual(after.integrity, ["ok"]);
    using db = await SessionDB.open({ path, readonly: true });
    assert.equal(db.getMessages("b").length, 2, "the session's messages are found by the index");
  });

  test("doctor() with fix gives the later session of a title two share the next title, then builds the unique index again", async () => {
    const path = await smallFile();
    indexOutOfStep(
      path,
      "idx_sessions_title_unique",
      "CREATE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL",
      "UPDATE sessions SET title = 'notes' WHERE id = 'b';",
    );
    const report = await doctor(path, { full: true });
    assert.equal(
      check(report, "integrity").summary,
      "1 index no longer matches its table (idx_sessions_title_unique); the table data is whole",
    );
    const fixed = await doctor(path, { fix: true, full: true });
    assert.equal(
      fixed.repairs[0].summary,
      "rebuilt idx_sessions_title_unique (REINDEX, one transaction); " +
        'renamed 1 sessions sharing a title: b "notes" → "notes #2"; ' +
        "integrity_check of their tables: ok",
    );
    assert.deepEqual(notOk(fixed.after ?? []), []);
    assert.deepEqual((await state(path)).integrity, ["ok"]);
    using db = await rawOpen(path, true);
    assert.deepEqual(
      db.prepare("SELECT sql FROM sqlite_master WHERE name = 'idx_sessions_title_unique'").get(),
      {
        sql:
          "CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL",
      },
    );
  });
});

describe("doctor() on an index that lists rows its table no longer holds", () => {
  test("doctor() sends it to recover, naming the witness, and --fix writes nothing", async () => {
    // What a table page gone back to an older version looks like (a write lost): its rows are
    // gone, the index still lists them, and SQLite's check says only "wrong # of entries".
    const path = await smallFile();
    indexOutOfStep(
      path,
      "idx_messages_session",
      "CREATE INDEX idx_messages_session ON messages(session_id, timestamp) WHERE 0",
      "DELETE FROM messages WHERE id = 3;",
    );
    {
      using db = await rawOpen(path);
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    assert.deepEqual((await state(path)).integrity, [
      "wrong # of entries in index idx_messages_session",
    ]);
    const before = await state(path);
    for (const fix of [false, true]) {
      const report = await doctor(path, { fix, full: true });
      const integrity = check(report, "integrity");
      assert.equal(integrity.fixable, false);
      assert.match(integrity.fix ?? "", /^the file is damaged: hermes-state recover /);
      assert.match(
        integrity.details[0],
        /^index idx_messages_session lists 1 row its table no longer holds: .*recover names them/,
      );
      assert.deepEqual(report.repairs, []);
    }
    assert.equal((await state(path)).rows, before.rows);
  });
});

describe("damagedIndexes()", () => {
  test("damagedIndexes() names each index once when every line is an index fault", () => {
    assert.deepEqual(
      damagedIndexes([
        "wrong # of entries in index idx_messages_session",
        "row 4 missing from index idx_messages_session",
        "non-unique entry in index idx_sessions_title_unique",
      ]),
      ["idx_messages_session", "idx_sessions_title_unique"],
    );
  });

  test("damagedIndexes() answers undefined when any line is about pages, cells or values", () => {
    const fault = "row 4 missing from index idx_messages_session";
    for (
      const other of [
        "Tree 5 page 5 cell 0: invalid page number 4294967295",
        "*** in database main ***\nPage 7: never used",
        "NULL value in messages.role",
        "database disk image is malformed",
      ]
    ) {
      assert.equal(damagedIndexes([fault, other]), undefined, other);
    }
    assert.equal(damagedIndexes([]), undefined);
  });
});
