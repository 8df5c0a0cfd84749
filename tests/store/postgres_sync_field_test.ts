/**
 * `sync` as operators run it, through the CLI against real files and a real
 * server: the cases found in the field that the other sync tests do not
 * cover.
 *
 * - Ctrl-C (or SIGTERM) during a one-shot pass: it stops after the sessions
 *   it has begun to write, says how far it came and exits 130 / 143, and
 *   the same sync again ships the rest, once. (It used to end the process
 *   at once, silently, before the pass settled lineage and titles.)
 * - A role given a schema of its own (`CREATE SCHEMA hermes AUTHORIZATION
 *   hermes`), without the CREATE right on the database (no role but the
 *   database's owner has it by default): sync and copy work in that schema.
 *   They used to fail, `permission denied for database`, at
 *   `CREATE SCHEMA IF NOT EXISTS`, which PostgreSQL checks before it looks
 *   whether the schema exists. A schema missing that the role may not
 *   create is named, with what to do.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../../lib/cli/main.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { interruptibleIo, runCli } from "../_cli_io.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { adminSql, freshSchema, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";
import { v11Copy } from "../_cli_io.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** Sessions of the file {@linkcode manyBatches} writes, and messages of each. */
const SESSIONS = 500;
const MESSAGES_EACH = 40;

/**
 * A v11 file of {@linkcode SESSIONS} titled sessions of
 * {@linkcode MESSAGES_EACH} messages: a first pass writes it in ten
 * transactions (2,000 messages each at most), more than it has in flight
 * at once.
 */
async function manyBatches(): Promise<string> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  using raw = await rawOpen(path);
  raw.exec("BEGIN");
  const session = raw.prepare(
    "INSERT INTO sessions (id, source, started_at, title, message_count) VALUES (?, 'cli', ?, ?, ?)",
  );
  const message = raw.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
  );
  for (let s = 0; s < SESSIONS; s++) {
    const id = `field_${String(s).padStart(4, "0")}`;
    session.run(id, 1_770_000_000 + s, `field title ${s}`, MESSAGES_EACH);
    for (let m = 0; m < MESSAGES_EACH; m++) {
      message.run(
        id,
        m % 2 === 0 ? "user" : "assistant",
        `message ${m} of ${id}`,
        1_770_000_000 + s,
      );
    }
  }
  raw.exec("COMMIT");
  return path;
}

/** Sessions and messages on the server, and the sessions whose title is not the file's. */
async function serverCounts(url: string) {
  const stats = await runCli(["--db", url, "--json", "stats"]);
  assert.equal(stats.code, 0, stats.err);
  const { sessions, messages } = JSON.parse(stats.out);
  const list = await runCli(["--db", url, "--json", "list", "--limit", "1000"]);
  assert.equal(list.code, 0, list.err);
  const retitled = (JSON.parse(list.out) as { id: string; title: string | null }[])
    .filter((s) => s.title !== `field title ${Number(s.id.split("_").at(-1))}`);
  return { sessions, messages, retitled };
}

describe("sync in the field", { skip: SKIP }, () => {
  test(
    "Ctrl-C during a one-shot pass stops it after the sessions under way; sync again ships the rest",
    {
      timeout: 60_000,
    },
    async () => {
      const file = await manyBatches();
      const url = schemaUrl(freshSchema());
      // The clock moves a minute a reading, so the progress line is drawn after each transaction:
      // Ctrl-C comes at the first, while the pass has sessions left to write.
      let clock = 0;
      const io = interruptibleIo({ now: () => (clock += 60), stderrIsTerminal: true });
      const write = io.stderr;
      io.stderr = (text) => {
        write(text);
        const drawn = text.startsWith("\r\x1b[KSynced ") && / \d[\d,]* messages…$/.test(text);
        if (drawn && io.listening) io.interrupt();
      };
      const code = await main(["sync", file, "--to", url], io);
      assert.equal(code, 130, io.err);
      assert.match(
        io.err,
        /hermes-state: sync: stopping after the sessions under way… \(again to stop at once\)\n/,
      );
      assert.match(
        io.err,
        /interrupted by SIGINT: not every session was shipped from .*state\.db .*the same sync again ships the rest\n$/,
      );
      const cut = await serverCounts(url);
      assert.ok(cut.sessions > 0 && cut.sessions < SESSIONS, `${cut.sessions} sessions shipped`);
      assert.equal(cut.messages, cut.sessions * MESSAGES_EACH);
      assert.deepEqual(cut.retitled, []);
      assert.match(io.out, new RegExp(`→ \\S+: ${cut.sessions} new, 0 updated`));

      const again = await runCli(["sync", file, "--to", url]);
      assert.equal(again.code, 0, again.err);
      assert.match(again.out, new RegExp(`: ${SESSIONS - cut.sessions} new, 0 updated, 0 deleted`));
      const whole = await serverCounts(url);
      assert.deepEqual(whole, {
        sessions: SESSIONS,
        messages: SESSIONS * MESSAGES_EACH,
        retitled: [],
      });
      const idle = await runCli(["sync", file, "--to", url]);
      assert.match(idle.out, /: 0 new, 0 updated, 0 deleted sessions; 0 messages written\.\n$/);
    },
  );

  test("a role that owns its schema but may not create schemas syncs and copies into it", {
    timeout: 60_000,
  }, async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const role = `field_owner_${tag}`;
    const [own, missing] = [`field_own_${tag}`, `field_missing_${tag}`];
    await adminSql(`CREATE ROLE "${role}" LOGIN PASSWORD 'field-pw'`);
    try {
      await adminSql(`CREATE SCHEMA "${own}" AUTHORIZATION "${role}"`);
      const server = new URL(PG_URL!);
      server.username = role;
      server.password = "field-pw";
      server.searchParams.delete("schema");
      const urlOf = (schema: string) => {
        const url = new URL(server);
        url.searchParams.set("schema", schema);
        return url.href;
      };
      const file = v11Copy();
      const sync = await runCli(["sync", file, "--to", urlOf(own)]);
      assert.equal(sync.code, 0, sync.err);
      assert.match(sync.out, /: 42 new, 0 updated, 0 deleted sessions; 197 messages/);
      const copied = await runCli(["copy", v11Copy(), urlOf(own)]);
      assert.equal(copied.code, 0, copied.err);
      const back = await runCli(["copy", urlOf(own), tempDbPath()]);
      assert.equal(back.code, 0, back.err);
      assert.match(back.out, /^Copied 84 sessions/);

      const refused = await runCli(["sync", file, "--to", urlOf(missing)]);
      assert.equal(refused.code, 1);
      assert.match(
        refused.err,
        new RegExp(
          `may not create schema "${missing}" \\(permission denied for database .*\\): .*` +
            `CREATE SCHEMA "${missing}" AUTHORIZATION <this role>, or grant this role CREATE on ` +
            "the database\\n$",
        ),
      );
      assert.doesNotMatch(refused.err, /field-pw/);
      // The store is named by its URL (password masked), as every other open names it: it
      // named the schema, as if it were the database.
      assert.match(refused.err, /^hermes-state: Cannot open database "postgres:\/\/[^"]*\*\*\*@/);
    } finally {
      await adminSql(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
      await adminSql(`DROP ROLE "${role}"`);
    }
  });
});
