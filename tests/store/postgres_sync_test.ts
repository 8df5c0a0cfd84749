/**
 * `syncFile()`: a state.db shipped to PostgreSQL incrementally — everything
 * on the first pass, nothing on an unchanged pass, and then exactly what
 * changed (new messages, ends, titles, token counts, replaced and cleared
 * transcripts, deletions, prunes) — with two hosts' equal ids kept apart.
 */
import { after, before, describe, test as alone } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SessionDB, storeOf } from "../../lib/sqlite/session_db.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { syncedStore } from "../../lib/core/synced_store.ts";
import { ReadonlyError } from "../../lib/core/errors.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import { copyFixture, tempDir } from "../_helpers.ts";
import { freshSchema, openPgStore, pgEngineSkip, schemaUrl } from "./_pg.ts";
import { untilSteady } from "./_steady.ts";
import { sideBySideTests } from "../_side_by_side.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** `text` as a regular expression that matches it. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("syncFile()", { skip: SKIP }, () => {
  /**
   * The tests run side by side, each on a schema and files of its own: most of a test's time is
   * the server's (migrating its schema, taking the rows), which the others' work fills. They are
   * registered at the end, after the two run `alone`, which need a quiet server: one waits for an
   * idle pass that no commit on the server crossed, one for a pass held half a second.
   */
  const sideBySide = sideBySideTests({ skip: SKIP, timeout: 120_000 });
  const grouped: [string, () => Promise<void>][] = [];
  const test = (name: string, _options: { timeout: number }, body: () => Promise<void>) =>
    void grouped.push([name, body]);
  let sync: typeof import("../../lib/postgres/sync.ts");
  const clients: PgClient[] = [];
  const stores: SessionStore[] = [];
  before(async () => {
    sync = await import("../../lib/postgres/sync.ts");
  });
  after(async () => {
    for (const c of clients.splice(0)) await c.close();
    for (const s of stores.splice(0)) await s.close();
  });
  const schemaOfStore = new WeakMap<SessionStore, string>();
  const freshSchemaOf = (store: SessionStore) => schemaOfStore.get(store)!;
  async function server(): Promise<{ client: PgClient; store: SessionStore }> {
    const schema = freshSchema();
    const client = await sync.connectSyncTarget(schemaUrl(schema));
    clients.push(client);
    const store = await openPgStore({}, schema);
    stores.push(store);
    schemaOfStore.set(store, schema);
    return { client, store };
  }

  test(
    "the first pass ships every session and message under ORIGIN/ID; an unchanged pass writes nothing",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = copyFixture("hermes-v11.db");
      const first = await sync.syncFile(client, file, { host: "web-1" });
      assert.deepEqual(first, {
        origin: "web-1",
        created: 42,
        updated: 0,
        deleted: 0,
        appended: 0,
        rewritten: 0,
        messages: 197,
        goals: 1,
        notShipped: [],
      });
      assert.equal(await store.sessionCount(), 42);
      assert.equal(await store.messageCount(), 197);
      const db = await SessionDB.open({ path: file, readonly: true });
      try {
        for (const session of db.exportAll()) {
          const mirrored = await store.exportSession(`web-1/${session.id}`);
          assert.ok(mirrored, session.id);
          const parent = session.parent_session_id === null
            ? null
            : `web-1/${session.parent_session_id}`;
          assert.equal(mirrored.parent_session_id, parent, `parent of ${session.id}`);
          assert.equal(mirrored.title, session.title);
          assert.equal(mirrored.message_count, session.message_count);
          assert.deepEqual(
            mirrored.messages.map((m) => [m.role, m.content, m.tool_calls, m.timestamp]),
            session.messages.map((m) => [m.role, m.content, m.tool_calls, m.timestamp]),
          );
        }
      } finally {
        db.close();
      }
      const again = await sync.syncFile(client, file, { host: "web-1" });
      assert.deepEqual(again, { ...first, created: 0, messages: 0, goals: 0 });
      assert.equal((await store.searchMessages("docker", { limit: 100 })).length > 0, true);
    },
  );

  alone(
    "a pass that writes nothing leaves the change marker alone, and records its time once a minute",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = copyFixture("hermes-v11.db");
      await sync.syncFile(client, file, { host: "web-1" });
      const lastPass = async () => (await syncedStore(store)!.syncOrigins())[0].lastPassAt!;
      const first = await lastPass();
      assert.ok(
        await untilSteady(store, () => sync.syncFile(client, file, { host: "web-1" })),
        "live pages are not woken by an idle pass",
      );
      assert.equal(await lastPass(), first);
      // The recorded pass a minute old: the next idle one records itself.
      await client.query("UPDATE sync_origins SET last_pass_at = last_pass_at - 61");
      const before = await store.dataVersion();
      await sync.syncFile(client, file, { host: "web-1" });
      assert.ok(await lastPass() >= first, "recorded anew");
      assert.notEqual(await store.dataVersion(), before);
      // A recorded time ahead of this host's clock (another host's, a clock set back) gives way.
      await client.query("UPDATE sync_origins SET last_pass_at = last_pass_at + 3600");
      await sync.syncFile(client, file, { host: "web-1" });
      assert.ok(await lastPass() < Date.now() / 1000 + 1, "this host's time");
      // A pass that ships something records its time whatever the recorded one.
      await client.query("UPDATE sync_origins SET last_pass_at = last_pass_at + 30");
      const future = await lastPass();
      const db = await SessionDB.open({ path: file });
      db.createSession("one-more", "cli");
      db.close();
      assert.equal((await sync.syncFile(client, file, { host: "web-1" })).created, 1);
      assert.ok(await lastPass() < future, "the pass's own time");
    },
  );

  test("a later pass carries exactly what changed in the file", { timeout: 60_000 }, async () => {
    const { client, store } = await server();
    const file = copyFixture("hermes-v11.db");
    await sync.syncFile(client, file, { host: "h" });
    let now = 1_800_000_000;
    const db = await SessionDB.open({ path: file, clock: () => now++ });
    const rows = db.listSessionsRich({ limit: 100, includeChildren: true });
    const busy = rows.filter((s) => s.message_count >= 2).map((s) => s.id);
    const [a, b, c, d, e] = busy;
    db.appendMessage(a, { role: "user", content: "zebrafish appended later" });
    db.endSession(b, "cli_close");
    db.setSessionTitle(b, "renamed on the host");
    db.updateTokenCounts(c, { inputTokens: 1000 });
    db.replaceMessages(d, [{ role: "user", content: "only this now" }]);
    db.deleteSession(e);
    db.createSession("brand-new", "cli");
    db.appendMessage("brand-new", { role: "user", content: "hello from the new one" });
    db.close();
    const pass = await sync.syncFile(client, file, { host: "h" });
    assert.equal(pass.created, 1);
    assert.equal(pass.deleted, 1);
    assert.equal(pass.rewritten, 1);
    assert.equal(pass.appended, 1);
    assert.equal(pass.messages, 3);
    assert.ok(pass.updated >= 4, `updated ${pass.updated}`);
    assert.equal((await store.searchMessages("zebrafish appended")).length, 1);
    const ended = await store.getSession(`h/${b}`);
    assert.equal(ended?.title, "renamed on the host");
    assert.ok(ended?.ended_at !== null);
    assert.equal(
      (await store.getSession(`h/${c}`))?.input_tokens,
      await (async () => {
        const check = await SessionDB.open({ path: file, readonly: true });
        try {
          return check.getSession(c)?.input_tokens;
        } finally {
          check.close();
        }
      })(),
    );
    assert.deepEqual((await store.getMessages(`h/${d}`)).map((m) => m.content), ["only this now"]);
    assert.equal(await store.getSession(`h/${e}`), undefined);
    assert.equal((await store.getMessages("h/brand-new")).length, 1);
    const quiet = await sync.syncFile(client, file, { host: "h" });
    assert.equal(quiet.messages + quiet.created + quiet.updated + quiet.deleted, 0);
  });

  test(
    "system prompts arrive whole; a pass reads their length, and the text of the sessions it writes",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = join(tempDir(), "prompts.db");
      const prompt = (n: number, letter: string) => `${letter.repeat(20_000)} ${n} 数据 ✓`;
      const db = await SessionDB.open({ path: file });
      for (let i = 0; i < 3; i++) {
        db.createSession(`p${i}`, "telegram", { systemPrompt: prompt(i, "a") });
        db.appendMessage(`p${i}`, { role: "user", content: `hello ${i}` });
      }
      db.createSession("none", "cli");
      db.close();
      assert.equal((await sync.syncFile(client, file, { host: "h" })).created, 4);
      const serverPrompt = async (id: string) => (await store.getSession(`h/${id}`))?.system_prompt;
      assert.equal(await serverPrompt("p1"), prompt(1, "a"));
      assert.equal(await serverPrompt("none"), null);
      const write = await SessionDB.open({ path: file });
      // Rewritten in place to another length: the row changed.
      write.updateSystemPrompt("p0", prompt(0, "a") + " and more");
      // Rewritten to the same length: shipped with the session's next message.
      write.updateSystemPrompt("p1", prompt(1, "b"));
      write.updateSystemPrompt("none", "now a prompt");
      const first = await sync.syncFile(client, file, { host: "h" });
      assert.deepEqual([first.updated, first.messages], [2, 0]);
      assert.equal(await serverPrompt("p0"), prompt(0, "a") + " and more");
      assert.equal(await serverPrompt("none"), "now a prompt");
      assert.equal(await serverPrompt("p1"), prompt(1, "a"));
      write.appendMessage("p1", { role: "user", content: "next turn" });
      write.close();
      const second = await sync.syncFile(client, file, { host: "h" });
      assert.deepEqual([second.appended, second.messages], [1, 1]);
      assert.equal(await serverPrompt("p1"), prompt(1, "b"));
      assert.equal(await serverPrompt("p2"), prompt(2, "a"));
      const quiet = await sync.syncFile(client, file, { host: "h" });
      assert.equal(quiet.messages + quiet.created + quiet.updated + quiet.deleted, 0);
    },
  );

  test(
    "a server an earlier release synced (whole-row digests) gets new digests, and no row is written again",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = copyFixture("hermes-v11.db");
      await sync.syncFile(client, file, { host: "h" });
      // What releases before the prompt-length digest recorded: the digest of the whole row.
      const db = await SessionDB.open({ path: file, readonly: true });
      const rows = storeOf(db).statement("SELECT * FROM sessions").all();
      db.close();
      const withPrompt = rows.filter((row) => row.system_prompt !== null);
      assert.ok(withPrompt.length > 10);
      for (const row of withPrompt) {
        await client.query("UPDATE sync_sessions SET row_digest = $1 WHERE session_id = $2", [
          sync.digestOf(row, null),
          `h/${row.id}`,
        ]);
      }
      const versions = async () =>
        (await client.query("SELECT id, xmin::text AS v FROM sessions ORDER BY id")).map((r) =>
          `${r.id} ${r.v}`
        );
      const before = await versions();
      const pass = await sync.syncFile(client, file, { host: "h" });
      assert.equal(pass.updated + pass.created + pass.messages + pass.deleted, 0);
      assert.deepEqual(await versions(), before);
      const changed = await client.query(
        "SELECT count(*) AS n FROM sync_sessions WHERE row_digest IN (SELECT json_array_elements_text($1::text::json))",
        [JSON.stringify(withPrompt.map((row) => sync.digestOf(row, null)))],
      );
      assert.equal(Number(changed[0].n), 0);
      assert.equal((await sync.syncFile(client, file, { host: "h" })).updated, 0);
      assert.equal(await store.sessionCount(), 42);
    },
  );

  test(
    "two hosts with the same session ids do not overwrite each other",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const one = copyFixture("hermes-v11.db");
      const other = join(tempDir(), "state.db");
      copyFileSync(one, other);
      const a = await sync.syncFile(client, one, { host: "web-1" });
      const b = await sync.syncFile(client, other, { host: "web-2" });
      assert.equal(a.origin, "web-1");
      assert.equal(b.origin, "web-2");
      assert.equal(await store.sessionCount(), 84);
      assert.equal(await store.messageCount(), 394);
      // Titles stay unique: the second host's copies carry their origin.
      const titled = await store.getSessionByTitle("my project [web-2]");
      assert.ok(titled?.id.startsWith("web-2/"));
      assert.ok((await store.getSessionByTitle("my project"))?.id.startsWith("web-1/"));
      // The same file from the same host is the same origin on every pass.
      assert.equal((await sync.syncFile(client, one, { host: "web-1" })).origin, "web-1");
    },
  );

  test(
    "a title held on the server and its suffixed form in one file both arrive, each unique",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      await sync.syncFile(client, copyFixture("hermes-v11.db"), { host: "web-1" });
      const other = copyFixture("hermes-v11.db");
      const db = await SessionDB.open({ path: other });
      // Written after "my project", so it is settled after it, in the same batch.
      db.createSession("late", "cli");
      db.setSessionTitle("late", "my project [web-2]");
      db.close();
      const pass = await sync.syncFile(client, other, { host: "web-2" });
      assert.equal(pass.created, 43);
      assert.ok((await store.getSessionByTitle("my project"))?.id.startsWith("web-1/"));
      const first = await store.getSessionByTitle("my project [web-2]");
      assert.ok(first?.id.startsWith("web-2/") && first.id !== "web-2/late", first?.id);
      assert.equal((await store.getSession("web-2/late"))?.title, "my project [web-2] [web-2]");
    },
  );

  test(
    "a title handed from one session to another on the host, or two swapped, arrives as the host has it",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = join(tempDir(), "state.db");
      const db = await SessionDB.open({ path: file });
      for (const id of ["s1", "s2", "s3"]) db.createSession(id, "cli");
      db.setSessionTitle("s1", "Deploy");
      db.setSessionTitle("s2", "left");
      db.setSessionTitle("s3", "right");
      await sync.syncFile(client, file, { host: "ha" });
      // Between two passes: s1's title goes to a new session; s2 and s3 swap theirs.
      db.setSessionTitle("s1", "Deploy (old)");
      db.createSession("s4", "cli");
      db.setSessionTitle("s4", "Deploy");
      db.setSessionTitle("s2", "tmp");
      db.setSessionTitle("s3", "left");
      db.setSessionTitle("s2", "right");
      db.close();
      await sync.syncFile(client, file, { host: "ha" });
      const titles = await Promise.all(
        ["s1", "s2", "s3", "s4"].map(async (id) => (await store.getSession(`ha/${id}`))?.title),
      );
      assert.deepEqual(titles, ["Deploy (old)", "right", "left", "Deploy"]);
      assert.equal((await store.getSessionByTitle("Deploy"))?.id, "ha/s4");
    },
  );

  alone(
    "two hosts' passes that choose the same free title at once both arrive: the later chooses again",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const files = ["a.db", "b.db"].map((name) => join(tempDir(), name));
      for (const file of files) {
        const db = await SessionDB.open({ path: file });
        db.createSession("s", "cli");
        db.setSessionTitle("s", "shared title");
        db.close();
      }
      // Host a's row holds its (uncommitted) title for half a second while host b's pass starts.
      await client.query(`CREATE FUNCTION hold_a() RETURNS trigger AS $$
        BEGIN IF NEW.id = 'a/s' THEN PERFORM pg_sleep(0.5); END IF; RETURN NEW; END
        $$ LANGUAGE plpgsql`);
      await client.query(
        "CREATE TRIGGER hold AFTER INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION hold_a()",
      );
      const a = sync.syncFile(client, files[0], { host: "a" });
      await new Promise((resolve) => setTimeout(resolve, 150));
      const b = await sync.syncFile(client, files[1], { host: "b" });
      await a;
      assert.equal(b.created, 1);
      assert.equal((await store.getSession("a/s"))?.title, "shared title");
      assert.equal((await store.getSession("b/s"))?.title, "shared title [b]");
    },
  );

  test("two passes of one file at once ship it once (a pass holds its origin's lock)", {
    timeout: 60_000,
  }, async () => {
    const { client, store } = await server();
    const other = await sync.connectSyncTarget(schemaUrl(freshSchemaOf(store)));
    clients.push(other);
    const file = copyFixture("hermes-v11.db");
    const [a, b] = await Promise.all([
      sync.syncFile(client, file, { host: "twice" }),
      sync.syncFile(other, file, { host: "twice" }),
    ]);
    assert.equal(a.messages + b.messages, 197);
    assert.equal(await store.messageCount(), 197);
    assert.equal(await store.sessionCount(), 42);
  });

  test(
    "a message written while a pass runs is shipped once, by the next pass",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = copyFixture("hermes-v11.db");
      await sync.syncFile(client, file, { host: "race" });
      const writer = await SessionDB.open({ path: file });
      const session = writer.listSessionsRich({ limit: 1 })[0].id;
      writer.appendMessage(session, { role: "user", content: "before the snapshot" });
      const first = await sync.syncFile(client, file, {
        host: "race",
        // Between the pass's snapshot of the counts and its reads of the messages.
        afterSnapshot: () =>
          void writer.appendMessage(session, { role: "user", content: "in between" }),
      });
      assert.equal(first.messages, 1);
      const second = await sync.syncFile(client, file, { host: "race" });
      writer.close();
      assert.equal(second.messages, 1);
      const contents = (await store.getMessages(`race/${session}`)).map((m) => m.content);
      assert.equal(contents.filter((c) => c === "in between").length, 1);
      assert.equal(contents.filter((c) => c === "before the snapshot").length, 1);
      const check = await SessionDB.open({ path: file, readonly: true });
      try {
        assert.equal(contents.length, check.messageCount(session));
      } finally {
        check.close();
      }
    },
  );

  test(
    "a pass of several batches that fails midway keeps the batches before it; the next ships the rest once",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = join(tempDir(), "big.db");
      const db = await SessionDB.open({ path: file });
      for (let s = 0; s < 24; s++) {
        db.createSession(`s${s}`, "cli");
        db.appendMessages(
          `s${s}`,
          Array.from({ length: 400 }, (_, m) => ({ role: "user", content: `s${s} m${m} 数据库` })),
        );
      }
      db.close();
      // A real failure on the server in the middle of the pass: session s15's row is refused.
      await client.query(`CREATE FUNCTION refuse_s15() RETURNS trigger AS $$
        BEGIN IF NEW.id = 'big/s15' THEN RAISE EXCEPTION 'refused s15'; END IF; RETURN NEW; END
        $$ LANGUAGE plpgsql`);
      await client.query(
        "CREATE TRIGGER refuse BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION refuse_s15()",
      );
      const progress: number[] = [];
      await assert.rejects(
        sync.syncFile(client, file, { host: "big", onProgress: (r) => progress.push(r.messages) }),
        /refused s15/,
      );
      // Batches of about 2,000 messages (five sessions), up to three in flight at once: the three
      // before the one holding s15 committed, and maybe the one after it, which was in flight.
      const kept = await store.messageCount();
      assert.ok(kept === 6000 || kept === 7600, `kept ${kept}`);
      assert.equal(await store.sessionCount(), kept / 400);
      for (let s = 15; s < 20; s++) assert.equal(await store.getSession(`big/s${s}`), undefined);
      // Progress only grows, and its last report is what the server holds.
      assert.deepEqual(progress, [...progress].sort((a, b) => a - b));
      assert.equal(progress.at(-1), kept);
      await client.query("DROP TRIGGER refuse ON sessions");
      const second = await sync.syncFile(client, file, { host: "big" });
      assert.equal(second.created, 24 - kept / 400);
      assert.equal(second.messages, 9600 - kept);
      assert.equal(await store.messageCount(), 9600);
      for (let s = 0; s < 24; s++) {
        const contents = (await store.getMessages(`big/s${s}`)).map((m) => m.content);
        assert.equal(new Set(contents).size, 400, `s${s}`);
        assert.equal(contents.length, 400, `s${s}`);
      }
      assert.equal((await sync.syncFile(client, file, { host: "big" })).messages, 0);
    },
  );

  /** A file of `sessions` sessions of one message each, not the fixture's. */
  async function otherFile(sessions: number, prefix = "other"): Promise<string> {
    const file = join(tempDir(), "other.db");
    const db = await SessionDB.open({ path: file });
    for (let s = 0; s < sessions; s++) {
      db.createSession(`${prefix}-${s}`, "cli");
      db.appendMessage(`${prefix}-${s}`, { role: "user", content: `other host ${s}` });
    }
    db.close();
    return file;
  }

  /**
   * The fixture synced from host "ubuntu", then another file of 2 sessions in its place (another
   * machine named ubuntu, or a new file in the old one's place).
   */
  async function replacedFile(): Promise<{ client: PgClient; store: SessionStore; file: string }> {
    const { client, store } = await server();
    const file = copyFixture("hermes-v11.db");
    await sync.syncFile(client, file, { host: "ubuntu" });
    for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
    copyFileSync(await otherFile(2), file);
    return { client, store, file };
  }

  test(
    "another file at the same host and path is refused and the server keeps its origin; --force replaces it",
    { timeout: 60_000 },
    async () => {
      const { client, store, file } = await replacedFile();
      await assert.rejects(
        sync.syncFile(client, file, { host: "ubuntu" }),
        (error: Error) =>
          error instanceof sync.SyncRefusedError &&
          error.message.includes('holds none of the 42 sessions origin "ubuntu" has') &&
          error.message.includes("--origin NAME") && error.message.includes("--force") &&
          // Another machine of the same host name is told the option that splits it off.
          error.message.includes("--host NAME"),
      );
      assert.equal(await store.sessionCount(), 42);
      assert.equal(await store.getSession("ubuntu/other-0"), undefined);
      const forced = await sync.syncFile(client, file, { host: "ubuntu", force: true });
      assert.deepEqual([forced.deleted, forced.created], [42, 2]);
      assert.equal(await store.sessionCount(), 2);
      // Now it is the origin's file: its passes go on as usual.
      assert.equal((await sync.syncFile(client, file, { host: "ubuntu" })).created, 0);
    },
  );

  test(
    "a new file in the old one's place goes under an --origin of its own; the old origin keeps its sessions",
    { timeout: 60_000 },
    async () => {
      const { client, store, file } = await replacedFile();
      // What the refusal says to do.
      const own = await sync.syncFile(client, file, { host: "ubuntu", origin: "ubuntu-new" });
      assert.deepEqual([own.origin, own.created, own.deleted], ["ubuntu-new", 2, 0]);
      assert.equal(await store.sessionCount(), 44);
      const origins = await client.query("SELECT origin, path FROM sync_origins ORDER BY origin");
      assert.equal(origins.length, 2);
      assert.match(
        String(origins[0].path),
        new RegExp(
          `^${
            escapeRegExp(realpathSync(file))
          } \\(replaced by origin ubuntu-new at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\)$`,
        ),
      );
      assert.deepEqual([origins[1].origin, origins[1].path], ["ubuntu-new", realpathSync(file)]);
      // The place is the new origin's now: a pass without --origin goes on with it.
      assert.equal((await sync.syncFile(client, file, { host: "ubuntu" })).origin, "ubuntu-new");
      assert.equal(await store.sessionCount(), 44);
      // Files turn about at one place, each under its own name: each taking it back in turn.
      const put = (source: string) => {
        for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
        copyFileSync(source, file);
      };
      put(await otherFile(3, "third"));
      assert.equal(
        (await sync.syncFile(client, file, { host: "ubuntu", origin: "third" })).created,
        3,
      );
      put(await otherFile(2));
      const back = await sync.syncFile(client, file, { host: "ubuntu", origin: "ubuntu-new" });
      assert.deepEqual([back.origin, back.created, back.deleted], ["ubuntu-new", 0, 0]);
    },
  );

  test(
    "a new file refused under a taken --origin, or holding no session, leaves the place to its origin",
    { timeout: 60_000 },
    async () => {
      const { client, store, file } = await replacedFile();
      // "elsewhere" is another file's origin: this file holds none of its sessions.
      await sync.syncFile(client, await otherFile(1, "elsewhere"), {
        host: "b",
        origin: "elsewhere",
      });
      await assert.rejects(
        sync.syncFile(client, file, { host: "ubuntu", origin: "elsewhere" }),
        sync.SyncRefusedError,
      );
      const empty = join(tempDir(), "empty.db");
      (await SessionDB.open({ path: empty })).close();
      for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
      copyFileSync(empty, file);
      await assert.rejects(
        sync.syncFile(client, file, { host: "ubuntu", origin: "fresh" }),
        (error: Error) =>
          error instanceof sync.SyncRefusedError &&
          /synced as origin "ubuntu" already/.test(error.message),
      );
      const origins = await client.query("SELECT origin, path FROM sync_origins ORDER BY origin");
      assert.deepEqual(origins.map((r) => [r.origin, r.path]), [
        ["elsewhere", origins[0].path],
        ["ubuntu", realpathSync(file)],
      ]);
      // The old file back in its place goes on as its origin: nothing shipped twice.
      for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
      copyFileSync(copyFixture("hermes-v11.db"), file);
      const again = await sync.syncFile(client, file, { host: "ubuntu" });
      assert.deepEqual([again.origin, again.created], ["ubuntu", 0]);
      assert.equal(await store.sessionCount(), 43);
    },
  );

  test(
    "--origin follows a file to a new host (a re-created container): nothing shipped twice",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = copyFixture("hermes-v11.db");
      assert.equal(
        (await sync.syncFile(client, file, { host: "pod-a", origin: "web" })).created,
        42,
      );
      const db = await SessionDB.open({ path: file });
      db.appendMessage(db.listSessionsRich({ limit: 1 })[0].id, { role: "user", content: "later" });
      db.close();
      const moved = await sync.syncFile(client, file, { host: "pod-b", origin: "web" });
      assert.deepEqual([moved.origin, moved.created, moved.deleted, moved.messages], [
        "web",
        0,
        0,
        1,
      ]);
      assert.equal(await store.sessionCount(), 42);
      assert.equal(await store.messageCount(), 198);
      const origins = await client.query("SELECT origin, host FROM sync_origins");
      assert.deepEqual(origins.map((r) => [r.origin, r.host]), [["web", "pod-b"]]);
      // The new host and path are the origin's now, with or without --origin.
      assert.equal((await sync.syncFile(client, file, { host: "pod-b" })).origin, "web");
    },
  );

  test(
    "a taken --origin given to another file is refused; a synced file refuses a second name",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = copyFixture("hermes-v11.db");
      await sync.syncFile(client, file, { host: "a", origin: "web" });
      await assert.rejects(
        sync.syncFile(client, await otherFile(3), { host: "b", origin: "web" }),
        (error: Error) =>
          error instanceof sync.SyncRefusedError &&
          error.message.includes(`synced from ${realpathSync(file)} on a`),
      );
      await assert.rejects(
        sync.syncFile(client, file, { host: "a", origin: "other" }),
        (error: Error) =>
          error instanceof sync.SyncRefusedError &&
          error.message.includes(`(${realpathSync(file)} on a) is synced as origin "web" already`),
      );
      const origins = await client.query("SELECT origin, host FROM sync_origins ORDER BY origin");
      assert.deepEqual(origins.map((r) => [r.origin, r.host]), [["web", "a"]]);
      assert.equal(await store.sessionCount(), 42);
    },
  );

  test("a pass waits for a pass of the same origin in its own schema only", {
    timeout: 60_000,
  }, async () => {
    const { syncLockName } = await import("../../lib/postgres/sync_origin.ts");
    const mine = await server();
    const other = await server();
    const release = await mine.client.lock(syncLockName("web-1"));
    // Cleared once answered: a timer left running keeps Node's process for the file alive.
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const quick = await Promise.race([
        other.client.lock(syncLockName("web-1")).then(async (unlock) => {
          await unlock();
          return "taken";
        }),
        new Promise((resolve) => timer = setTimeout(() => resolve("waited"), 5_000)),
      ]).finally(() => clearTimeout(timer));
      assert.equal(quick, "taken", "the same origin name in another schema is another lock");
      let sameTaken = false;
      const same = mine.client.lock(syncLockName("web-1")).then((unlock) => {
        sameTaken = true;
        return unlock;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(sameTaken, false, "in the same schema it waits");
      await release();
      await (await same)();
      assert.equal(sameTaken, true);
    } catch (error) {
      await release().catch(() => {});
      throw error;
    }
  });

  test(
    "removeSyncOrigin() deletes one origin's sessions once no pass of it runs; a pass waiting for it ships the file whole",
    { timeout: 60_000 },
    async () => {
      const { client, store } = await server();
      const file = copyFixture("hermes-v11.db");
      await sync.syncFile(client, file, { host: "a", origin: "old" });
      await sync.syncFile(client, await otherFile(3), { host: "b" });
      const synced = syncedStore(store)!;
      assert.deepEqual((await synced.syncOrigins()).map((o) => [o.origin, o.sessions]), [
        ["b", 3],
        ["old", 42],
      ]);
      // A pass of "old" is running: the removal waits for it, and a pass after the removal
      // waits for that.
      const { syncLockName } = await import("../../lib/postgres/sync_origin.ts");
      const release = await client.lock(syncLockName("old"));
      let removed: number | undefined | "waiting" = "waiting";
      const removing = synced.removeSyncOrigin("old").then((n) => removed = n);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(removed, "waiting");
      assert.equal(await store.sessionCount(), 45);
      const next = sync.syncFile(client, file, { host: "a", origin: "old" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await release();
      await removing;
      assert.equal(removed, 42);
      // The waiting pass found its origin gone, registered the file again, and shipped it all.
      const pass = await next;
      assert.deepEqual([pass.origin, pass.created, pass.messages], ["old", 42, 197]);
      assert.equal(await store.sessionCount(), 45);
      assert.equal(await store.messageCount(), 200);
      const words = await client.query("SELECT count(*) AS n FROM message_words");
      assert.equal(Number(words[0].n), 200);
      assert.equal(await synced.removeSyncOrigin("old"), 42);
      assert.equal(await synced.removeSyncOrigin("old"), undefined);
      assert.deepEqual((await synced.syncOrigins()).map((o) => o.origin), ["b"]);
      assert.equal(await store.messageCount(), 3);
      const reader = await openPgStore({ readonly: true }, freshSchemaOf(store));
      stores.push(reader);
      await assert.rejects(syncedStore(reader)!.removeSyncOrigin("b"), ReadonlyError);
      assert.equal(await store.sessionCount(), 3);
    },
  );

  test("text that array and literal syntax treat specially arrives exactly", {
    timeout: 60_000,
  }, async () => {
    const { client, store } = await server();
    const file = join(tempDir(), "odd.db");
    const texts = [
      'say "hi"',
      "back\\slash \\\\ two",
      "{braces},commas",
      "NULL",
      "",
      "\u0000 after a NUL",
      "private \uE000 use \uE0000",
      "tab\tnew\nline\r",
      "数据库 'quote' 😀",
    ];
    const db = await SessionDB.open({ path: file });
    db.createSession("odd", "cli");
    for (const content of texts) {
      db.appendMessage("odd", { role: "tool", content, toolName: content || null, tokenCount: 2 });
    }
    db.appendMessage("odd", { role: "assistant", content: null });
    db.close();
    assert.equal((await sync.syncFile(client, file, { host: "odd" })).messages, texts.length + 1);
    const rows = await store.getMessages("odd/odd");
    assert.deepEqual(rows.map((m) => m.content), [...texts, null]);
    assert.deepEqual(rows.map((m) => m.tool_name), [...texts.map((t) => t || null), null]);
    assert.equal((await store.searchMessages("数据库")).length, 1);
  });

  test("a session whose id holds U+0000 or U+E000 is shipped, changed and deleted", {
    timeout: 60_000,
  }, async () => {
    const { client, store } = await server();
    const file = join(tempDir(), "nul_id.db");
    const odd = "x\u0000y\uE000z";
    const db = await SessionDB.open({ path: file });
    db.createSession(odd, "cli");
    db.setSessionTitle(odd, "odd \uE000 title");
    db.appendMessage(odd, { role: "user", content: "first" });
    db.createSession("plain", "cli");
    db.close();
    assert.equal((await sync.syncFile(client, file, { host: "h" })).created, 2);
    const again = await SessionDB.open({ path: file });
    again.appendMessage(odd, { role: "user", content: "second" });
    again.replaceMessages("plain", [{ role: "user", content: "rewritten" }]);
    again.close();
    const pass = await sync.syncFile(client, file, { host: "h" });
    assert.equal(pass.appended + pass.rewritten, 2);
    assert.deepEqual((await store.getMessages(`h/${odd}`)).map((m) => m.content), [
      "first",
      "second",
    ]);
    assert.equal((await store.getSession(`h/${odd}`))?.title, "odd \uE000 title");
    const last = await SessionDB.open({ path: file });
    last.deleteSession(odd);
    last.close();
    assert.equal((await sync.syncFile(client, file, { host: "h" })).deleted, 1);
    assert.equal(await store.getSession(`h/${odd}`), undefined);
    assert.deepEqual((await store.listSessionsRich()).map((s) => s.id), ["h/plain"]);
  });

  for (const [name, body] of grouped) sideBySide(name, body);
});
