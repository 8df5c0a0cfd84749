/**
 * `syncFile()` and a transcript rewritten on the host to the same message
 * count and the same highest message id: a backup restored and written on
 * (the new messages take the lost ones' ids), a clear and an append in a
 * file without `AUTOINCREMENT` (the id is handed out again). Count and
 * highest id alone saw no change; the message digest recorded beside them
 * (migration 8) does.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, rmSync } from "node:fs";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { openStore } from "../../lib/open_store.ts";
import { copyFixture, rawOpen, tempDbPath } from "../_helpers.ts";
import { adminSql, freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** The file's transcript of `id` and the server's of `origin/id`, as [id-less] rows. */
async function transcripts(
  file: string,
  url: string,
  origin: string,
  id: string,
): Promise<{ file: unknown[]; server: unknown[] }> {
  const db = await SessionDB.open({ path: file, readonly: true });
  const mine = db.exportSession(id)!.messages.map((m) => [m.role, m.content, m.timestamp]);
  db.close();
  await using store = await openStore(url, { readonly: true });
  const theirs = (await store.exportSession(`${origin}/${id}`))!.messages.map((
    m,
  ) => [m.role, m.content, m.timestamp]);
  return { file: mine, server: theirs };
}

async function append(file: string, id: string, contents: readonly string[]): Promise<void> {
  const db = await SessionDB.open({ path: file });
  try {
    for (const content of contents) db.appendMessage(id, { role: "user", content });
  } finally {
    db.close();
  }
}

describe("syncFile() and a transcript rewritten to the same count and highest id", {
  skip: SKIP,
}, () => {
  const clients: PgClient[] = [];
  after(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  async function target(): Promise<{ url: string; client: PgClient; schema: string }> {
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const { connectSyncTarget } = await import("../../lib/postgres/sync.ts");
    const client = await connectSyncTarget(url);
    clients.push(client);
    return { url, client, schema };
  }

  test("syncFile() ships the new messages of a restored backup that reuse the lost ones' ids", {
    timeout: 60_000,
  }, async () => {
    const { syncFile } = await import("../../lib/postgres/sync.ts");
    const { url, client } = await target();
    const file = tempDbPath();
    const backup = `${file}.bak`;
    {
      const db = await SessionDB.open({ path: file });
      db.createSession("a", "cli");
      db.close();
    }
    await append(file, "a", ["one", "two", "three"]);
    copyFileSync(file, backup);
    await syncFile(client, file, { origin: "h1", host: "h" });
    await append(file, "a", ["lost four", "lost five"]);
    await syncFile(client, file, { origin: "h1", host: "h" });
    // The backup restored (sqlite_sequence with it): the next two messages take ids 4 and 5 again.
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
    copyFileSync(backup, file);
    await append(file, "a", ["new four", "new five"]);
    const pass = await syncFile(client, file, { origin: "h1", host: "h" });
    assert.equal(pass.rewritten, 1);
    const after = await transcripts(file, url, "h1", "a");
    assert.deepEqual(after.server, after.file);
    assert.deepEqual(after.server.map((m) => (m as string[])[1]), [
      "one",
      "two",
      "three",
      "new four",
      "new five",
    ]);
    // And the next message is appended to the transcript as it is now.
    await append(file, "a", ["six"]);
    const next = await syncFile(client, file, { origin: "h1", host: "h" });
    assert.equal(next.appended, 1);
    const later = await transcripts(file, url, "h1", "a");
    assert.deepEqual(later.server, later.file);
  });

  test("syncFile() ships a clear and an append that reuse the highest id (no AUTOINCREMENT)", {
    timeout: 60_000,
  }, async () => {
    const { syncFile } = await import("../../lib/postgres/sync.ts");
    const { url, client } = await target();
    const file = copyFixture("hermes-v10-external.db");
    // The file migrated as the agent's first open does (its messages table keeps its shape).
    (await SessionDB.open({ path: file })).close();
    await syncFile(client, file, { origin: "h1", host: "h" });
    const lastRow = async () => {
      using raw = await rawOpen(file, true);
      const row = raw.prepare("SELECT id, session_id FROM messages ORDER BY id DESC LIMIT 1")
        .get()!;
      return { id: Number(row.id), owner: String(row.session_id) };
    };
    const { id: last, owner } = await lastRow();
    const db = await SessionDB.open({ path: file });
    const count = db.exportSession(owner)!.messages.length;
    db.clearMessages(owner);
    for (let i = 0; i < count; i++) db.appendMessage(owner, { role: "user", content: `new ${i}` });
    db.close();
    assert.deepEqual(await lastRow(), { id: last, owner }, "the highest id is handed out again");
    const pass = await syncFile(client, file, { origin: "h1", host: "h" });
    assert.equal(pass.rewritten, 1);
    const after = await transcripts(file, url, "h1", owner);
    assert.deepEqual(after.server, after.file);
  });

  test("syncFile() records the digest of sessions recorded without one, shipping nothing", {
    timeout: 60_000,
  }, async () => {
    const { syncFile } = await import("../../lib/postgres/sync.ts");
    const { url, client, schema } = await target();
    const file = copyFixture("hermes-v11.db");
    const first = await syncFile(client, file, { origin: "h1", host: "h" });
    // As a release before migration 8 left them.
    await adminSql(`UPDATE "${schema}".sync_sessions SET message_digest = NULL`);
    await using store = await openStore(url, { readonly: true });
    const before = await store.exportAll();
    const pass = await syncFile(client, file, { origin: "h1", host: "h" });
    assert.deepEqual(pass, { ...first, created: 0, messages: 0, goals: 0 });
    const [{ missing }] = await adminSql(
      `SELECT count(*)::int AS missing FROM "${schema}".sync_sessions WHERE message_digest IS NULL`,
    );
    assert.equal(missing, 0);
    assert.deepEqual(await store.exportAll(), before);
    const again = await syncFile(client, file, { origin: "h1", host: "h" });
    assert.deepEqual(again, { ...first, created: 0, messages: 0, goals: 0 });
  });
});
