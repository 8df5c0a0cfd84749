/**
 * A deleted or pruned session takes its per-session `state_meta` keys (its
 * goal, `goal:<id>`, `SESSION_META_PREFIXES`) with it, in the same
 * transaction, on both engines: `deleteSession`, `pruneSessions`,
 * `pruneEmptyGhostSessions`, and on PostgreSQL `origins --remove`. They used
 * to stay behind, orphans nothing could reach. Other sessions' goals and the
 * file's own keys stay.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { tempDbPath, tempDir } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { freshSchema, openPgStore, PG_SKIP, schemaUrl } from "./_pg.ts";

/** A goal's JSON text, as Python Hermes writes it. */
function goal(text: string): string {
  return JSON.stringify({ goal: text, status: "active", turns: 0 });
}

/** A clock the test moves: seconds since the epoch. */
interface Clock {
  now: number;
}

/** The keys the test looks at, with their values (undefined when gone). */
async function keys(
  store: SessionStore,
  names: readonly string[],
): Promise<Record<string, unknown>> {
  const entries = await Promise.all(names.map(async (name) => [name, await store.getMeta(name)]));
  return Object.fromEntries(entries);
}

/** Sessions `ids` with a goal each, ended, started at the clock's time; plus a file-wide key. */
async function withGoals(store: SessionStore, ids: readonly string[], source = "cli") {
  for (const id of ids) {
    await store.createSession(id, source);
    await store.setMeta(`goal:${id}`, goal(`the goal of ${id}`));
    await store.endSession(id, "cli_close");
  }
  await store.setMeta("last_auto_prune", "1764800000.5");
}

/** The cleanup cases, run on the engine `open` opens (a fresh, empty store at `clock`). */
function cleanupCases(name: string, open: (clock: Clock) => Promise<SessionStore>): void {
  describe(`${name}: per-session keys go with their session`, () => {
    test("deleteSession deletes the session's goal, no other key", async () => {
      const clock = { now: 1_764_800_000 };
      await using store = await open(clock);
      await withGoals(store, ["a", "b"]);
      await store.setMeta("goal:ab", goal("of an id that starts like a's"));
      assert.equal(await store.deleteSession("a"), true);
      assert.deepEqual(await keys(store, ["goal:a", "goal:b", "goal:ab", "last_auto_prune"]), {
        "goal:a": undefined,
        "goal:b": goal("the goal of b"),
        "goal:ab": goal("of an id that starts like a's"),
        "last_auto_prune": "1764800000.5",
      });
      // A missing session deletes nothing, not even a key of its id.
      await store.setMeta("goal:nobody", goal("left by hand"));
      assert.equal(await store.deleteSession("nobody"), false);
      assert.equal(await store.getMeta("goal:nobody"), goal("left by hand"));
    });

    test("pruneSessions deletes the goals of the pruned sessions only", async () => {
      const clock = { now: 1_764_800_000 };
      await using store = await open(clock);
      await withGoals(store, ["old-1", "old-2"]);
      clock.now += 100 * 86400;
      await withGoals(store, ["recent"]);
      assert.equal(await store.pruneSessions({ olderThanDays: 90 }), 2);
      assert.deepEqual(await keys(store, ["goal:old-1", "goal:old-2", "goal:recent"]), {
        "goal:old-1": undefined,
        "goal:old-2": undefined,
        "goal:recent": goal("the goal of recent"),
      });
    });

    test("pruneEmptyGhostSessions deletes the ghosts' goals", async () => {
      const clock = { now: 1_764_800_000 };
      await using store = await open(clock);
      await withGoals(store, ["ghost"], "tui");
      await withGoals(store, ["kept"], "cli");
      clock.now += 2 * 86400;
      assert.equal(await store.pruneEmptyGhostSessions(), 1);
      assert.deepEqual(await keys(store, ["goal:ghost", "goal:kept"]), {
        "goal:ghost": undefined,
        "goal:kept": goal("the goal of kept"),
      });
    });
  });
}

cleanupCases("sqlite", (clock) => openStore(tempDbPath(), { clock: () => clock.now }));

if (PG_SKIP) {
  describe("postgres: per-session keys go with their session", { skip: PG_SKIP }, () => {});
} else {
  cleanupCases("postgres", (clock) => openPgStore({ clock: () => clock.now }));

  test("postgres: origins --remove deletes the goals of the origin's sessions", {
    timeout: 60_000,
  }, async () => {
    const path = join(tempDir(), "state.db");
    const db = await SessionDB.open({ path });
    db.createSession("a", "cli");
    db.appendMessage("a", { role: "user", content: "hello" });
    db.setMeta("goal:a", goal("ship it"));
    db.close();
    const url = schemaUrl(freshSchema());
    const synced = await runCli(["sync", path, "--to", url, "--origin", "A"]);
    assert.equal(synced.code, 0, synced.err);
    await using store = await openStore(url);
    await store.setMeta("goal:B/a", goal("of another origin's session"));
    assert.equal(await store.getMeta("goal:A/a"), goal("ship it"));

    const removed = await runCli(["--db", url, "origins", "--remove", "A", "--yes"]);
    assert.equal(removed.code, 0, removed.err);
    assert.deepEqual(await keys(store, ["goal:A/a", "goal:B/a"]), {
      "goal:A/a": undefined,
      "goal:B/a": goal("of another origin's session"),
    });
  });
}
