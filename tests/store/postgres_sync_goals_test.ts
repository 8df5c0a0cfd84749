/**
 * `syncFile()` and the goals Python Hermes keeps in `state_meta`
 * (`goal:<session id>`): each reaches the server with its session, as
 * `goal:<origin>/<id>`, so two hosts' goals of sessions with the same id
 * never overwrite each other; a goal changed or removed on the host, or
 * whose session was deleted there, is changed or removed on the server by
 * the next pass; an unchanged pass writes nothing; the file's other keys
 * stay on the host. Sync used to carry no goal at all.
 */
import { describe } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { copyFixture, rawOpen, tempDir } from "../_helpers.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";
import { sideBySideTests } from "../_side_by_side.ts";
import { runCli } from "../_cli_io.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A goal's JSON text, as Python Hermes writes it. */
function goal(text: string, status = "active", turns = 0): string {
  return JSON.stringify({ goal: text, status, turns });
}

/** The server's `state_meta`, by key. */
async function serverMeta(client: PgClient): Promise<Record<string, unknown>> {
  const rows = await client.query('SELECT key, value FROM state_meta ORDER BY key COLLATE "C"');
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}

/** The transaction ids that last wrote each row of the sync's tables (what a pass wrote). */
async function rowVersions(client: PgClient): Promise<string[]> {
  const rows = await client.query(
    `SELECT 'm ' || key || ' ' || xmin::text AS v FROM state_meta
     UNION ALL SELECT 's ' || session_id || ' ' || xmin::text FROM sync_sessions
     UNION ALL SELECT 'r ' || id || ' ' || xmin::text FROM sessions ORDER BY 1`,
  );
  return rows.map((row) => String(row.v));
}

/** A new file of sessions `ids`, one message each; a session `a` with a system prompt. */
async function fileOf(ids: readonly string[]): Promise<{ path: string; db: SessionDB }> {
  const path = join(tempDir(), "state.db");
  const db = await SessionDB.open({ path });
  for (const id of ids) {
    db.createSession(id, "cli", { systemPrompt: `the prompt of ${id}` });
    db.appendMessage(id, { role: "user", content: `hello from ${id}` });
  }
  return { path, db };
}

/** Deletes a `state_meta` key of the file (Hermes clears a goal so). */
async function deleteKey(path: string, key: string): Promise<void> {
  using raw = await rawOpen(path);
  raw.exec(`DELETE FROM state_meta WHERE key = '${key}'`);
}

describe("sync of the sessions' goals", { skip: SKIP }, () => {
  /**
   * The tests run side by side, each on a schema and files of its own: most of a test's time is
   * the server's (migrating its schema, taking the rows), which the others' work fills.
   */
  const sideBySide = sideBySideTests({ skip: SKIP, timeout: 120_000 });
  const test = (name: string, _options: { timeout: number }, body: () => Promise<void>) =>
    sideBySide(name, body);

  async function connect(): Promise<{
    client: PgClient;
    sync: typeof import("../../lib/postgres/sync.ts");
  }> {
    const sync = await import("../../lib/postgres/sync.ts");
    return { client: await sync.connectSyncTarget(schemaUrl(freshSchema())), sync };
  }

  test("first pass, changed goal, removed goal, deleted session; no other key", {
    timeout: 60_000,
  }, async () => {
    const { client, sync } = await connect();
    try {
      const { path, db } = await fileOf(["a", "b", "c"]);
      db.setMeta("goal:a", goal("ship the release"));
      db.setMeta("goal:b", goal("fix the build"));
      db.setMeta("goal:gone", goal("of a session the file does not hold"));
      db.setMeta("last_auto_prune", "1764800000.5");
      db.setMeta("goals:a", "not a goal key");

      const first = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.equal(first.created, 3);
      assert.equal(first.goals, 2);
      assert.deepEqual(await serverMeta(client), {
        "goal:A/a": goal("ship the release"),
        "goal:A/b": goal("fix the build"),
      });

      // Its status and turns change the text (the session's row and messages do not).
      db.setMeta("goal:a", goal("ship the release", "active", 3));
      const changed = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual(
        { ...changed, origin: undefined },
        {
          origin: undefined,
          created: 0,
          updated: 0,
          deleted: 0,
          appended: 0,
          rewritten: 0,
          messages: 0,
          goals: 1,
          notShipped: [],
        },
      );
      assert.equal((await serverMeta(client))["goal:A/a"], goal("ship the release", "active", 3));
      // The row written with the goal keeps its system prompt (a pass reads only its length).
      const [row] = await client.query("SELECT system_prompt FROM sessions WHERE id = 'A/a'");
      assert.equal(row.system_prompt, "the prompt of a");

      // A goal and a message of one session in one pass.
      db.setMeta("goal:a", goal("ship the release", "done", 4));
      db.appendMessage("a", { role: "assistant", content: "done" });
      const both = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual([both.appended, both.goals], [1, 1]);
      assert.equal((await serverMeta(client))["goal:A/a"], goal("ship the release", "done", 4));

      await deleteKey(path, "goal:b");
      const removed = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual([removed.goals, removed.updated, removed.messages], [1, 0, 0]);
      assert.deepEqual(Object.keys(await serverMeta(client)), ["goal:A/a"]);

      // A goal given to a session the server holds without one.
      db.setMeta("goal:c", goal("write the docs"));
      assert.equal((await sync.syncFile(client, path, { host: "h", origin: "A" })).goals, 1);
      assert.deepEqual(Object.keys(await serverMeta(client)), ["goal:A/a", "goal:A/c"]);

      // Deleted on the host, its goal key left behind as Python's delete leaves it: gone on the
      // server all the same.
      db.deleteSession("a");
      db.setMeta("goal:a", goal("left behind"));
      const deleted = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.equal(deleted.deleted, 1);
      assert.deepEqual(await serverMeta(client), { "goal:A/c": goal("write the docs") });
      db.close();
    } finally {
      await client.close();
    }
  });

  test("two hosts' sessions of the same id keep their own goals", {
    timeout: 60_000,
  }, async () => {
    const { client, sync } = await connect();
    try {
      const one = await fileOf(["same"]);
      const two = await fileOf(["same"]);
      one.db.setMeta("goal:same", goal("host one's"));
      two.db.setMeta("goal:same", goal("host two's"));
      await sync.syncFile(client, one.path, { host: "one", origin: "one" });
      await sync.syncFile(client, two.path, { host: "two", origin: "two" });
      assert.deepEqual(await serverMeta(client), {
        "goal:one/same": goal("host one's"),
        "goal:two/same": goal("host two's"),
      });
      two.db.setMeta("goal:same", goal("host two's", "paused", 2));
      await sync.syncFile(client, two.path, { host: "two", origin: "two" });
      await deleteKey(one.path, "goal:same");
      await sync.syncFile(client, one.path, { host: "one", origin: "one" });
      assert.deepEqual(await serverMeta(client), {
        "goal:two/same": goal("host two's", "paused", 2),
      });
      one.db.close();
      two.db.close();
    } finally {
      await client.close();
    }
  });

  test("an unchanged pass writes nothing, goals or records", { timeout: 60_000 }, async () => {
    const { client, sync } = await connect();
    try {
      const path = copyFixture("hermes-v11.db");
      const first = await sync.syncFile(client, path, { host: "h", origin: "py" });
      // The Python fixture's one goal; its other keys stay on the host.
      assert.equal(first.goals, 1);
      assert.deepEqual(Object.keys(await serverMeta(client)), ["goal:py/20260425_090019_d38f1d"]);
      const before = await rowVersions(client);
      const again = await sync.syncFile(client, path, { host: "h", origin: "py" });
      assert.equal(sync.wroteAnything(again), false);
      assert.equal(again.goals, 0);
      assert.deepEqual(await rowVersions(client), before);
    } finally {
      await client.close();
    }
  });

  test("a pass that fails midway keeps its batches' goals; the next ships the rest", {
    timeout: 60_000,
  }, async () => {
    const { client, sync } = await connect();
    try {
      // Several batches (about 2,000 messages each): a goal in each.
      const path = join(tempDir(), "big.db");
      const db = await SessionDB.open({ path });
      for (let s = 0; s < 12; s++) {
        db.createSession(`s${s}`, "cli");
        db.appendMessages(
          `s${s}`,
          Array.from({ length: 500 }, (_, m) => ({ role: "user", content: `s${s} m${m}` })),
        );
        db.setMeta(`goal:s${s}`, goal(`goal ${s}`));
      }
      db.close();
      // The goal of s9 is refused: its batch (session rows, messages, goals, records) fails whole.
      await client.query(`CREATE FUNCTION refuse_s9() RETURNS trigger AS $$
        BEGIN IF NEW.key = 'goal:big/s9' THEN RAISE EXCEPTION 'refused s9'; END IF; RETURN NEW; END
        $$ LANGUAGE plpgsql`);
      await client.query(
        "CREATE TRIGGER refuse BEFORE INSERT ON state_meta FOR EACH ROW EXECUTE FUNCTION refuse_s9()",
      );
      await assert.rejects(sync.syncFile(client, path, { host: "big" }), /refused s9/);
      const held = await client.query("SELECT source_id FROM sync_sessions");
      const goals = Object.keys(await serverMeta(client));
      assert.ok(held.length < 12, `${held.length} sessions held`);
      // Every session the server records has its goal, and no other goal is there.
      assert.deepEqual(goals, held.map((row) => `goal:big/${row.source_id}`).sort());
      await client.query("DROP TRIGGER refuse ON state_meta");
      const next = await sync.syncFile(client, path, { host: "big" });
      assert.equal(next.goals, 12 - held.length);
      const all = await serverMeta(client);
      assert.equal(Object.keys(all).length, 12);
      for (let s = 0; s < 12; s++) assert.equal(all[`goal:big/s${s}`], goal(`goal ${s}`));
      assert.equal((await sync.syncFile(client, path, { host: "big" })).goals, 0);
    } finally {
      await client.close();
    }
  });

  test("a session synced before goals were: its goal is shipped by the next pass", {
    timeout: 60_000,
  }, async () => {
    const { client, sync } = await connect();
    try {
      const { path, db } = await fileOf(["a", "b"]);
      db.setMeta("goal:a", goal("older release"));
      db.close();
      await sync.syncFile(client, path, { host: "h", origin: "A" });
      // As a release before this one left the server: no goal, no digest recorded.
      await client.query("DELETE FROM state_meta");
      await client.query("UPDATE sync_sessions SET meta_digest = NULL");
      const next = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual([next.goals, next.updated, next.messages], [1, 0, 0]);
      assert.deepEqual(await serverMeta(client), { "goal:A/a": goal("older release") });
    } finally {
      await client.close();
    }
  });

  test("copy and sync: a copy's goal gives way to the synced one; copied records go on", {
    timeout: 60_000,
  }, async () => {
    const { client, sync } = await connect();
    const toUrl = schemaUrl(freshSchema());
    const to = await sync.connectSyncTarget(toUrl);
    try {
      const path = copyFixture("hermes-v11.db");
      const fromUrl = schemaUrl(String((await client.query("SELECT current_schema() AS s"))[0].s));
      // The file copied to the server first (its goal under the bare id), then synced.
      assert.equal((await runCli(["copy", path, fromUrl])).code, 0);
      assert.deepEqual(Object.keys(await serverMeta(client)), ["goal:20260425_090019_d38f1d"]);
      await sync.syncFile(client, path, { host: "h", origin: "py" });
      assert.deepEqual(Object.keys(await serverMeta(client)), ["goal:py/20260425_090019_d38f1d"]);
      // Copied to another server with the records of sync: the next pass there ships nothing.
      assert.equal((await runCli(["copy", fromUrl, toUrl])).code, 0);
      assert.deepEqual(Object.keys(await serverMeta(to)), ["goal:py/20260425_090019_d38f1d"]);
      const next = await sync.syncFile(to, path, { host: "h", origin: "py" });
      assert.equal(sync.wroteAnything(next), false);
    } finally {
      await to.close();
      await client.close();
    }
  });
});
