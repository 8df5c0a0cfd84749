/**
 * `doctor` on a PostgreSQL store: each fault made by hand on the server is
 * found under its own name, a check without --fix changes nothing, --fix
 * repairs it (while an agent appends), and what search and appends do shows
 * the store whole again.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { doctorPostgresStore } from "../../lib/postgres/doctor/doctor.ts";
import type { HealthCheck } from "../../lib/core/health_report.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { runCli } from "../_cli_io.ts";
import { copyFixture } from "../_helpers.ts";
import { LAST_STEP } from "../../lib/postgres/schema.ts";
import { openStore } from "../../lib/open_store.ts";
import { connectPg } from "../../lib/postgres/_client.ts";
import { wordsMatch } from "../../lib/postgres/search.ts";
import { wordsQuery } from "../../lib/postgres/text_search.ts";
import {
  adminSql,
  freshSchema,
  olderSchema,
  openPgStore,
  PG_URL,
  pgEngineSkip,
  schemaUrl,
} from "./_pg.ts";

const SKIP = pgEngineSkip(import.meta.url);

/** A store in a fresh schema with a few sessions: English, CJK, tool calls, a child. */
async function filledStore(): Promise<{ store: SessionStore; schema: string; url: string }> {
  const schema = freshSchema();
  const store = await openPgStore({}, schema);
  await fill(store);
  return { store, schema, url: schemaUrl(schema) };
}

/** Writes filledStore()'s sessions into `store`. */
async function fill(store: SessionStore): Promise<void> {
  await store.createSession("parent", "cli");
  await store.appendMessage("parent", { role: "user", content: "deploy the staging cluster" });
  await store.appendMessage("parent", {
    role: "assistant",
    content: "running it",
    toolCalls: [{ id: "c1", type: "function", function: { name: "shell", arguments: "{}" } }],
  });
  await store.createSession("child", "telegram", { parentSessionId: "parent" });
  await store.appendMessage("child", { role: "user", content: "数据库迁移完成了吗" });
}

/**
 * Runs `fn` on a database of its own on the test server (its URL, and a function running SQL
 * in it), dropped after. A REINDEX or CREATE INDEX CONCURRENTLY waits for every statement of its
 * database that began before it: in the shared one, the other test files' long statements
 * made it wait seconds.
 */
async function inOwnDatabase(
  fn: (server: URL, sql: (text: string) => Promise<unknown>) => Promise<void>,
): Promise<void> {
  const database = `t_db_${process.pid}_${crypto.randomUUID().slice(0, 8)}`;
  await adminSql(`CREATE DATABASE "${database}"`);
  try {
    const server = new URL(PG_URL!);
    server.pathname = `/${database}`;
    const admin = await connectPg(server.href, "public", { max: 1 });
    try {
      await fn(server, (text) => admin.query(text));
    } finally {
      await admin.close();
    }
  } finally {
    await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  }
}

function byName(checks: readonly HealthCheck[], name: string): HealthCheck {
  const check = checks.find((c) => c.name === name);
  assert.ok(check, `a ${name} finding`);
  return check;
}

function problems(checks: readonly HealthCheck[]): string[] {
  return checks.filter((c) => c.status !== "ok").map((c) => c.name);
}

describe("doctor on PostgreSQL", { skip: SKIP }, () => {
  test("a role that may only read the tables gets the report, the sequence not checked", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    const role = `reader_${crypto.randomUUID().slice(0, 8)}`;
    await adminSql(`CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    try {
      await adminSql(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
      await adminSql(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
      await adminSql(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA "${schema}" FROM ${role}`);
      const asRole = new URL(url);
      asRole.username = role;
      asRole.password = "pw";
      // Before: "permission denied for sequence messages_id_seq", and no report at all.
      const report = await doctorPostgresStore(asRole.href);
      const sequence = byName(report.checks, "sequence");
      assert.equal(sequence.status, "warning");
      assert.match(
        sequence.summary,
        /^not checked: this role may not read the message id sequence/,
      );
      assert.deepEqual(problems(report.checks), ["sequence"]);
    } finally {
      await adminSql(`DROP OWNED BY ${role}`);
      await adminSql(`DROP ROLE ${role}`);
    }
  });

  test("a healthy store: every check ok, nothing repaired", { timeout: 60_000 }, async () => {
    const { store, url } = await filledStore();
    await using _ = store;
    const report = await doctorPostgresStore(url, { fix: true });
    assert.deepEqual(problems(report.checks), []);
    assert.equal(report.healthy, true);
    assert.deepEqual(report.repairs, []);
    assert.match(report.sqliteVersion, /^PostgreSQL \d+/);
    assert.doesNotMatch(report.path, /schema=$/);
  });

  test(
    "the Python fixtures copied to a server are healthy; a newer Hermes's counters are not judged",
    {
      timeout: 60_000,
    },
    async () => {
      for (const [fixture, notJudged] of [["hermes-v11.db", 0], ["hermes-v21.db", 4]] as const) {
        const url = schemaUrl(freshSchema());
        const copied = await runCli(["copy", copyFixture(fixture), url]);
        assert.equal(copied.code, 0, copied.err);
        const report = await doctorPostgresStore(url);
        assert.deepEqual(problems(report.checks), [], fixture);
        const counters = byName(report.checks, "counters").summary;
        if (notJudged === 0) assert.doesNotMatch(counters, /not judged/);
        else assert.match(counters, /\(4 sessions of a newer Hermes not judged/);
      }
    },
  );

  test("what this version writes is healthy: NUL, U+E000, Thai, emoji, long CJK, odd tool calls", {
    timeout: 60_000,
  }, async () => {
    const { store, url } = await filledStore();
    await using _ = store;
    const long = Array.from(
      { length: 150_000 },
      (_, i) => String.fromCodePoint(0x4e00 + i % 20_000),
    );
    await store.appendMessages("child", [
      { role: "user", content: "\u0000image\uE000 private \uE000\uE000 use" },
      { role: "user", content: "ฐานข้อมูล ຖານຂໍ້ມູນ ဒေတာ ទិន្នន័យ 🚀 done" },
      { role: "tool", content: long.join(""), toolName: "dump" },
      { role: "assistant", content: null, toolCalls: "not json at all" as never },
      { role: "assistant", content: "two calls", toolCalls: [{ id: "a" }, { id: "b" }] as never },
    ]);
    const report = await doctorPostgresStore(url, { full: true });
    assert.deepEqual(problems(report.checks), [], JSON.stringify(report.checks));
  });

  /**
   * How many messages the word index finds for `word`, asked as a words search asks it (a
   * search that finds nothing there reads by substring: it finds a damaged index's message).
   */
  async function indexed(schema: string, word: string): Promise<number> {
    const tsquery = wordsQuery(wordsMatch(word))!.replaceAll("'", "''");
    const [row] = await adminSql(
      `SELECT count(*) AS n FROM "${schema}".message_words WHERE search_words @@ '${tsquery}'`,
    );
    return Number(row.n);
  }

  test("missing, stray and stale search rows are found, and search finds the message again", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    const [deploy] = await adminSql(
      `SELECT id FROM "${schema}".messages WHERE content LIKE 'deploy%'`,
    );
    await adminSql(`DELETE FROM "${schema}".message_words WHERE id = ${deploy.id}`);
    await adminSql(
      `INSERT INTO "${schema}".message_words (id, session_id, role, timestamp, search_words)
       VALUES (999999, 'gone', 'user', 1, 'ghost')`,
    );
    await adminSql(`UPDATE "${schema}".message_words SET role = 'tool' WHERE id <> ${deploy.id}`);
    assert.equal(await indexed(schema, "staging"), 0, "the word index misses it");
    const checked = await doctorPostgresStore(url);
    const rows = byName(checked.checks, "search_rows");
    assert.equal(rows.status, "problem");
    assert.match(rows.summary, /^1 message has no message_words row/);
    assert.match(rows.summary, /1 message_words row belongs to no message/);
    assert.match(rows.summary, /2 message_words rows differ from their message/);
    assert.ok(rows.details.includes(`message ${deploy.id}: no message_words row`));
    assert.equal(checked.repairs.length, 0);
    assert.equal(checked.healthy, false);

    const fixed = await doctorPostgresStore(url, { fix: true });
    assert.deepEqual(problems(fixed.after!), []);
    assert.match(
      fixed.repairs.find((r) => r.name === "search_rows")!.summary,
      /wrote 1 missing .* deleted 1 .* copied the columns of 2/,
    );
    assert.equal((await store.searchMessages("staging")).length, 1, "search finds it again");
    const [stray] = await adminSql(
      `SELECT count(*) AS n FROM "${schema}".message_words WHERE id = 999999`,
    );
    assert.equal(Number(stray.n), 0);
  });

  test("vectors that no longer match the text are computed again", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    await adminSql(
      `UPDATE "${schema}".messages SET content = '部署 rollback finished' WHERE content LIKE 'deploy%'`,
    );
    assert.equal(await indexed(schema, "rollback"), 0);
    const report = await doctorPostgresStore(url, { fix: true });
    assert.equal(byName(report.checks, "search_vectors").status, "problem");
    assert.match(byName(report.checks, "search_vectors").summary, /^1 of 3 messages/);
    assert.equal(byName(report.after!, "search_vectors").status, "ok");
    assert.equal(await indexed(schema, "rollback"), 1);
    assert.equal((await store.searchMessages("rollback")).length, 1);
    assert.equal((await store.searchMessages("部署")).length, 1, "the CJK grams too");
    assert.equal((await store.searchMessages("staging")).length, 0, "the old words are gone");
  });

  test("above sampleAbove only the newest messages' vectors are compared, unless full", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    await adminSql(
      `UPDATE "${schema}".messages SET content = 'changed' WHERE content LIKE 'deploy%'`,
    );
    const sampled = await doctorPostgresStore(url, { sampleAbove: 2 });
    assert.equal(byName(sampled.checks, "search_vectors").status, "ok");
    assert.match(byName(sampled.checks, "search_vectors").summary, /the newest 2 of 3 messages/);
    const full = await doctorPostgresStore(url, { sampleAbove: 2, full: true });
    assert.equal(byName(full.checks, "search_vectors").status, "problem");
  });

  test("a sequence behind the newest id fails appends until --fix moves it", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    // Ids well past what a raced id's few attempts walk over (`_client.ts`).
    await store.appendMessages(
      "child",
      Array.from({ length: 10 }, (_, i) => ({ role: "user", content: `m${i}` })),
    );
    await adminSql(`SELECT setval('"${schema}".messages_id_seq', 1)`);
    await assert.rejects(store.appendMessage("child", { role: "user", content: "lost?" }));
    const report = await doctorPostgresStore(url, { fix: true });
    assert.equal(byName(report.checks, "sequence").status, "problem");
    assert.equal(byName(report.after!, "sequence").status, "ok");
    const id = await store.appendMessage("child", { role: "user", content: "kept" });
    assert.ok(id > 13);
  });

  test("counters are recounted while an agent appends to the same session", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    await adminSql(
      `UPDATE "${schema}".sessions SET message_count = 40, tool_call_count = 7 WHERE id = 'parent'`,
    );
    let done = false;
    let appended = 0;
    const appending = (async () => {
      while (!done) {
        await store.appendMessage("parent", {
          role: "assistant",
          content: "meanwhile",
          toolCalls: [{ id: "x", type: "function", function: { name: "f", arguments: "{}" } }],
        });
        appended++;
      }
    })();
    const report = await doctorPostgresStore(url, { fix: true });
    done = true;
    await appending;
    const counters = byName(report.checks, "counters");
    assert.equal(counters.status, "problem");
    // The appends that ran before the checks' snapshot are in both counts: 38 apart still.
    const line = counters.details.find((l) => l.startsWith("parent: "));
    const [, stored, rows] = /^parent: message_count (\d+) \(rows (\d+)\)/.exec(line ?? "") ?? [];
    assert.equal(Number(stored) - Number(rows), 38, line);
    const session = await store.getSession("parent");
    assert.equal(session?.message_count, 2 + appended);
    assert.equal(session?.tool_call_count, 1 + appended);
    assert.ok(appended > 0);
  });

  test("a cycle of parent links is cleared at its earliest session", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    await adminSql(
      `UPDATE "${schema}".sessions SET parent_session_id = 'child' WHERE id = 'parent'`,
    );
    const report = await doctorPostgresStore(url, { fix: true });
    assert.match(byName(report.checks, "lineage").summary, /1 cycles of parent links/);
    assert.equal((await store.getSession("parent"))?.parent_session_id, null);
    assert.equal((await store.getSession("child"))?.parent_session_id, "parent");
  });

  test("a cycle of parent links between ids holding U+0000 is cleared", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    let now = 1_750_000_000;
    await using store = await openPgStore({ clock: () => now++ }, schema);
    await store.createSession("x\u0000", "cli");
    await store.createSession("y\u0000", "cli", { parentSessionId: "x\u0000" });
    await adminSql(
      `UPDATE "${schema}".sessions SET parent_session_id =
         (SELECT id FROM "${schema}".sessions WHERE parent_session_id IS NOT NULL)
       WHERE parent_session_id IS NULL`,
    );
    const report = await doctorPostgresStore(schemaUrl(schema), { fix: true });
    assert.match(byName(report.checks, "lineage").summary, /1 cycles of parent links/);
    assert.equal((await store.getSession("x\u0000"))?.parent_session_id, null);
    assert.equal((await store.getSession("y\u0000"))?.parent_session_id, "x\u0000");
  });

  test("missing and invalid indexes are built, leftovers of a REINDEX dropped", {
    timeout: 60_000,
  }, async () => {
    await inOwnDatabase(async (server, sql) => {
      const schema = "doctor";
      server.searchParams.set("schema", schema);
      const url = server.href;
      const store = await openStore(url);
      await using _ = store;
      await fill(store);
      await sql(`DROP INDEX "${schema}".idx_messages_newest`);
      await sql(
        `UPDATE pg_index SET indisvalid = false WHERE indexrelid = '"${schema}".idx_sessions_source'::regclass`,
      );
      // What an interrupted REINDEX CONCURRENTLY leaves: an invalid copy named …_ccnew.
      await sql(`CREATE INDEX idx_sessions_parent_ccnew ON "${schema}".sessions (id)`);
      await sql(
        `UPDATE pg_index SET indisvalid = false WHERE indexrelid = '"${schema}".idx_sessions_parent_ccnew'::regclass`,
      );
      const report = await doctorPostgresStore(url, { fix: true });
      const indexes = byName(report.checks, "indexes");
      assert.deepEqual(indexes.details, [
        "idx_messages_newest: missing",
        "idx_sessions_source: invalid (built again by REINDEX CONCURRENTLY)",
        "idx_sessions_parent_ccnew: invalid leftover of a REINDEX CONCURRENTLY (dropped)",
      ]);
      assert.equal(byName(report.after!, "indexes").status, "ok");
      const names = await sql(
        `SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE c.relnamespace = '"${schema}"'::regnamespace ORDER BY 1`,
      ) as Record<string, unknown>[];
      assert.ok(names.length > 3, `the schema's indexes: ${names.length}`);
      assert.ok(names.every((row) => row.indisvalid === true));
      assert.ok(names.some((row) => row.relname === "idx_messages_newest"));
      assert.ok(!names.some((row) => String(row.relname).endsWith("_ccnew")));
    });
  });

  test("a schema behind is reported without a write, and migrated by --fix", {
    timeout: 60_000,
  }, async () => {
    const schema = await olderSchema(LAST_STEP - 1);
    const url = schemaUrl(schema);
    const checked = await doctorPostgresStore(url);
    assert.deepEqual(checked.checks.map((c) => [c.name, c.status]), [["schema", "problem"]]);
    const steps = `SELECT max(step) AS step FROM "${schema}".hermes_migrations`;
    assert.equal(Number((await adminSql(steps))[0].step), LAST_STEP - 1, "nothing written");
    const fixed = await doctorPostgresStore(url, { fix: true });
    assert.equal(fixed.repairs[0].name, "schema");
    assert.equal(Number((await adminSql(steps))[0].step), LAST_STEP);
    assert.deepEqual(problems(fixed.after!), []);
  });

  test("a synced file without a pass for a week is a warning; its miscounted sessions are named", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    const now = Date.now() / 1000;
    await adminSql(
      `INSERT INTO "${schema}".sync_origins (origin, host, path, last_pass_at)
       VALUES ('web-1', 'web-1', '/srv/state.db', ${now - 8 * 86_400})`,
    );
    await adminSql(
      `INSERT INTO "${schema}".sync_sessions
         (session_id, origin, source_id, row_digest, message_count, max_message_id)
       VALUES ('child', 'web-1', 'child', '', 1, 3)`,
    );
    await adminSql(`UPDATE "${schema}".sessions SET message_count = 5 WHERE id = 'child'`);
    const report = await doctorPostgresStore(url, { clock: () => now });
    const origins = byName(report.checks, "origins");
    assert.equal(origins.status, "warning");
    assert.match(origins.details[0], /^web-1: web-1:\/srv\/state\.db, last pass /);
    assert.match(byName(report.checks, "counters").summary, /1 of them synced from web-1/);
  });

  test("the CLI: --db URL doctor exits 1 on a problem, --fix --json repairs it", {
    timeout: 60_000,
  }, async () => {
    const { store, schema, url } = await filledStore();
    await using _ = store;
    await adminSql(`UPDATE "${schema}".sessions SET message_count = 0`);
    const checked = await runCli(["--db", url, "doctor"]);
    assert.equal(checked.code, 1);
    assert.match(checked.out, /\(PostgreSQL \d+/);
    assert.match(checked.out, /problem +counters +2 sessions have counters/);
    const fixed = await runCli(["--db", url, "doctor", "--fix", "--json"]);
    assert.equal(fixed.code, 0, fixed.err);
    const report = JSON.parse(fixed.out);
    assert.equal(report.healthy, true);
    assert.deepEqual(report.repairs.map((r: { name: string }) => r.name), ["counters"]);
  });

  test("a schema with no store is an error naming it", { timeout: 60_000 }, async () => {
    const run = await runCli(["--db", schemaUrl(freshSchema()), "doctor"]);
    assert.equal(run.code, 1);
    assert.match(run.err, /holds no hermes-state store/);
  });
});
