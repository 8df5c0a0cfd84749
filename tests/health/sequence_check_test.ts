/**
 * The message id sequence behind the largest id (a hand edit, a bad
 * restore): `doctor` warns, `doctor --fix` raises it, and an id deleted
 * from the top is then never given again.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { doctor, type DoctorReport } from "../../lib/health/doctor.ts";
import type { HealthCheck } from "../../lib/core/health_report.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { copyFixture, rawOpen, tempDbPath } from "../_helpers.ts";

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

/** A file of three messages (ids 1–3) whose sequence says 1. */
async function sequenceBehind(): Promise<string> {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path });
    db.createSession("a", "cli");
    for (const content of ["one", "two", "three"]) db.appendMessage("a", { role: "user", content });
  }
  using raw = await rawOpen(path);
  raw.exec("UPDATE sqlite_sequence SET seq = 1 WHERE name = 'messages'");
  return path;
}

/** Adds a message of session `a` with the id `id` (digits: past 2^53), as a raw import would. */
async function addMessageOfId(path: string, id: string): Promise<void> {
  using raw = await rawOpen(path);
  raw.exec(`INSERT INTO messages (id, session_id, role, content, timestamp)
            VALUES (${id}, 'a', 'user', 'far', 1)`);
}

/** Deletes the newest message, as deleting its session would, and appends one: its id. */
async function idAfterDeletingTheNewest(path: string): Promise<number> {
  {
    using raw = await rawOpen(path);
    raw.exec("DELETE FROM messages WHERE id = (SELECT max(id) FROM messages)");
  }
  using db = await SessionDB.open({ path });
  return db.appendMessage("a", { role: "user", content: "four" });
}

describe("the sequence check", () => {
  test("doctor() warns of a message id sequence behind the largest id, and --fix raises it so a deleted id is not given again", async () => {
    const path = await sequenceBehind();
    const report = await doctor(path);
    const sequence = check(report, "sequence");
    assert.equal(sequence.status, "warning");
    assert.match(sequence.summary, /^message id sequence 1, largest id 3: /);
    assert.equal(sequence.fixable, true);
    assert.equal(report.healthy, true, "a warning: every row is sound");

    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(
      fixed.repairs.filter((r) => r.name === "sequence").map((r) => r.summary),
      ["raised the message id sequence 1 → 3"],
    );
    assert.equal(check(fixed, "sequence", "after").status, "ok");
    assert.equal(await idAfterDeletingTheNewest(path), 4);
  });

  test("without the fix, SQLite gives the deleted newest id again (why the check exists)", async () => {
    const path = await sequenceBehind();
    assert.equal(await idAfterDeletingTheNewest(path), 3);
  });

  test("doctor() finds the sequence of a sound file ok, and of a file whose sequence row is gone behind", async () => {
    const path = await sequenceBehind();
    {
      using raw = await rawOpen(path);
      raw.exec("UPDATE sqlite_sequence SET seq = 3 WHERE name = 'messages'");
    }
    assert.equal(
      check(await doctor(path), "sequence").summary,
      "message id sequence 3, largest id 3",
    );
    {
      using raw = await rawOpen(path);
      raw.exec("DELETE FROM sqlite_sequence WHERE name = 'messages'");
    }
    assert.equal(check(await doctor(path), "sequence").status, "warning");
    const fixed = await doctor(path, { fix: true });
    assert.equal(check(fixed, "sequence", "after").summary, "message id sequence 3, largest id 3");
  });

  test("doctor() calls the sequence of a migrated v10 file without AUTOINCREMENT ok", async () => {
    const path = copyFixture("hermes-v10-external.db");
    (await SessionDB.open({ path })).close();
    assert.equal(
      check(await doctor(path), "sequence").summary,
      "messages keeps no id sequence (no AUTOINCREMENT or no sqlite_sequence)",
    );
  });

  test("doctor() says a sequence at 2^63 - 1 leaves no append, and --fix lowers it once those ids are gone", async () => {
    // One imported id of 2^63 - 1 left a file where every append failed ("database or disk is full").
    const path = await sequenceBehind();
    await addMessageOfId(path, "9223372036854775807");
    const full = check(await doctor(path), "sequence");
    assert.equal(full.status, "problem");
    assert.equal(
      full.summary,
      "message id sequence 9,223,372,036,854,775,807, largest id 9,223,372,036,854,775,807: 0 " +
        "more messages fit before SQLite refuses every append (database or disk is full)",
    );
    assert.equal(full.fixable ?? false, false);
    assert.match(full.fix ?? "", /import them into a new file, which gives new ids/);
    {
      using raw = await rawOpen(path);
      raw.exec("DELETE FROM messages WHERE id = 9223372036854775807");
    }
    const gone = check(await doctor(path), "sequence");
    assert.equal(gone.status, "problem", "the sequence stays where it was");
    assert.equal(gone.fixable, true);
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(
      fixed.repairs.filter((r) => r.name === "sequence").map((r) => r.summary),
      ["lowered the message id sequence 9223372036854775807 → 3"],
    );
    assert.equal(check(fixed, "sequence", "after").status, "ok");
    using db = await SessionDB.open({ path });
    assert.equal(db.appendMessage("a", { role: "user", content: "four" }), 4);
  });

  test("doctor() warns of a sequence past 2^62, saying how many appends are left", async () => {
    const path = await sequenceBehind();
    await addMessageOfId(path, "4611686018427387905");
    const far = check(await doctor(path), "sequence");
    assert.equal(far.status, "warning");
    assert.match(far.summary, /: 4,611,686,018,427,387,902 more messages fit before/);
  });
});
