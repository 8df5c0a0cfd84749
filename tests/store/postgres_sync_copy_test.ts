/**
 * `copy` between two PostgreSQL stores and the records of `sync` it
 * carries: a session the run skipped because the other store had it (an
 * interrupted run wrote it, and its host wrote on since) gets an unconfirmed
 * record, so that the host's next pass into the new store ships what it
 * lacks, or deletes the session once the file no longer holds it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { adminSql, freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A session of hermes-v11.db with messages, and another. */
const SESSION = "20251221_090000_9738df";
const OTHER = "20260420_090000_994beb";

/**
 * A file synced into one store as `web-1`, and a copy of that store into
 * another killed before its end: every session in DEST, none of the records.
 */
async function interruptedCopy(): Promise<{ file: string; from: string; to: string }> {
  const file = v11Copy();
  const from = schemaUrl(freshSchema());
  assert.equal((await runCli(["sync", file, "--to", from, "--origin", "web-1"])).code, 0);
  const toSchema = freshSchema();
  const to = schemaUrl(toSchema);
  assert.equal((await runCli(["copy", from, to])).code, 0);
  await adminSql(
    `DELETE FROM "${toSchema}".sync_sessions; DELETE FROM "${toSchema}".sync_origins`,
  );
  return { file, from, to };
}

describe("copy between PostgreSQL stores and the sync records", { skip: SKIP }, () => {
  test("a session copy skipped gets an unconfirmed record: the next pass ships what DEST lacks", {
    timeout: 60_000,
  }, async () => {
    const { file, from, to } = await interruptedCopy();
    // Meanwhile the host writes on and syncs into the old store.
    const db = await SessionDB.open({ path: file });
    const [id] = db.listSessionsRich({ limit: 1 }).map((s) => s.id);
    db.appendMessage(id, { role: "user", content: "written between the copies" });
    db.close();
    assert.equal((await runCli(["sync", file, "--to", from, "--origin", "web-1"])).code, 0);
    // The copy run again: it skips every session, DEST's copy of `id` stale.
    const again = await runCli(["--json", "copy", from, to]);
    assert.equal(again.code, 0, again.err);
    const report = JSON.parse(again.out);
    assert.equal(report.skipped, 42);
    assert.deepEqual(report.sync, { origins: 1, sessions: 42, conflicting: [] });
    // The host's next pass into DEST ships the sessions again, the new message with them.
    const pass = await runCli(["--json", "sync", file, "--to", to, "--origin", "web-1"]);
    assert.equal(pass.code, 0, pass.err);
    const shipped = JSON.parse(pass.out);
    assert.deepEqual([shipped.created, shipped.updated, shipped.rewritten], [0, 42, 42]);
    await using store = await openStore(to, { readonly: true });
    const contents = (await store.exportSession(`web-1/${id}`))!.messages.map((m) => m.content);
    assert.equal(contents.at(-1), "written between the copies");
    assert.equal(await store.messageCount(), 198, "each message once");
    const next = await runCli(["--json", "sync", file, "--to", to, "--origin", "web-1"]);
    assert.equal(JSON.parse(next.out).messages, 0);
  });
  test("a session copy skipped, then deleted on its host, leaves DEST with the next pass", {
    timeout: 60_000,
  }, async () => {
    const { file, from, to } = await interruptedCopy();
    assert.equal((await runCli(["copy", from, to])).code, 0);
    // The host deletes a session, then ships its file into DEST.
    const db = await SessionDB.open({ path: file });
    const [id] = db.listSessionsRich({ limit: 1 }).map((s) => s.id);
    assert.ok(db.deleteSession(id));
    db.close();
    const pass = await runCli(["--json", "sync", file, "--to", to, "--origin", "web-1"]);
    assert.equal(pass.code, 0, pass.err);
    assert.equal(JSON.parse(pass.out).deleted, 1);
    await using store = await openStore(to, { readonly: true });
    assert.equal(await store.getSession(`web-1/${id}`), undefined);
    assert.equal(await store.sessionCount(), 41);
  });
  test("sync of a file copied there first stores each session once, under its origin", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", file, url])).code, 0);
    const pass = await runCli(["--json", "sync", file, "--to", url, "--origin", "web-1"]);
    assert.equal(pass.code, 0, pass.err);
    assert.equal(JSON.parse(pass.out).created, 42);
    await using store = await openStore(url, { readonly: true });
    assert.equal(await store.sessionCount(), 42, "the copies gave way to the synced sessions");
    assert.equal(await store.messageCount(), 197);
    const listed = await store.listSessionsRich({ limit: 100 });
    assert.ok(listed.every((s) => s.id.startsWith("web-1/")));
    // Their titles are the file's: no copy held them any more.
    assert.ok(listed.every((s) => !(s.title ?? "").endsWith(" [web-1]")));
    const again = await runCli(["--json", "sync", file, "--to", url, "--origin", "web-1"]);
    assert.equal(JSON.parse(again.out).messages, 0);
  });

  test("a file written on since its copy still replaces the copy, which it holds whole", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", file, url])).code, 0);
    {
      using db = await SessionDB.open({ path: file });
      db.appendMessage(SESSION, { role: "user", content: "written after the copy" });
      db.setSessionTitle(SESSION, "titled after the copy");
    }
    const pass = await runCli(["--json", "sync", file, "--to", url, "--origin", "web-1"]);
    assert.equal(pass.code, 0, pass.err);
    await using store = await openStore(url, { readonly: true });
    assert.equal(await store.sessionCount(), 42);
    assert.equal(await store.messageCount(), 198);
  });

  test("a copy holding a message the synced file lacks (another file, same ids) is kept whole", {
    timeout: 60_000,
  }, async () => {
    // Two hosts from one image: A's sessions copied to the server, then B synced.
    const [a, b] = [v11Copy(), v11Copy()];
    {
      using db = await SessionDB.open({ path: a });
      db.appendMessage(SESSION, { role: "user", content: "only on host A" });
    }
    {
      using db = await SessionDB.open({ path: b });
      db.setSessionTitle(OTHER, "renamed on host B");
    }
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", a, url])).code, 0);
    const pass = await runCli(["--json", "sync", b, "--to", url, "--origin", "host-b"]);
    assert.equal(pass.code, 0, pass.err);
    await using store = await openStore(url, { readonly: true });
    // Before: A's session went, and its message with it, the file holding another.
    const kept = await store.getMessages(SESSION);
    assert.ok(kept.some((m) => m.content === "only on host A"), "A's message is kept");
    assert.equal((await store.getSession(`host-b/${SESSION}`))?.id, `host-b/${SESSION}`);
    // Every other copy B holds whole gave way (the one renamed on B too: its title is B's).
    assert.equal(await store.sessionCount(), 42 + 1);
    assert.equal(await store.messageCount(), 197 + (await messagesOf(b, [SESSION])) + 1);
    assert.equal((await store.getSession(`host-b/${OTHER}`))?.title, "renamed on host B");
    assert.equal(await store.getSession(OTHER), undefined);
  });
});

/** The messages of `sessions` in the file at `path`. */
async function messagesOf(path: string, sessions: string[]): Promise<number> {
  using db = await SessionDB.open({ path, readonly: true });
  return sessions.reduce((n, id) => n + db.getMessages(id).length, 0);
}
