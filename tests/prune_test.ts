import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { ReadonlyError } from "../lib/core/errors.ts";
import { SqliteError } from "../lib/sqlite/driver/sqlite_error.ts";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { parsePythonFloat, pythonFloatRepr } from "../lib/core/python_float.ts";
import { copyFixture, expected, tempDir } from "./_helpers.ts";
import { dbWith, rawAll, type RawMessage, rawRun, type RawSession } from "./_raw_rows.ts";

const aliases = (await expected<Record<string, Record<string, string>>>("aliases.json"))[
  "hermes-v11.db"
];
/** The `last_auto_prune` marker Python wrote into hermes-v11.db. */
const MARKER = 1777454434.567891;
/** A fixed "now" one day after the fixture's last write. */
const NOW = MARKER + 86400.5;
const OLD_IDS = [
  aliases.old_cli,
  aliases.old_telegram,
  aliases.old_cron,
  aliases.old_tui_ghost,
  aliases.old_discord,
  aliases.old_discord_delegate,
];

async function fixtureAt(now: number, readonly = false): Promise<SessionDB> {
  const path = copyFixture("hermes-v11.db");
  if (readonly) (await SessionDB.open({ path })).close();
  return await SessionDB.open({ path, readonly, clock: () => now });
}

async function count(db: SessionDB, sql: string, ...params: string[]): Promise<number> {
  const [row] = await rawAll(db.path, sql, ...params);
  return Number(Object.values(row)[0]);
}

/** A sessions folder holding `names` (empty files). */
function sessionsDir(names: readonly string[]): string {
  const dir = join(tempDir(), "sessions");
  mkdirSync(dir);
  for (const name of names) writeFileSync(join(dir, name), "{}");
  return dir;
}

const FAMILY: RawSession[] = [
  { id: "parent", started_at: 10, ended_at: 20, end_reason: "compression" },
  { id: "child", started_at: 20, parent_session_id: "parent" },
  { id: "grandchild", started_at: 30, parent_session_id: "child" },
];
const FAMILY_MESSAGES: RawMessage[] = [
  { session_id: "parent", role: "user", content: "parent words", timestamp: 11 },
  { session_id: "parent", role: "assistant", content: "more parent words", timestamp: 12 },
  { session_id: "child", role: "user", content: "child words", timestamp: 21 },
];

test("deleteSession() deletes the session and its messages and makes its children roots", async () => {
  using db = await dbWith(FAMILY, FAMILY_MESSAGES);
  assert.equal(db.deleteSession("parent"), true);
  assert.equal(db.getSession("parent"), undefined);
  assert.equal(db.getSession("child")?.parent_session_id, null);
  assert.equal(db.getSession("grandchild")?.parent_session_id, "child");
  assert.equal(await count(db, "SELECT count(*) FROM messages WHERE session_id = 'parent'"), 0);
  assert.equal(await count(db, "SELECT count(*) FROM messages"), 1);
  assert.equal(
    await count(db, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'parent'"),
    0,
  );
  assert.equal(db.deleteSession("parent"), false);
});

test("deleteSession() removes exactly <id>.json, <id>.jsonl and request_dump_<id>_*.json", async () => {
  const id = "20260420_090000_994beb";
  const doomed = [
    `${id}.json`,
    `${id}.jsonl`,
    `request_dump_${id}_1.json`,
    `request_dump_${id}_.json`,
    `request_dump_${id}_a_b.json`,
  ];
  const kept = [
    `${id}.json.bak`,
    `${id}x.json`,
    `x${id}.json`,
    `request_dump_${id}x_1.json`,
    `request_dump_${id}.json`,
    `request_dump_${id}_1.jsonl`,
    "other.json",
  ];
  const dir = sessionsDir([...doomed, ...kept]);
  mkdirSync(join(dir, `request_dump_${id}_dir.json`));
  using db = await dbWith([{ id, started_at: 1 }]);
  assert.equal(db.deleteSession(id, { sessionsDir: dir }), true);
  assert.deepEqual(readdirSync(dir).sort(), [...kept, `request_dump_${id}_dir.json`].sort());
});

test("deleteSession() compares file names literally: no glob patterns, no paths", async () => {
  const dir = sessionsDir([
    "g*.json",
    "gA.json",
    "request_dump_[ab]_1.json",
    "request_dump_a_1.json",
  ]);
  writeFileSync(join(dir, "..", "escape.json"), "{}");
  using db = await dbWith([
    { id: "g*", started_at: 1 },
    { id: "[ab]", started_at: 2 },
    { id: "../escape", started_at: 3 },
  ]);
  for (const id of ["g*", "[ab]", "../escape"]) db.deleteSession(id, { sessionsDir: dir });
  assert.deepEqual(readdirSync(dir).sort(), ["gA.json", "request_dump_a_1.json"]);
  assert.ok(existsSync(join(dir, "..", "escape.json")));
});

test("deleteSession() keeps files when the session does not exist or no folder is given", async () => {
  const dir = sessionsDir(["ghost.json", "real.json"]);
  using db = await dbWith([{ id: "real", started_at: 1 }]);
  assert.equal(db.deleteSession("ghost", { sessionsDir: dir }), false);
  assert.equal(db.deleteSession("real"), true);
  assert.deepEqual(readdirSync(dir).sort(), ["ghost.json", "real.json"]);
  assert.equal(db.deleteSession("missing", { sessionsDir: join(dir, "nope") }), false);
});

test("deleteSession() is all or nothing: a failing delete leaves rows, links and files", async () => {
  using db = await dbWith(FAMILY, FAMILY_MESSAGES);
  await rawRun(db.path, "CREATE TABLE pins (session_id TEXT REFERENCES sessions(id))");
  await rawRun(db.path, "INSERT INTO pins VALUES ('parent')");
  const dir = sessionsDir(["parent.json"]);
  assert.throws(() => db.deleteSession("parent", { sessionsDir: dir }), (err: unknown) => {
    assert.ok(err instanceof SqliteError);
    assert.ok(err.isConstraint);
    return true;
  });
  assert.equal(db.getSession("child")?.parent_session_id, "parent");
  assert.equal(await count(db, "SELECT count(*) FROM messages WHERE session_id = 'parent'"), 2);
  assert.deepEqual(readdirSync(dir), ["parent.json"]);
});

test("pruneSessions() deletes ended sessions started before the cutoff, with their files", async () => {
  using db = await fixtureAt(NOW);
  const dir = sessionsDir([...OLD_IDS.map((id) => `${id}.jsonl`), `${aliases.live}.jsonl`]);
  assert.equal(db.pruneSessions({ sessionsDir: dir }), 6);
  for (const id of OLD_IDS) assert.equal(db.getSession(id), undefined);
  assert.equal(db.sessionCount(), 36);
  assert.equal(db.messageCount(), 197 - 22);
  assert.deepEqual(readdirSync(dir), [`${aliases.live}.jsonl`]);
  assert.equal(db.pruneSessions(), 0);
});

test("pruneSessions() filters by source and by age in days", async () => {
  using db = await fixtureAt(NOW);
  assert.equal(db.pruneSessions({ source: "telegram" }), 1);
  assert.equal(db.getSession(aliases.old_telegram), undefined);
  assert.equal(db.pruneSessions({ olderThanDays: 200 }), 0);
  assert.equal(db.pruneSessions({ olderThanDays: 131 }), 0);
  assert.equal(db.pruneSessions({ olderThanDays: 100 }), 5);
});

test("pruneSessions() never prunes a live session, however old, and orphans children", async () => {
  const day = 86400;
  using db = await dbWith(
    [
      { id: "old_live", started_at: 0 },
      { id: "old_ended", started_at: 1, ended_at: 2, end_reason: "cli_close" },
      { id: "young_ended", started_at: 95 * day, ended_at: 96 * day, end_reason: "cli_close" },
      { id: "kid", started_at: 3, parent_session_id: "old_ended" },
    ],
    [],
    { clock: () => 100 * day },
  );
  assert.equal(db.pruneSessions({ olderThanDays: 90 }), 1);
  assert.deepEqual(db.searchSessions().map((s) => s.id).sort(), ["kid", "old_live", "young_ended"]);
  assert.equal(db.getSession("kid")?.parent_session_id, null);
  assert.throws(() => db.pruneSessions({ olderThanDays: NaN }), {
    name: "RangeError",
    message:
      "Cannot prune sessions: olderThanDays must be a non-negative number: current value is NaN",
  });
});

test("pruneSessions() throws a RangeError naming a negative olderThanDays, as pruneCandidates() does, before writing", async () => {
  using db = await fixtureAt(NOW);
  for (const days of [-1, -0.5, -Infinity]) {
    assert.throws(() => db.pruneSessions({ olderThanDays: days }), {
      name: "RangeError",
      message:
        `Cannot prune sessions: olderThanDays must be a non-negative number: current value is ${days}`,
    });
    assert.throws(() => db.pruneCandidates({ olderThanDays: days }), RangeError);
  }
  assert.equal(db.sessionCount(), 42);
  assert.equal(await count(db, "SELECT count(*) FROM sessions"), 42);
  assert.equal(db.pruneSessions({ olderThanDays: 0 }) > 0, true, "0 days is still accepted");
});

test("pruneEmptyGhostSessions() deletes ended, untitled, empty tui sessions older than a day", async () => {
  using db = await fixtureAt(NOW);
  const dir = sessionsDir([`${aliases.tui_ghost}.json`, `${aliases.tui_session}.json`]);
  assert.equal(db.pruneEmptyGhostSessions({ sessionsDir: dir }), 2);
  assert.equal(db.getSession(aliases.tui_ghost), undefined);
  assert.equal(db.getSession(aliases.old_tui_ghost), undefined);
  assert.notEqual(db.getSession(aliases.tui_session), undefined);
  assert.deepEqual(readdirSync(dir), [`${aliases.tui_session}.json`]);
  assert.equal(db.pruneEmptyGhostSessions(), 0);
});

test("pruneEmptyGhostSessions() keeps young, titled, live and non-tui sessions, and orphans children", async () => {
  const day = 86400;
  const ghost = { source: "tui", ended_at: 2, end_reason: "cli_close" };
  using db = await dbWith(
    [
      { id: "ghost", started_at: 1, ...ghost },
      { id: "young", started_at: 9.5 * day, ...ghost },
      { id: "titled", started_at: 1, ...ghost, title: "kept" },
      { id: "live", source: "tui", started_at: 1 },
      { id: "cli", started_at: 1, ended_at: 2, end_reason: "cli_close" },
      { id: "talker", started_at: 1, ...ghost },
      { id: "kid", started_at: 3, parent_session_id: "ghost" },
    ],
    [{ session_id: "talker", role: "user", content: "hi", timestamp: 1.5 }],
    { clock: () => 10 * day },
  );
  assert.equal(db.pruneEmptyGhostSessions(), 1);
  assert.equal(db.getSession("ghost"), undefined);
  assert.equal(db.getSession("kid")?.parent_session_id, null);
  assert.equal(db.sessionCount(), 6);
});

test("deleteSession(), pruneSessions(), pruneEmptyGhostSessions() and vacuum() refuse a read-only file", async () => {
  using db = await fixtureAt(NOW, true);
  assert.throws(() => db.deleteSession(aliases.live), ReadonlyError);
  assert.throws(() => db.pruneSessions(), ReadonlyError);
  assert.throws(() => db.pruneEmptyGhostSessions(), ReadonlyError);
  assert.throws(() => db.vacuum(), ReadonlyError);
  assert.equal(db.sessionCount(), 42);
});

test("vacuum() gives the pages freed by a prune back", async () => {
  using db = await fixtureAt(NOW);
  const live = await count(db, "SELECT count(*) FROM sessions WHERE ended_at IS NULL");
  assert.equal(db.pruneSessions({ olderThanDays: 0 }), 42 - live);
  const freeBefore = await count(db, "PRAGMA freelist_count");
  assert.ok(freeBefore > 0);
  db.vacuum();
  assert.equal(await count(db, "PRAGMA freelist_count"), 0);
  assert.equal(db.sessionCount(), live);
});

test("maybeAutoPruneAndVacuum() skips when Python's last_auto_prune marker is recent", async () => {
  using db = await fixtureAt(MARKER + 3600);
  assert.deepEqual(db.maybeAutoPruneAndVacuum(), { skipped: true, pruned: 0, vacuumed: false });
  assert.equal(db.sessionCount(), 42);
  assert.equal(db.getMeta("last_auto_prune"), "1777454434.567891");
});

test("maybeAutoPruneAndVacuum() prunes, vacuums and writes the marker as Python's str(time)", async () => {
  using db = await fixtureAt(NOW);
  assert.deepEqual(db.maybeAutoPruneAndVacuum(), { skipped: false, pruned: 6, vacuumed: true });
  const marker = db.getMeta("last_auto_prune")!;
  assert.equal(marker, pythonFloatRepr(NOW));
  assert.equal(Number(marker), NOW);
  assert.equal(db.sessionCount(), 36);
});

test("maybeAutoPruneAndVacuum() writes the marker even when nothing was pruned", async () => {
  using db = await dbWith([], [], { clock: () => 1777600000 });
  assert.deepEqual(db.maybeAutoPruneAndVacuum(), { skipped: false, pruned: 0, vacuumed: false });
  assert.equal(db.getMeta("last_auto_prune"), "1777600000.0");
  assert.deepEqual(db.maybeAutoPruneAndVacuum(), { skipped: true, pruned: 0, vacuumed: false });
});

test("maybeAutoPruneAndVacuum() reads markers as Python's float() does", async () => {
  using db = await fixtureAt(NOW);
  const runs = (marker: string) => {
    db.setMeta("last_auto_prune", marker);
    return !db.maybeAutoPruneAndVacuum({ vacuum: false }).skipped;
  };
  assert.equal(runs(" 1_777_540_000.5\n"), false); // underscores and spaces are fine
  assert.equal(runs("1.7e9"), true);
  assert.equal(runs("9999999999"), false); // in the future: skip
  assert.equal(runs("inf"), false);
  assert.equal(runs("nan"), true);
  assert.equal(runs("soon"), true); // unreadable: as if never run
  assert.equal(runs(""), true);
});

test("maybeAutoPruneAndVacuum() honours retentionDays, minIntervalHours and vacuum: false", async () => {
  using db = await fixtureAt(NOW);
  assert.equal(db.maybeAutoPruneAndVacuum({ minIntervalHours: 48 }).skipped, true);
  assert.deepEqual(db.maybeAutoPruneAndVacuum({ retentionDays: 131, minIntervalHours: 1 }), {
    skipped: false,
    pruned: 0,
    vacuumed: false,
  });
  db.setMeta("last_auto_prune", "0");
  assert.deepEqual(db.maybeAutoPruneAndVacuum({ vacuum: false }), {
    skipped: false,
    pruned: 6,
    vacuumed: false,
  });
});

test("maybeAutoPruneAndVacuum() ignores a VACUUM that cannot run and still writes the marker", {
  // node:sqlite's driver reads an iteration's rows whole: only Bun's leaves a read open.
  skip: runtimeName() !== "bun" && "no unfinished read can be held on node:sqlite (Bun runs it)",
}, async () => {
  using db = await fixtureAt(NOW);
  const exporting = db.iterateExport(); // an unfinished read: SQLite refuses VACUUM meanwhile
  exporting.next();
  assert.deepEqual(db.maybeAutoPruneAndVacuum(), { skipped: false, pruned: 6, vacuumed: false });
  exporting.return(undefined);
  assert.equal(db.getMeta("last_auto_prune"), pythonFloatRepr(NOW));
});

test("maybeAutoPruneAndVacuum() never throws: an error is reported and the marker kept", async () => {
  using db = await fixtureAt(NOW, true);
  const result = db.maybeAutoPruneAndVacuum();
  assert.equal(result.skipped, false);
  assert.equal(result.pruned, 0);
  assert.match(result.error ?? "", /read-only/);
  assert.equal(db.getMeta("last_auto_prune"), "1777454434.567891");
});

test("pythonFloatRepr() and parsePythonFloat() write and read floats as Python does", () => {
  const cases: [number, string][] = [
    [1777454434.567891, "1777454434.567891"],
    [1715000000, "1715000000.0"],
    [0.1, "0.1"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [1e16, "1e+16"],
    [1.5e16, "1.5e+16"],
    [123456789012345.6, "123456789012345.6"],
    [-2.5, "-2.5"],
    [0, "0.0"],
    [-0, "-0.0"],
  ];
  for (const [value, text] of cases) {
    assert.equal(pythonFloatRepr(value), text);
    assert.ok(Object.is(parsePythonFloat(text), value));
  }
  assert.equal(parsePythonFloat("1_0.5"), 10.5);
  assert.equal(parsePythonFloat("-Infinity"), -Infinity);
  assert.equal(parsePythonFloat("1__0"), undefined);
  assert.equal(parsePythonFloat("0x10"), undefined);
});
