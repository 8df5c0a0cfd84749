/**
 * A synced session deleted on the server (`delete`, `prune`) while a `sync`
 * pass of its file runs loses nothing the file holds: the pass does not
 * re-create it holding only the messages it appends (its record would say
 * the server holds them all, and no later pass would ship the rest), and
 * the next pass ships it whole; nor does it count the session in its
 * result (nor one gone from the file that the server deleted first). A
 * delete between the pass's read of its records and its first write does
 * not fail the pass either. The interleavings are real: the deleting
 * transaction is held open on the server until the pass waits for it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { openStore } from "../../lib/open_store.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import {
  heldTransaction,
  onFreshSyncTarget,
  PG_URL,
  pgEngineSkip,
  type SyncTarget,
  waitedOn,
} from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** The contents of a session's messages on the server, in order. */
async function serverContents(url: string, id: string): Promise<unknown[]> {
  await using store = await openStore(url);
  return (await store.getMessages(id)).map((m) => m.content);
}

/** A file with session x (3 messages) and y (1), synced as origin A; then 2 more for x. */
async function syncedThenAppended(
  client: PgClient,
  syncFile: typeof import("../../lib/postgres/sync.ts").syncFile,
): Promise<string> {
  const path = tempDbPath();
  const db = await SessionDB.open({ path });
  db.createSession("x", "cli");
  db.createSession("y", "cli");
  for (const content of ["x0", "x1", "x2"]) db.appendMessage("x", { role: "user", content });
  db.appendMessage("y", { role: "user", content: "y0" });
  await syncFile(client, path, { origin: "A", host: "h" });
  for (const content of ["x3", "x4"]) db.appendMessage("x", { role: "user", content });
  db.close();
  return path;
}

/** What a test works with: a fresh schema, the sync target on it, and an admin connection. */
interface Target extends SyncTarget {
  readonly admin: PgClient;
}

/** Runs `body` on a fresh schema's sync target and an admin connection, both closed after. */
async function onFreshTarget(body: (target: Target) => Promise<void>): Promise<void> {
  const { connectPg } = await import("../../lib/postgres/_client.ts");
  await onFreshSyncTarget(async (target) => {
    const admin = await connectPg(PG_URL!, target.schema, { max: 2 });
    try {
      await body({ ...target, admin });
    } finally {
      await admin.close();
    }
  });
}

/**
 * A pass of `path` (origin A) while the store's delete of session `id` is
 * held open on the server: the pass reads its records (the session still
 * there), takes its token, and waits for the session's row in its batch,
 * when the delete commits.
 */
async function passDuringDelete(target: Target, path: string, id: string) {
  const { deleteSessionsWhere } = await import("../../lib/postgres/_prune.ts");
  const deleting = heldTransaction(target.admin, async (query) => {
    await query(`SET LOCAL search_path TO "${target.schema}"`);
    assert.deepEqual(await deleteSessionsWhere(query, "id = $1", [id]), [id]);
  });
  await deleting.ready;
  const pass = target.syncFile(target.client, path, { origin: "A", host: "h" });
  pass.catch(() => {});
  await waitedOn(target.admin, deleting);
  deleting.commit();
  await deleting.done;
  return await pass;
}

describe("sync and a delete on the server at once", { skip: SKIP }, () => {
  test("deleted while the pass writes it: not re-created in part; the next pass ships it whole", {
    timeout: 60_000,
  }, async () =>
    await onFreshTarget(async (target) => {
      const { url, client, syncFile } = target;
      const path = await syncedThenAppended(client, syncFile);
      const result = await passDuringDelete(target, path, "A/x");
      // Never x holding only x3 and x4.
      const after = await serverContents(url, "A/x");
      assert.ok(after.length === 0 || after.length === 5, JSON.stringify(after));
      // The pass's totals say what it shipped: nothing, when x was left out.
      const shipped = after.length === 0 ? [0, 0, 0, 0] : [1, 2, 2, 0];
      assert.deepEqual(
        [result.updated, result.appended, result.messages, result.goals],
        shipped,
      );
      assert.equal(result.created, 0);
      await syncFile(client, path, { origin: "A", host: "h" });
      assert.deepEqual(await serverContents(url, "A/x"), ["x0", "x1", "x2", "x3", "x4"]);
      assert.deepEqual(await serverContents(url, "A/y"), ["y0"]);
    }));

  test("deleted while the pass writes it alone (past the byte budget): counted for nothing", {
    timeout: 120_000,
  }, async () =>
    await onFreshTarget(async (target) => {
      const { url, client, syncFile } = target;
      const path = await syncedThenAppended(client, syncFile);
      await syncFile(client, path, { origin: "A", host: "h" });
      // 20 messages of about 1 MB (one long token each; the file's search triggers dropped),
      // and a new title: x's row and messages both changed, written alone.
      const raw = await rawOpen(path);
      try {
        raw.exec(`DROP TRIGGER IF EXISTS messages_fts_insert;
          DROP TRIGGER IF EXISTS messages_fts_trigram_insert;
          UPDATE sessions SET title = 'big' WHERE id = 'x'`);
        const insert = raw.prepare(
          `INSERT INTO messages (session_id, role, content, timestamp)
           VALUES ('x', 'user', hex(randomblob(500000)), 1900000000 + ?)`,
        );
        for (let n = 0; n < 20; n++) insert.run(n);
      } finally {
        raw.close();
      }
      const result = await passDuringDelete(target, path, "A/x");
      assert.deepEqual(await serverContents(url, "A/x"), []);
      assert.deepEqual(
        [result.created, result.updated, result.appended, result.messages, result.goals],
        [0, 0, 0, 0, 0],
      );
      const next = await syncFile(client, path, { origin: "A", host: "h" });
      assert.deepEqual([next.created, next.messages], [1, 25]);
      assert.equal((await serverContents(url, "A/x")).length, 25);
    }));

  test("gone from the file and deleted on the server meanwhile: not counted as deleted", {
    timeout: 60_000,
  }, async () =>
    await onFreshTarget(async ({ url, client, syncFile }) => {
      const path = await syncedThenAppended(client, syncFile);
      await syncFile(client, path, { origin: "A", host: "h" });
      {
        await using db = await SessionDB.open({ path });
        assert.equal(db.deleteSession("y"), true);
      }
      // The pass has read its records (y among them) when y is deleted on the server too.
      const result = await syncFile(client, path, {
        origin: "A",
        host: "h",
        afterSnapshot: async () => {
          await using store = await openStore(url);
          assert.equal(await store.deleteSession("A/y"), true);
        },
      });
      assert.equal(result.deleted, 0);
      assert.deepEqual(await serverContents(url, "A/x"), ["x0", "x1", "x2", "x3", "x4"]);
      assert.deepEqual(await serverContents(url, "A/y"), []);
    }));

  test("deleted between the pass's read and its first write: the pass goes on", {
    timeout: 60_000,
  }, async () =>
    await onFreshTarget(async ({ schema, url, client, admin, syncFile }) => {
      const path = await syncedThenAppended(client, syncFile);
      // The origin's row held: the pass reads its records, then waits to take its token.
      const holding = heldTransaction(admin, async (query) => {
        await query(`SELECT 1 FROM "${schema}".sync_origins WHERE origin = 'A' FOR UPDATE`);
      });
      await holding.ready;
      const pass = syncFile(client, path, { origin: "A", host: "h" });
      pass.catch(() => {});
      await waitedOn(admin, holding);
      {
        await using store = await openStore(url);
        assert.equal(await store.deleteSession("A/y"), true);
        assert.equal(await store.deleteSession("A/x"), true);
      }
      holding.commit();
      await holding.done;
      await pass;
      const after = await serverContents(url, "A/x");
      assert.ok(after.length === 0 || after.length === 5, JSON.stringify(after));
      await syncFile(client, path, { origin: "A", host: "h" });
      assert.deepEqual(await serverContents(url, "A/x"), ["x0", "x1", "x2", "x3", "x4"]);
      assert.deepEqual(await serverContents(url, "A/y"), ["y0"]);
    }));
});
