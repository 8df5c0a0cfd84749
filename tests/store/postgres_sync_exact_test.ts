/**
 * `sync` carries integers beyond 2^53 exactly, as `copy` does: a session's
 * token counts, a message's `token_count`, a newer Hermes's integer
 * columns, and message ids of the file beyond 2^53 (where a JS number
 * rounds `9007199254740993` to `…992`, and a range up to the rounded
 * highest id left the last message behind). Ordinary values digest as
 * before: a server an earlier release synced sees an unchanged pass as
 * unchanged, and only a session it holds rounded is written again.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { connectSyncTarget, syncFile, wroteAnything } from "../../lib/postgres/sync.ts";
import { SESSION_COLUMN_NAMES } from "../../lib/postgres/_rows.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import type { SessionExport } from "../../lib/core/types.ts";
import { rawOpen, tempDir } from "../_helpers.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { adminSql, freshSchema, openPgStore, PG_SKIP, schemaUrl } from "./_pg.ts";

/** The fixture's session the big values are written into. */
const SESSION = "20260429_090322_3762ca";

/** 2^53 + 1: the first integer a JS number rounds. */
const BEYOND = 9007199254740993n;

/** Session counters set in the file. */
const COUNTERS: Record<string, bigint> = {
  input_tokens: BEYOND,
  output_tokens: -BEYOND,
  api_call_count: 9223372036854775807n,
};

/** The file's value of `column` in `record`, as an export gives it. */
function field(record: SessionExport, column: string): unknown {
  return (record as unknown as Record<string, unknown>)[column];
}

/** Runs SQL on a writable raw connection to `path`. */
async function exec(path: string, sql: string): Promise<void> {
  using raw = await rawOpen(path);
  raw.exec(sql);
}

/** A v11 copy: the counters, the last message's token count beyond 2^53, one 1.5. */
async function fileWithBigCounts(): Promise<{ path: string; last: number }> {
  const path = v11Copy();
  using raw = await rawOpen(path);
  const sets = Object.entries(COUNTERS).map(([c, value]) => `${c} = ${value}`).join(", ");
  raw.exec(`UPDATE sessions SET ${sets} WHERE id = '${SESSION}'`);
  const row = raw.prepare("SELECT max(id) AS id FROM messages WHERE session_id = ?").get(SESSION);
  const last = Number(row?.id);
  raw.exec(`UPDATE messages SET token_count = ${BEYOND} WHERE id = ${last}`);
  raw.exec(`UPDATE messages SET token_count = 1.5 WHERE id = ${last - 1}`);
  return { path, last };
}

/** Both exports of the session, the server's and the file's. */
async function bothExports(
  schema: string,
  path: string,
): Promise<{ server: SessionExport; file: SessionExport }> {
  await using store = await openPgStore({}, schema);
  using db = await SessionDB.open({ path, readonly: true });
  return {
    server: (await store.exportSession(`test/${SESSION}`))!,
    file: db.exportSession(SESSION)!,
  };
}

/** The token counts of an export's messages. */
function tokenCounts(record: SessionExport): unknown[] {
  return record.messages.map((m) => m.token_count);
}

describe("sync keeps integers beyond 2^53", { skip: PG_SKIP }, () => {
  const clients: PgClient[] = [];
  after(async () => {
    for (const client of clients.splice(0)) await client.close();
  });
  async function target(): Promise<{ client: PgClient; schema: string }> {
    const schema = freshSchema();
    const client = await connectSyncTarget(schemaUrl(schema));
    clients.push(client);
    return { client, schema };
  }

  test("token counts reach the server exactly; an unchanged pass writes nothing", async () => {
    const { path } = await fileWithBigCounts();
    const { client, schema } = await target();
    const first = await syncFile(client, path, { host: "h", origin: "test" });
    assert.equal(first.created, 42);
    const { server, file } = await bothExports(schema, path);
    for (const [column, value] of Object.entries(COUNTERS)) {
      assert.equal(field(server, column), value, column);
    }
    assert.equal(server.messages.at(-1)!.token_count, BEYOND);
    assert.equal(server.messages.at(-2)!.token_count, 1.5);
    assert.deepEqual(tokenCounts(server), tokenCounts(file));
    const again = await syncFile(client, path, { host: "h", origin: "test" });
    assert.equal(wroteAnything(again), false, JSON.stringify(again));
  });

  test("the CLI: sync, then export, gives every digit", async () => {
    const { path } = await fileWithBigCounts();
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const synced = await runCli(["sync", path, "--to", url, "--origin", "test"]);
    assert.equal(synced.code, 0, synced.err);
    const out = join(tempDir(), "out.jsonl");
    assert.equal((await runCli(["--db", url, "export", out])).code, 0);
    const line = readFileSync(out, "utf8").split("\n").find((l) => l.includes(SESSION))!;
    assert.match(line, new RegExp(`"input_tokens": ?${BEYOND}[,}]`));
    assert.match(line, new RegExp(`"output_tokens": ?-${BEYOND}[,}]`));
    assert.match(line, new RegExp(`"token_count": ?${BEYOND}[,}]`));
  });

  test("a later pass carries a changed count and a new message's count exactly", async () => {
    const { path } = await fileWithBigCounts();
    const { client, schema } = await target();
    await syncFile(client, path, { host: "h", origin: "test" });
    await exec(
      path,
      `UPDATE sessions SET input_tokens = ${BEYOND + 2n} WHERE id = '${SESSION}';
       INSERT INTO messages (session_id, role, content, timestamp, token_count)
         VALUES ('${SESSION}', 'assistant', 'later', 1900000000, ${BEYOND + 4n});`,
    );
    const later = await syncFile(client, path, { host: "h", origin: "test" });
    assert.equal(later.updated, 1);
    assert.equal(later.appended, 1);
    const { server, file } = await bothExports(schema, path);
    assert.equal(server.input_tokens, BEYOND + 2n);
    assert.equal(server.messages.at(-1)!.token_count, BEYOND + 4n);
    assert.deepEqual(tokenCounts(server), tokenCounts(file));
    assert.equal(wroteAnything(await syncFile(client, path, { host: "h", origin: "test" })), false);
  });

  test("a newer Hermes's integer columns beyond 2^53 reach the server exactly", async () => {
    const path = v11Copy();
    await exec(
      path,
      `ALTER TABLE sessions ADD COLUMN big INTEGER;
       ALTER TABLE messages ADD COLUMN big INTEGER;
       UPDATE sessions SET big = ${BEYOND} WHERE id = '${SESSION}';
       UPDATE messages SET big = -${BEYOND} WHERE session_id = '${SESSION}';
       UPDATE messages SET big = 42
         WHERE id = (SELECT max(id) FROM messages WHERE session_id = '${SESSION}');`,
    );
    const { client, schema } = await target();
    await syncFile(client, path, { host: "h", origin: "test" });
    const { server, file } = await bothExports(schema, path);
    assert.equal(field(server, "big"), BEYOND);
    const bigs = (record: SessionExport) =>
      record.messages.map((m) => (m as unknown as Record<string, unknown>).big);
    assert.equal(bigs(file)[0], -BEYOND);
    assert.deepEqual(bigs(server), bigs(file));
    assert.equal(wroteAnything(await syncFile(client, path, { host: "h", origin: "test" })), false);
  });

  test("message ids of the file beyond 2^53: every message ships, once", async () => {
    const path = v11Copy();
    // The highest, 2^53 + 1, reads as 2^53: a range up to that left it behind.
    const ids = [BEYOND - 1n, BEYOND];
    await exec(
      path,
      ids.map((id, i) =>
        `INSERT INTO messages (id, session_id, role, content, timestamp, token_count)
         VALUES (${id}, '${SESSION}', 'user', 'far ${i}', ${1900000000 + i}, ${id});`
      ).join("\n"),
    );
    const { client, schema } = await target();
    await syncFile(client, path, { host: "h", origin: "test" });
    const { server, file } = await bothExports(schema, path);
    assert.deepEqual(
      server.messages.slice(-2).map((m) => [m.content, m.token_count]),
      ids.map((id, i) => [`far ${i}`, id]),
    );
    assert.equal(server.messages.length, file.messages.length);
    assert.equal(wroteAnything(await syncFile(client, path, { host: "h", origin: "test" })), false);
    await exec(
      path,
      `INSERT INTO messages (id, session_id, role, content, timestamp)
       VALUES (${BEYOND + 2n}, '${SESSION}', 'user', 'far 2', 1900000010)`,
    );
    const later = await syncFile(client, path, { host: "h", origin: "test" });
    assert.equal(later.appended, 1);
    const { server: after } = await bothExports(schema, path);
    assert.deepEqual(after.messages.slice(-3).map((m) => m.content), ["far 0", "far 1", "far 2"]);
    assert.equal(wroteAnything(await syncFile(client, path, { host: "h", origin: "test" })), false);
  });

  test("a session too large for a batch, read a page at a time: ids beyond 2^53 page exactly", {
    timeout: 120_000,
  }, async () => {
    const path = v11Copy();
    // 12 messages of 1 MB at one time: pages (of half the 16 MiB budget) follow their ids,
    // which a number rounds (2^53 + 3 reads as 2^53 + 4, and a page after it skipped that one).
    const ids = Array.from({ length: 12 }, (_, i) => BEYOND - 1n + BigInt(i));
    await exec(
      path,
      `DROP TRIGGER IF EXISTS messages_fts_insert;
       DROP TRIGGER IF EXISTS messages_fts_trigram_insert;
       ${
        ids.map((id, i) =>
          `INSERT INTO messages (id, session_id, role, content, timestamp, token_count)
           VALUES (${id}, '${SESSION}', 'user', 'm${i} ' || hex(randomblob(500000)), 1900000000,
             ${id});`
        ).join("\n")
      }`,
    );
    const { client, schema } = await target();
    await syncFile(client, path, { host: "h", origin: "test" });
    const { server, file } = await bothExports(schema, path);
    const tail = (record: SessionExport) =>
      record.messages.slice(-ids.length).map((
        m,
      ) => [String(m.content).split(" ")[0], m.token_count]);
    assert.deepEqual(tail(server), ids.map((id, i) => [`m${i}`, id]));
    assert.deepEqual(tail(server), tail(file));
    assert.equal(server.messages.length, file.messages.length);
    assert.equal(wroteAnything(await syncFile(client, path, { host: "h", origin: "test" })), false);
  });

  test("a server an earlier release synced: unchanged sessions stay so, a rounded one is written exactly once", async () => {
    const { path } = await fileWithBigCounts();
    const { client, schema } = await target();
    await syncFile(client, path, { host: "h", origin: "test" });
    // What an earlier release recorded: each row's digest as it read the row (numbers, the
    // system prompt as its length), and the counters rounded on the server.
    {
      using raw = await rawOpen(path, true);
      const list = SESSION_COLUMN_NAMES.map((c) =>
        c === "system_prompt" ? "octet_length(system_prompt) AS system_prompt" : c
      );
      const rows = raw.prepare(`SELECT ${list.join(", ")} FROM sessions`).all();
      const digests = rows.map((row) => {
        const values = SESSION_COLUMN_NAMES.map((c) => row[c] ?? null);
        const digest = createHash("sha1").update(JSON.stringify(values)).digest("hex");
        return `('${row.id}', '${digest}')`;
      });
      const recorded = await adminSql(
        `SELECT count(*)::int AS n FROM "${schema}".sync_sessions AS s
         JOIN (VALUES ${digests.join(", ")}) AS old(id, digest)
           ON s.source_id = old.id AND s.row_digest = old.digest`,
      );
      // Ordinary rows digest as before: all but the session with the big counters.
      assert.equal(recorded[0].n, 41);
      await adminSql(
        `UPDATE "${schema}".sync_sessions AS s SET row_digest = old.digest
         FROM (VALUES ${digests.join(", ")}) AS old(id, digest) WHERE s.source_id = old.id;
         UPDATE "${schema}".sessions SET input_tokens = ${Number(BEYOND)}
         WHERE id = 'test/${SESSION}'`,
      );
    }
    const pass = await syncFile(client, path, { host: "h", origin: "test" });
    assert.deepEqual(
      { created: pass.created, updated: pass.updated, messages: pass.messages },
      { created: 0, updated: 1, messages: 0 },
    );
    const { server } = await bothExports(schema, path);
    assert.equal(server.input_tokens, BEYOND);
    assert.equal(wroteAnything(await syncFile(client, path, { host: "h", origin: "test" })), false);
  });
});
