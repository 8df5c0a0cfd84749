/**
 * The PostgreSQL engine on a server whose settings are unusual but real:
 * transactions that default to repeatable read or serializable (a role's or
 * database's `default_transaction_isolation`, here sent from the URL as the
 * same run-time setting). Stores opening one schema at once still run each
 * migration once: the step that waits for the migration lock must then see
 * what the holder of the lock committed. And a server that takes no writes
 * (`default_transaction_read_only`, as a standby): a store opened there for
 * writing reads, and each write fails as read-only, changing nothing. And a
 * legacy server with `standard_conforming_strings = off`, where a backslash
 * in a plain string literal escapes the next character. And a database not
 * encoded in UTF8 (an old cluster's `SQL_ASCII`, a `LATIN1` one): a new store
 * there is refused, naming the encoding, before anything is written. And a
 * role whose CONNECTION LIMIT is below the pool's size: writes may fail
 * ("too many connections"), but a write reported failed wrote nothing.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { OpenError, StorageError } from "../../lib/core/errors.ts";
import { migratePostgresStore } from "../../lib/postgres/postgres_store.ts";
import { connectPg } from "../../lib/postgres/_client.ts";
import { adminSql, freshSchema, olderSchema, PG_URL, pgEngineSkip, schemaUrl } from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** `schema`'s URL with the server's transactions defaulting to `isolation`. */
function isolatedUrl(schema: string, isolation: string): string {
  return `${schemaUrl(schema)}&default_transaction_isolation=${encodeURIComponent(isolation)}`;
}

describe("PostgreSQL server settings", { skip: SKIP }, () => {
  const stores: SessionStore[] = [];
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  /** Opens `url` from `count` stores at once; each must open, and all share one store. */
  async function openTogether(url: string, count: number): Promise<void> {
    const opened = await Promise.allSettled(Array.from({ length: count }, () => openStore(url)));
    for (const result of opened) if (result.status === "fulfilled") stores.push(result.value);
    const failures = opened.flatMap((result) =>
      result.status === "rejected" ? [(result.reason as Error).message] : []
    );
    assert.deepEqual(failures, []);
    const [first, ...others] = opened.map((result) =>
      (result as PromiseFulfilledResult<SessionStore>).value
    );
    await first.createSession("s", "cli");
    await first.appendMessage("s", { role: "user", content: "opened together" });
    assert.equal((await first.searchMessages("together")).length, 1);
    for (const other of others) assert.equal(await other.messageCount(), 1);
  }

  for (const isolation of ["repeatable read", "serializable"]) {
    test(
      `stores opening one new schema at once, transactions in ${isolation}, all open`,
      { timeout: 60_000 },
      async () => {
        await openTogether(isolatedUrl(freshSchema(), isolation), 4);
      },
    );
  }

  test(
    "stores opening one new schema at once with a short lock_timeout wait for the migration",
    { timeout: 60_000 },
    async () => {
      await openTogether(`${schemaUrl(freshSchema())}&lock_timeout=10`, 4);
    },
  );

  test(
    "on a server that takes no writes, a store opened for writing reads, and writes fail read-only",
    { timeout: 60_000 },
    async () => {
      const schema = freshSchema();
      const writer = await openStore(schemaUrl(schema));
      await writer.createSession("kept", "cli");
      await writer.close();
      const store = await openStore(`${schemaUrl(schema)}&default_transaction_read_only=on`);
      stores.push(store);
      assert.equal((await store.getSession("kept"))?.source, "cli");
      const readOnly = (error: unknown) =>
        error instanceof StorageError && error.kind === "readonly" &&
        /read-only transaction/.test(error.message);
      await assert.rejects(store.createSession("new", "cli"), readOnly);
      await assert.rejects(store.appendMessage("kept", { role: "user", content: "x" }), readOnly);
      await assert.rejects(store.setSessionTitle("kept", "a title"), readOnly);
      assert.equal(await store.sessionCount(), 1);
      assert.equal(await store.messageCount(), 0);
      assert.equal((await store.getSession("kept"))?.title, null);
    },
  );

  test(
    "with standard_conforming_strings off, prefixes, title lineages and substring search work",
    { timeout: 60_000 },
    async () => {
      const store = await openStore(`${schemaUrl(freshSchema())}&standard_conforming_strings=off`);
      stores.push(store);
      await store.createSession("20260101_abc", "cli");
      await store.appendMessage("20260101_abc", { role: "user", content: "部署記憶 docker" });
      assert.equal(await store.resolveSessionId("20260101_a"), "20260101_abc");
      assert.equal((await store.sessionIdsWithPrefix("20260101")).count, 1);
      assert.equal(await store.setSessionTitle("20260101_abc", "deploy"), true);
      assert.equal(await store.getNextTitleInLineage("deploy"), "deploy #2");
      assert.equal(await store.resolveSessionByTitle("deploy"), "20260101_abc");
      assert.deepEqual((await store.searchMessages("記憶")).map((hit) => hit.session_id), [
        "20260101_abc",
      ]);
    },
  );

  for (const encoding of ["SQL_ASCII", "LATIN1"]) {
    test(`a new store in a database encoded in ${encoding} is refused, naming it`, {
      timeout: 60_000,
    }, async () => {
      const database = `hermes_${encoding.toLowerCase()}_${crypto.randomUUID().slice(0, 8)}`;
      await adminSql(
        `CREATE DATABASE ${database} ENCODING '${encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
      );
      try {
        const server = new URL(PG_URL!);
        server.pathname = `/${database}`;
        server.searchParams.set("schema", "hermes");
        const url = server.href;
        const refused = (error: unknown) =>
          error instanceof OpenError &&
          error.message.includes(`is encoded in ${encoding}`) &&
          error.message.includes("needs a UTF8 database");
        await assert.rejects(openStore(url), refused);
        await assert.rejects(migratePostgresStore(url), refused);
        // Nothing was written there: no schema was created.
        server.searchParams.delete("schema");
        const client = await connectPg(server.href, "public", { max: 1 });
        try {
          const [row] = await client.query(
            "SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'hermes'",
          );
          assert.equal(row.n, 0);
        } finally {
          await client.close();
        }
      } finally {
        await adminSql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      }
    });
  }

  test(
    "with a role's connection limit below the pool, a write reported failed wrote nothing",
    { timeout: 120_000 },
    async () => {
      const schema = freshSchema();
      const role = `hermes_limited_${crypto.randomUUID().slice(0, 8)}`;
      const admin = await openStore(schemaUrl(schema));
      stores.push(admin);
      const ids = Array.from({ length: 90 }, (_, i) => `s${String(i).padStart(3, "0")}`);
      const records = [];
      for (const id of ids) {
        await admin.createSession(id, "cli");
        await admin.appendMessages(id, [
          { role: "user", content: `question ${id}` },
          { role: "assistant", content: `answer ${id}` },
        ]);
        records.push({ ...(await admin.exportSession(id))!, id: `copy_${id}` });
      }
      await adminSql(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 2`);
      try {
        await adminSql(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
        await adminSql(`GRANT ALL ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
        await adminSql(`GRANT ALL ON ALL SEQUENCES IN SCHEMA "${schema}" TO ${role}`);
        const server = new URL(PG_URL!);
        server.username = role;
        server.searchParams.set("schema", schema);
        const limited = await openStore(server.href);
        const imported = new Set<string>();
        const appended = new Map<string, number>();
        try {
          // Three at a time, as `copy` writes into a server: the pool opens more connections
          // than the role may have, and some writes fail.
          for (let i = 0; i < records.length; i += 3) {
            await Promise.all(
              records.slice(i, i + 3).map(async (record, j) => {
                await limited.importSession(record).then(() => imported.add(record.id), () => {});
                const id = ids[i + j];
                await limited.appendMessage(id, { role: "user", content: "again" }).then(
                  () => appended.set(id, (appended.get(id) ?? 0) + 1),
                  () => {},
                );
              }),
            );
          }
        } finally {
          await limited.close();
        }
        const present = new Set(
          (await admin.listSessionsRich({ limit: 1000 })).map((row) => row.id),
        );
        const copies = records.map((record) => record.id);
        assert.deepEqual(copies.filter((id) => present.has(id)), [...imported].sort());
        for (const id of ids) {
          assert.equal(await admin.messageCount(id), 2 + (appended.get(id) ?? 0), id);
        }
      } finally {
        await adminSql(`DROP OWNED BY ${role}`);
        await adminSql(`DROP ROLE ${role}`);
      }
    },
  );

  test(
    "stores upgrading one older schema at once, transactions in repeatable read, all open",
    { timeout: 60_000 },
    async () => {
      await openTogether(isolatedUrl(await olderSchema(7), "repeatable read"), 4);
    },
  );
});
