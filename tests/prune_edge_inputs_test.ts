/**
 * Odd inputs to the commands that remove data: `prune --dry-run` against
 * the real run, ages at the edges, source names holding LIKE wildcards,
 * `delete` of a shared id prefix and of a session with children.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, runCli, v11Copy, withDb } from "./_cli_io.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { rawOpen } from "./_helpers.ts";

const NOW = 1_800_000_000;
const DAY = 86_400;

/** Ended sessions of tricky sources, started a year before NOW; one open; one child. */
function wildcardFile(): Promise<string> {
  return buildDb((db, clock) => {
    clock.now = NOW - 365 * DAY;
    for (const [id, source] of [["pct", "c%"], ["und", "c_i"], ["cli", "cli"], ["cxi", "cxi"]]) {
      db.createSession(id, source);
      db.appendMessage(id, { role: "user", content: `words of ${id}` });
      db.endSession(id, "done");
    }
    db.createSession("open", "cli");
    db.createSession("kid", "cli", { parentSessionId: "cli" });
    db.appendMessage("kid", { role: "user", content: "kid words" });
    db.endSession("kid", "done");
  }, { start: NOW - 365 * DAY });
}

async function ids(path: string): Promise<string[]> {
  return await withDb(path, (db) => db.searchSessions({ limit: 100 }).map((s) => s.id).sort());
}

async function ftsRows(path: string): Promise<number[]> {
  using db = await rawOpen(path, true);
  return ["messages", "messages_fts", "messages_fts_trigram"].map((table) =>
    Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()!.n)
  );
}

describe("prune --dry-run and the real run", () => {
  for (
    const args of [
      [],
      ["--older-than", "0"],
      ["--source", "cron"],
      ["--older-than", "100", "--source", "telegram"],
      ["--ghosts"],
    ]
  ) {
    test(`prune ${args.join(" ")} deletes exactly what its dry run lists`, async () => {
      const path = v11Copy();
      const before = await ids(path);
      const dry = await runCli(["--db", path, "--json", "prune", "--dry-run", ...args]);
      assert.equal(dry.code, 0, dry.err);
      const listed = JSON.parse(dry.out).sessions.map((s: { id: string }) => s.id).sort();
      assert.deepEqual(await ids(path), before, "the dry run deleted nothing");
      const real = await runCli(["--db", path, "--json", "prune", "--yes", ...args]);
      assert.equal(real.code, 0, real.err);
      assert.deepEqual(JSON.parse(real.out), { pruned: listed.length });
      const after = await ids(path);
      assert.deepEqual(before.filter((id) => !after.includes(id)), listed);
      const [messages, fts, trigram] = await ftsRows(path);
      assert.deepEqual([fts, trigram], [messages, messages]);
    });
  }
});

describe("prune at the edges", () => {
  test("prune --older-than 0 deletes every ended session and keeps the open one and the child", async () => {
    const path = await wildcardFile();
    const run = await runCli(["--db", path, "--json", "prune", "--older-than", "0", "--yes"], {
      now: NOW,
    });
    assert.deepEqual(JSON.parse(run.out), { pruned: 5 });
    assert.deepEqual(await ids(path), ["open"]);
    assert.deepEqual(await ftsRows(path), [0, 0, 0]);
  });

  test("a source holding % or _ matches that source only, never as a pattern", async () => {
    const path = await wildcardFile();
    for (const [source, gone] of [["%", []], ["_", []], ["c_i", ["und"]], ["c%", ["pct"]]]) {
      const run = await runCli(
        [
          "--db",
          path,
          "--json",
          "prune",
          "--older-than",
          "0",
          "--source",
          source as string,
          "--yes",
        ],
        { now: NOW },
      );
      assert.equal(run.code, 0, run.err);
      assert.deepEqual(JSON.parse(run.out), { pruned: gone.length }, `--source ${source}`);
    }
    assert.deepEqual(await ids(path), ["cli", "cxi", "kid", "open"]);
  });

  test("prune refuses a negative, fractional, huge or non-numeric age before writing", async () => {
    const path = await wildcardFile();
    for (const days of ["-1", "NaN", "1e3", "0x10", "99999999999999999999", "1.5", "Infinity"]) {
      const run = await runCli(["--db", path, "prune", "--older-than", days, "--yes"], {
        now: NOW,
      });
      assert.equal(run.code, 2, `--older-than ${days}: ${run.err}`);
      // A whole number past the largest exact one names the bound it passed.
      const range = days === "99999999999999999999"
        ? "from 0 to 9007199254740991"
        : "of at least 0";
      assert.match(run.err, new RegExp(`--older-than must be a whole number ${range}, got`));
    }
    const largest = await runCli(
      ["--db", path, "--json", "prune", "--older-than", String(Number.MAX_SAFE_INTEGER), "--yes"],
      { now: NOW },
    );
    assert.deepEqual(JSON.parse(largest.out), { pruned: 0 });
    assert.equal((await ids(path)).length, 6);
  });

  test("pruneSessions() and pruneCandidates() take the largest finite age and delete nothing", async () => {
    const path = await wildcardFile();
    using db = await SessionDB.open({ path, clock: () => NOW });
    assert.deepEqual(db.pruneCandidates({ olderThanDays: Number.MAX_VALUE }), []);
    assert.equal(db.pruneSessions({ olderThanDays: Number.MAX_VALUE }), 0);
    for (const days of [NaN, Infinity, -1, -Number.MIN_VALUE]) {
      assert.throws(() => db.pruneSessions({ olderThanDays: days }), RangeError);
    }
    assert.equal(db.sessionCount(), 6);
  });
});

describe("delete of odd arguments", () => {
  test("delete of an id prefix several sessions share deletes nothing", async () => {
    const path = await wildcardFile();
    const run = await runCli(["--db", path, "delete", "c", "--yes"], { now: NOW });
    assert.equal(run.code, 1);
    assert.match(run.err, /is ambiguous: matches 2 sessions/);
    assert.equal((await ids(path)).length, 6);
  });

  test("delete of an id holding % or _ deletes that session only", async () => {
    const path = await buildDb((db) => {
      for (const id of ["a%b", "aXb", "a_b", "azb"]) db.createSession(id, "cli");
    });
    for (const word of ["a%", "a_"]) {
      const run = await runCli(["--db", path, "delete", word, "--yes"]);
      assert.equal(run.code, 0, `${word}: ${run.err}`);
    }
    assert.deepEqual(await ids(path), ["aXb", "azb"]);
  });

  test("delete of a session with children keeps them, their messages, their FTS rows and their own children", async () => {
    const path = await buildDb((db) => {
      db.createSession("root", "cli");
      db.appendMessage("root", { role: "user", content: "root words" });
      db.createSession("mid", "cli", { parentSessionId: "root" });
      db.appendMessage("mid", { role: "user", content: "mid words" });
      db.createSession("leaf", "cli", { parentSessionId: "mid" });
      db.appendMessage("leaf", { role: "user", content: "leaf words" });
    });
    const run = await runCli(["--db", path, "delete", "mid", "--yes"]);
    assert.equal(run.code, 0, run.err);
    const left = await withDb(path, (db) => ({
      leafParent: db.getSession("leaf")?.parent_session_id,
      rootParent: db.getSession("root")?.parent_session_id,
      hits: db.searchMessages("words").map((h) => h.session_id).sort(),
    }));
    assert.deepEqual(left, { leafParent: null, rootParent: null, hits: ["leaf", "root"] });
    assert.deepEqual(await ftsRows(path), [2, 2, 2]);
  });
});
