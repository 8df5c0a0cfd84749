/**
 * `syncFile()` and a session whose new messages exceed a pass's byte
 * budget (16 MiB, search vectors included): it is read a page at a time and
 * written in one transaction, so it arrives whole and in the file's order
 * (time, then id), or not at all. The file is a newer Hermes's (schema 21),
 * whose per-message columns (`active`) the pass digests in id order: the
 * big session's times run out of id order, so a digest taken in time
 * order would differ and the next pass would write the session again.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import type { SqliteConnection } from "../../lib/sqlite/driver/types.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

const BIG = "big_session";
/**
 * About 1 MB of text a message: one long token, so search vectors cost little to compute; one
 * character repeated, so the server stores it compressed (the pass holds and sends it whole).
 */
const BODY = "printf('%.*c', 1000000, 'x')";

/**
 * A message's time: every third one shares the time of the one two before
 * it (out of id order). Each append below starts past such a one, so that
 * no new message goes before one the server holds (an append goes last).
 */
function timeOf(n: number): number {
  return 1_800_000_000 + (n % 3 === 0 ? n - 2 : n);
}

/**
 * Adds messages `from`..`to` to the big session with raw inserts (the FTS
 * triggers dropped first: indexing megabytes of text is not under test).
 * Every fifth is rewound (`active = 0`); `marked` gives one a content prefix.
 */
function addMessages(
  raw: SqliteConnection,
  from: number,
  to: number,
  marked?: { n: number; prefix: string },
): void {
  raw.exec(`DROP TRIGGER IF EXISTS messages_fts_insert;
    DROP TRIGGER IF EXISTS messages_fts_trigram_insert`);
  const insert = raw.prepare(
    `INSERT INTO messages (session_id, role, content, timestamp, active)
     VALUES (?, ?, ? || ${BODY}, ?, ?)`,
  );
  for (let n = from; n <= to; n++) {
    const prefix = marked?.n === n ? marked.prefix : `m${n} `;
    insert.run(BIG, n % 2 ? "user" : "tool", prefix, timeOf(n), n % 5 === 0 ? 0 : 1);
  }
}

/** A digest of each of the big session's messages' content, in the file's order. */
function fileContents(raw: SqliteConnection): string[] {
  return raw.prepare(
    "SELECT content FROM messages WHERE session_id = ? ORDER BY timestamp, id",
  ).all(BIG).map((row) => createHash("md5").update(String(row.content)).digest("hex"));
}

describe("syncFile() and a session larger than a batch", { skip: SKIP }, () => {
  const clients: PgClient[] = [];
  after(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  test("a session over the byte budget arrives whole and in order; appends and failures too", {
    timeout: 120_000,
  }, async () => {
    const { connectSyncTarget, syncFile, wroteAnything } = await import(
      "../../lib/postgres/sync.ts"
    );
    const file = copyFixture("hermes-v21.db");
    using raw = await rawOpen(file);
    raw.prepare("INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)")
      .run(BIG, timeOf(0));
    addMessages(raw, 1, 24);
    const client = await connectSyncTarget(schemaUrl(freshSchema()));
    clients.push(client);
    const sync = (options: { afterSnapshot?: () => void } = {}) =>
      syncFile(client, file, { origin: "h", host: "h", ...options });
    /** The server's digests of the big session's contents, in its message ids' order. */
    const serverContents = async () =>
      (await client.query(
        "SELECT md5(content) AS md5 FROM messages WHERE session_id = $1 ORDER BY id",
        [`h/${BIG}`],
      )).map((row) => String(row.md5));
    const record = async () =>
      (await client.query(
        `SELECT message_count, max_message_id, message_digest, extra_digest FROM sync_sessions
         WHERE session_id = $1`,
        [`h/${BIG}`],
      ))[0];
    const fileStats = () => {
      const row = raw.prepare(
        "SELECT count(*) AS n, max(id) AS max_id FROM messages WHERE session_id = ?",
      ).get(BIG)!;
      return { count: Number(row.n), maxId: Number(row.max_id) };
    };

    // A new session: whole, in the file's order, recorded with the file's count and last id.
    const first = await sync();
    assert.equal(first.created, raw.prepare("SELECT count(*) AS n FROM sessions").get()!.n);
    assert.equal(first.messages, raw.prepare("SELECT count(*) AS n FROM messages").get()!.n);
    assert.deepEqual(await serverContents(), fileContents(raw));
    const recorded = await record();
    assert.deepEqual(
      { count: Number(recorded.message_count), maxId: Number(recorded.max_message_id) },
      fileStats(),
    );
    assert.equal(wroteAnything(await sync()), false, "an unchanged file ships nothing");

    // An append: only the new messages, after the ones held (their server ids kept).
    const held = async () =>
      (await client.query(
        "SELECT min(id) AS lowest, count(*) AS n FROM messages WHERE session_id = $1",
        [`h/${BIG}`],
      ))[0];
    const { lowest } = await held();
    addMessages(raw, 25, 34);
    // One written while the pass runs is left for the next pass.
    const appended = await sync({ afterSnapshot: () => addMessages(raw, 35, 36) });
    assert.deepEqual(
      { appended: appended.appended, messages: appended.messages, rewritten: appended.rewritten },
      { appended: 10, messages: 10, rewritten: 0 },
    );
    const now = await held();
    assert.deepEqual({ lowest: now.lowest, n: Number(now.n) }, { lowest, n: 34 });
    assert.equal((await sync()).appended, 2);
    assert.deepEqual(await serverContents(), fileContents(raw));
    assert.equal(wroteAnything(await sync()), false);

    // A pass failing inside the session (the server refuses its last message): the server keeps
    // the session as it was, not half of the new messages; the next pass ships them once.
    addMessages(raw, 37, 50, { n: 50, prefix: "POISON " });
    await client.query(
      `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.content LIKE 'POISON %' THEN RAISE EXCEPTION 'poisoned message'; END IF;
         RETURN NEW;
       END $$`,
    );
    await client.query(
      "CREATE TRIGGER refuse_poison BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse_poison()",
    );
    const before = { contents: await serverContents(), record: await record() };
    await assert.rejects(sync(), /poisoned message/);
    assert.deepEqual({ contents: await serverContents(), record: await record() }, before);
    await client.query("DROP TRIGGER refuse_poison ON messages");
    const resumed = await sync();
    assert.equal(resumed.appended, 14);
    assert.deepEqual(await serverContents(), fileContents(raw));

    // A rewind of a held message (its `active` changed in place) and a new message after it, as
    // that Hermes writes them: the session is written anew, in the file's order.
    raw.prepare(
      "UPDATE messages SET active = 1 - active WHERE id = (SELECT min(id) FROM messages WHERE session_id = ?)",
    ).run(BIG);
    addMessages(raw, 51, 52);
    const rewound = await sync();
    assert.deepEqual(
      { rewritten: rewound.rewritten, messages: rewound.messages },
      { rewritten: 1, messages: 52 },
    );
    assert.deepEqual(await serverContents(), fileContents(raw));
    assert.equal(wroteAnything(await sync()), false);
  });
});
