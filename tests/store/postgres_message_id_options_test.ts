/**
 * `getMessages` and `countMessages` compare a message id option (`afterId`,
 * `beforeId`, `fromId`) beyond 2^53 with the integer the number is, on the
 * server as SQLite compares it: the server was sent the number's shortest
 * decimal (2^60 as 1152921504606847000, 24 past it), so `fromId` of a
 * message whose id is 2^60 found none and `afterId: 2 ** 60` left out 24
 * messages; `afterId: -(2 ** 63)` failed with "out of range for type
 * bigint" where a file returns every message.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { adminSql, freshSchema, openPgStore, pgEngineSkip } from "./_pg.ts";
import { openStore } from "../../lib/open_store.ts";
import type { MessagesOptions } from "../../lib/core/session_options.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** The first id: 2^60, which a JS number holds exactly. */
const FIRST = 2 ** 60;
/** The ids' step: 256 apart, each a number a JS number holds exactly (2^60 + 1 it cannot). */
const STEP = 256;
/** Messages written, each a second apart, ids from {@linkcode FIRST} on, {@linkcode STEP} apart. */
const COUNT = 40;

const stores: SessionStore[] = [];
after(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** A file and a schema with session `s` of {@linkcode COUNT} messages, ids from 2^60 on (as a server's sequence gives them once there). */
async function engines(): Promise<[string, SessionStore][]> {
  const path = tempDbPath();
  {
    await using file = await openStore(path);
    await file.createSession("s", "cli");
  }
  {
    using raw = await rawOpen(path);
    raw.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${COUNT - 1})
      INSERT INTO messages (id, session_id, role, content, timestamp)
      SELECT ${BigInt(FIRST)} + ${STEP} * i, 's', 'user', 'm' || i, 1000 + i FROM n`);
  }
  const schema = freshSchema();
  const server = await openPgStore({}, schema);
  await server.createSession("s", "cli");
  await adminSql(`INSERT INTO "${schema}".messages (id, session_id, role, content, timestamp)
    SELECT ${BigInt(FIRST)} + ${STEP} * i, 's', 'user', 'm' || i, 1000 + i
    FROM generate_series(0, ${COUNT - 1}) i`);
  const file = await openStore(path, { readonly: true });
  stores.push(file, server);
  return [["sqlite", file], ["postgres", server]];
}

/** The options compared, each with what a file answers. */
const CASES: [MessagesOptions, number][] = [
  [{ fromId: FIRST }, COUNT],
  [{ fromId: FIRST + 10 * STEP, limit: 100 }, COUNT - 10],
  [{ beforeId: FIRST + 32 * STEP, last: 100 }, 32],
  [{ afterId: FIRST + 29 * STEP }, COUNT - 30],
  [{ afterId: FIRST }, COUNT - 1],
  [{ afterId: FIRST + 0.5 }, COUNT - 1],
  [{ afterId: -(2 ** 63) }, COUNT],
];

describe("message id options beyond 2^53 on PostgreSQL", { skip: SKIP }, () => {
  test("the server's answers are the file's", async () => {
    const [[, file], [, server]] = await engines();
    const [first] = await server.getMessages("s", { limit: 1 });
    assert.equal(first.id, FIRST, "the server's first id is 2^60");
    for (const [options, expected] of CASES) {
      const want = (await file.getMessages("s", options)).map((m) => m.content);
      assert.equal(want.length, expected, `file ${JSON.stringify(options)}`);
      const got = (await server.getMessages("s", options)).map((m) => m.content);
      assert.deepEqual(got, want, JSON.stringify(options));
      assert.equal(await server.countMessages("s", options), expected, JSON.stringify(options));
    }
  });
});
