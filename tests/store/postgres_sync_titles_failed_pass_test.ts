/**
 * A `sync` pass that fails after some of its sessions were written loses no
 * title: a session its batch left untitled (both its title and the suffixed
 * one held when the batch settled) or suffixed (its title held by a session
 * a later write gave it up) gets the file's title from the next pass, even
 * one with nothing else to write. The failures are real: a trigger raising
 * on the server on the second batch, or on the settling of titles.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { tempDbPath, waitUntil } from "../_helpers.ts";
import { adminSql, heldTransaction, onFreshSyncTarget, PG_URL, pgEngineSkip } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** The server's titles of the origin's sessions, by id. */
async function titles(client: PgClient, origin: string): Promise<Record<string, unknown>> {
  const rows = await client.query(
    "SELECT id, title FROM sessions WHERE id LIKE $1 ORDER BY id",
    [`${origin}/%`],
  );
  return Object.fromEntries(rows.map((row) => [row.id, row.title]));
}

/** Makes every update of a session in `schema` matching `when` (on OLD and NEW) fail. */
async function failUpdates(schema: string, when: string): Promise<void> {
  await adminSql(`CREATE FUNCTION "${schema}".injected_failure() RETURNS trigger
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`);
  await adminSql(`CREATE TRIGGER injected_failure BEFORE UPDATE ON "${schema}".sessions
    FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION "${schema}".injected_failure()`);
}

/** Removes what {@linkcode failUpdates} added. */
async function stopFailing(schema: string): Promise<void> {
  await adminSql(`DROP TRIGGER injected_failure ON "${schema}".sessions`);
  await adminSql(`DROP FUNCTION "${schema}".injected_failure()`);
}

/**
 * Locks session `id`'s row in `schema` from a connection of its own, until
 * the function returned is called (it waits for the lock to go).
 */
async function holdRow(schema: string, id: string): Promise<() => Promise<void>> {
  const { connectPg } = await import("../../lib/postgres/_client.ts");
  const holder = await connectPg(PG_URL!, schema, { max: 1 });
  const held = heldTransaction(holder, async (query) => {
    await query("SELECT id FROM sessions WHERE id = $1 FOR UPDATE", [id]);
  });
  await held.ready;
  return async () => {
    held.commit();
    try {
      await held.done;
    } finally {
      await holder.close();
    }
  };
}

/** Waits until `sql` (on the test server) gives `n` as its first row's `n`, up to 20 s. */
function until(sql: string, n: number): Promise<void> {
  return waitUntil(
    async () => Number((await adminSql(sql))[0]?.n) === n,
    `${n} from ${sql}`,
    { timeoutMs: 20_000, everyMs: 50 },
  );
}

/**
 * A store where origin A's a1 holds "T", and origin B's p holds "T [B]"
 * (its file says "T"), q and r untitled; then, on B's host, p becomes "U"
 * and q "T", and r gets 2,000 messages, which end the first batch (q, r)
 * before p's: q's batch finds both "T" and "T [B]" held.
 */
async function handOverAcrossBatches(
  client: PgClient,
  syncFile: typeof import("../../lib/postgres/sync.ts").syncFile,
): Promise<string> {
  const a = tempDbPath();
  const dbA = await SessionDB.open({ path: a });
  dbA.createSession("a1", "cli");
  dbA.setSessionTitle("a1", "T");
  dbA.close();
  await syncFile(client, a, { origin: "A", host: "h" });
  const b = tempDbPath();
  const dbB = await SessionDB.open({ path: b });
  dbB.createSession("q", "cli");
  dbB.createSession("r", "cli");
  dbB.createSession("p", "cli");
  dbB.setSessionTitle("p", "T");
  await syncFile(client, b, { origin: "B", host: "h" });
  assert.deepEqual(await titles(client, "B"), { "B/p": "T [B]", "B/q": null, "B/r": null });
  dbB.setSessionTitle("p", "U");
  dbB.setSessionTitle("q", "T");
  dbB.appendMessages(
    "r",
    Array.from({ length: 2000 }, (_, i) => ({ role: "user", content: `m${i}` })),
  );
  dbB.close();
  return b;
}

describe("sync titles after a pass that failed", { skip: SKIP }, () => {
  test("a failure between batches: the session left untitled gets its title next pass", {
    timeout: 60_000,
  }, async () =>
    await onFreshSyncTarget(async ({ schema, client, syncFile }) => {
      const b = await handOverAcrossBatches(client, syncFile);
      // The second batch (p's) fails on the server; the first (q's) commits.
      await failUpdates(schema, "NEW.id = 'B/p'");
      await assert.rejects(syncFile(client, b, { origin: "B", host: "h" }), /injected failure/);
      await stopFailing(schema);
      assert.deepEqual(await titles(client, "B"), { "B/p": "T [B]", "B/q": null, "B/r": null });
      await syncFile(client, b, { origin: "B", host: "h" });
      assert.deepEqual(await titles(client, "B"), { "B/p": "U", "B/q": "T [B]", "B/r": null });
    }));

  test("a failure while titles settle: a next pass with nothing to write settles them", {
    timeout: 60_000,
  }, async () =>
    await onFreshSyncTarget(async ({ schema, client, syncFile }) => {
      const b = await handOverAcrossBatches(client, syncFile);
      // Every batch commits; giving q its title at the end fails. The batches are written side by
      // side and may commit in any order: p's waits for q's here, else it could free "T [B]"
      // first and q's batch take it itself (the update that fails, failing that batch).
      await failUpdates(schema, "NEW.id = 'B/q' AND OLD.title IS NULL AND NEW.title IS NOT NULL");
      const releaseP = await holdRow(schema, "B/p");
      const failed = assert.rejects(
        syncFile(client, b, { origin: "B", host: "h" }),
        /injected failure/,
      );
      try {
        await until(
          `SELECT count(*) AS n FROM "${schema}".messages WHERE session_id = 'B/r'`,
          2000,
        );
      } finally {
        await releaseP();
      }
      await failed;
      await stopFailing(schema);
      assert.deepEqual(await titles(client, "B"), { "B/p": "U", "B/q": null, "B/r": null });
      const next = await syncFile(client, b, { origin: "B", host: "h" });
      assert.equal(next.created + next.updated + next.deleted, 0);
      assert.deepEqual(await titles(client, "B"), { "B/p": "U", "B/q": "T [B]", "B/r": null });
      // Settled: a further pass finds nothing to give back.
      await syncFile(client, b, { origin: "B", host: "h" });
      assert.deepEqual(await titles(client, "B"), { "B/p": "U", "B/q": "T [B]", "B/r": null });
    }));

  test("a swap whose settling failed: both sessions get their file's titles back next pass", {
    timeout: 60_000,
  }, async () =>
    await onFreshSyncTarget(async ({ schema, client, syncFile }) => {
      const path = tempDbPath();
      const db = await SessionDB.open({ path });
      db.createSession("x", "cli");
      db.setSessionTitle("x", "T1");
      db.createSession("y", "cli");
      db.setSessionTitle("y", "T2");
      await syncFile(client, path, { origin: "B", host: "h" });
      // Swapped through a third title, as the unique index on the host requires.
      db.setSessionTitle("x", "tmp");
      db.setSessionTitle("y", "T1");
      db.setSessionTitle("x", "T2");
      db.close();
      // The batch gives both the suffixed titles; giving x "T2" back at the end fails.
      await failUpdates(schema, "NEW.id = 'B/x' AND NEW.title = 'T2'");
      await assert.rejects(syncFile(client, path, { origin: "B", host: "h" }), /injected failure/);
      await stopFailing(schema);
      assert.equal((await titles(client, "B"))["B/x"], "T2 [B]");
      await syncFile(client, path, { origin: "B", host: "h" });
      assert.deepEqual(await titles(client, "B"), { "B/x": "T2", "B/y": "T1" });
    }));
});
