/**
 * A statement a connection prepared before another process changed the
 * file's schema (a newer Hermes adding `messages.active` while a server
 * keeps the file open) is prepared again: its rows carry the new columns,
 * so the rows a transcript leaves out are marked as such.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { transcriptMarks } from "../lib/core/message_row.ts";
import { copyFixture, rawOpen } from "./_helpers.ts";

const SESSION = "20251221_090000_9738df";

test("rows read after another process added a column carry it, through statements prepared before", async () => {
  const file = copyFixture("hermes-v11.db");
  using db = await SessionDB.open({ path: file, readonly: true });
  const every = { includeInactive: true } as const;
  const before = db.getMessages(SESSION, every);
  assert.equal(Object.hasOwn(before[0], "active"), false);
  {
    using raw = await rawOpen(file);
    raw.exec(`ALTER TABLE messages ADD COLUMN active INTEGER DEFAULT 1;
      UPDATE messages SET active = 0 WHERE id =
        (SELECT max(id) FROM messages WHERE session_id = '${SESSION}')`);
  }
  const after = db.getMessages(SESSION, every);
  assert.equal(after.length, before.length);
  assert.equal(after.at(-1)?.active, 0);
  assert.deepEqual(transcriptMarks(after.at(-1)!), ["[rewound]"]);
  assert.equal(db.getMessages(SESSION).length, before.length - 1);
});

test("a statement prepared before the first look at the columns is prepared again after another process added one", async () => {
  const file = copyFixture("hermes-v11.db");
  using db = await SessionDB.open({ path: file, readonly: true });
  // Prepared (and cached) before anything has read the schema cookie.
  assert.equal(Object.hasOwn(db.getSession(SESSION)!, "archived"), false);
  {
    using raw = await rawOpen(file);
    raw.exec("ALTER TABLE sessions ADD COLUMN archived INTEGER DEFAULT 0");
  }
  db.getMessages(SESSION); // the first look at the columns: the cookie has moved since the open
  assert.equal(db.getSession(SESSION)?.archived, 0);
});
