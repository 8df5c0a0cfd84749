/**
 * A file whose search tables a newer Hermes laid out its own way (schema 30,
 * see `_newer_layout.ts`): search finds what its trigram table leaves out,
 * and no open, write or repair replaces its layout with the v11 one.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { doctor } from "../lib/health/doctor.ts";
import { copyFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { layOutAsSchema30, schemaText, TOOL_PREFIX } from "./_newer_layout.ts";

/** A chat with a tool result and a cron session, in the newer layout. */
async function newerFile(): Promise<string> {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path });
    db.createSession("chat", "cli");
    db.appendMessage("chat", { role: "user", content: "请检查数据库迁移计划 docker" });
    db.appendMessage("chat", {
      role: "assistant",
      content: null,
      toolCalls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: "{}" } }],
    });
    db.appendMessage("chat", {
      role: "tool",
      content: `日志显示连接超时 ${"x ".repeat(TOOL_PREFIX)} zebrafinch`,
      toolCallId: "c1",
      toolName: "terminal",
    });
    db.createSession("nightly", "cron");
    db.appendMessage("nightly", { role: "user", content: "每日备份报告完成" });
  }
  using raw = await rawOpen(path);
  layOutAsSchema30(raw);
  return path;
}

async function schemaOf(path: string): Promise<Record<string, string | null>> {
  using raw = await rawOpen(path, true);
  return schemaText(raw);
}

async function searchIds(path: string, query: string): Promise<string[]> {
  using db = await SessionDB.open({ path, readonly: true });
  return db.searchMessages(query).map((hit) => `${hit.session_id}/${hit.role}`);
}

/** FTS5's own check of both tables against their views (throws on a mismatch). */
async function assertIndexesSound(path: string): Promise<void> {
  using raw = await rawOpen(path);
  for (const table of ["messages_fts", "messages_fts_trigram"]) {
    raw.exec(`INSERT INTO ${table}(${table}, rank) VALUES ('integrity-check', 1)`);
  }
}

describe("a file in a newer Hermes's search layout", () => {
  test("search finds CJK text its trigram table leaves out: tool rows and cron sessions", async () => {
    const path = await newerFile();
    assert.deepEqual(await searchIds(path, "连接超时"), ["chat/tool"]);
    assert.deepEqual(await searchIds(path, "备份报告"), ["nightly/user"]);
    assert.deepEqual(await searchIds(path, "迁移计划"), ["chat/user"]);
    assert.deepEqual(await searchIds(path, "docker"), ["chat/user"]);
    // That Hermes indexes only the first 8,192 characters of a tool row (documented).
    assert.deepEqual(await searchIds(path, "zebrafinch"), []);
  });

  test("search leaves out the rows it marks hidden, as it does, unless includeInactive", async () => {
    const path = await newerFile();
    {
      using db = await SessionDB.open({ path });
      db.appendMessage("chat", { role: "user", content: "内部提示词 scaffolding 内部" });
      db.appendMessage("chat", { role: "user", content: "shown scaffolding" });
    }
    {
      using raw = await rawOpen(path);
      raw.exec("UPDATE messages SET display_kind = 'hidden' WHERE content LIKE '内部提示词%'");
    }
    using db = await SessionDB.open({ path, readonly: true });
    for (const [query, shown] of [["scaffolding", 1], ["内部提示词", 0], ["内部", 0]] as const) {
      for (const sort of ["rank", "newest", "oldest"] as const) {
        assert.equal(db.searchMessages(query, { sort }).length, shown, `${query} ${sort}`);
        assert.equal(
          db.searchMessages(query, { sort, includeInactive: true }).length,
          shown + 1,
          `${query} ${sort} includeInactive`,
        );
      }
    }
  });

  test("writing to it keeps every CREATE text, and its own triggers index the new rows", async () => {
    const path = await newerFile();
    const before = await schemaOf(path);
    {
      using db = await SessionDB.open({ path });
      db.appendMessage("chat", { role: "user", content: "新的部署日志 kubernetes" });
      db.replaceMessages("nightly", [{ role: "user", content: "周末备份报告失败" }]);
    }
    assert.deepEqual(await schemaOf(path), before);
    await assertIndexesSound(path);
    assert.deepEqual(await searchIds(path, "kubernetes"), ["chat/user"]);
    assert.deepEqual(await searchIds(path, "部署日志"), ["chat/user"]);
    assert.deepEqual(await searchIds(path, "备份报告"), ["nightly/user"]);
    assert.equal((await searchIds(path, "每日")).length, 0, "the replaced message is gone");
  });

  test("opening it does not recreate a search table it dropped to refill", async () => {
    const path = await newerFile();
    {
      using raw = await rawOpen(path);
      raw.exec(`DROP TRIGGER messages_fts_trigram_insert; DROP TRIGGER messages_fts_trigram_delete;
        DROP TRIGGER messages_fts_trigram_update; DROP TABLE messages_fts_trigram;
        DROP VIEW messages_fts_trigram_src;
        INSERT INTO state_meta (key, value) VALUES ('fts_rebuild_high_water', '5')`);
    }
    const before = await schemaOf(path);
    {
      using db = await SessionDB.open({ path });
      db.appendMessage("chat", { role: "user", content: "重新建立索引中" });
    }
    assert.deepEqual(await schemaOf(path), before);
    assert.deepEqual(await searchIds(path, "建立索引"), ["chat/user"]);
    assert.deepEqual(await searchIds(path, "连接超时"), ["chat/tool"]);
  });

  test("doctor finds it healthy, and --fix leaves its layout as it is", async () => {
    const path = await newerFile();
    const before = await schemaOf(path);
    const report = await doctor(path);
    assert.deepEqual(report.checks.filter((c) => c.status !== "ok").map((c) => c.name), []);
    const schema = report.checks.find((c) => c.name === "schema");
    assert.match(schema?.summary ?? "", /lays out its search tables its own way/);
    const fixed = await doctor(path, { fix: true });
    assert.deepEqual(fixed.repairs.map((r) => r.name).filter((name) => name !== "wal"), []);
    assert.deepEqual(await schemaOf(path), before);
  });

  test("doctor names a missing trigger of its own and --fix does not put a v11 one there", async () => {
    const path = await newerFile();
    {
      using raw = await rawOpen(path);
      raw.exec("DROP TRIGGER messages_fts_insert");
    }
    const before = await schemaOf(path);
    const report = await doctor(path, { fix: true });
    const fts = report.checks.find((c) => c.name === "fts:messages_fts");
    assert.equal(fts?.status, "problem");
    assert.equal(fts?.fixable, false);
    assert.match(
      fts?.summary ?? "",
      /messages_fts_insert is missing: new messages are not indexed/,
    );
    assert.match(fts?.fix ?? "", /the Hermes that wrote it \(schema 30\)/);
    assert.equal(report.healthy, false);
    assert.deepEqual(await schemaOf(path), before);
  });

  test("doctor on it with a table dropped to refill warns, and --fix creates nothing", async () => {
    const path = await newerFile();
    {
      using raw = await rawOpen(path);
      raw.exec(`DROP TRIGGER messages_fts_trigram_insert; DROP TRIGGER messages_fts_trigram_delete;
        DROP TRIGGER messages_fts_trigram_update; DROP TABLE messages_fts_trigram`);
    }
    const before = await schemaOf(path);
    const report = await doctor(path, { fix: true });
    const fts = report.checks.find((c) => c.name === "fts:messages_fts_trigram");
    assert.equal(fts?.status, "warning");
    assert.match(fts?.summary ?? "", /missing: search reads messages by substring/);
    assert.equal(report.healthy, true);
    assert.deepEqual(await schemaOf(path), before);
  });

  test("a write goes through its CJK index's missing tokenizer as that Hermes does: triggers set aside, fts_cjk_stale", async () => {
    const path = tempDbPath();
    copyFileSync(
      fileURLToPath(new URL("./fixtures/newer-cjk-tokenizer.db", import.meta.url)),
      path,
    );
    const cjkTriggers = ["insert", "delete", "update"].map((e) => `messages_fts_cjk_${e}`);
    const before = await schemaOf(path);
    for (const name of cjkTriggers) assert.ok(before[name], name);
    {
      using db = await SessionDB.open({ path });
      db.appendMessage("chat", { role: "user", content: "新的部署日志 kubernetes" });
      db.replaceMessages("chat", [
        ...db.getMessages("chat").map((m) => ({ role: m.role, content: m.content })),
        { role: "assistant", content: "done" },
      ]);
      db.deleteSession("nightly");
      assert.equal(db.getMeta("fts_cjk_stale"), "1");
    }
    const after = await schemaOf(path);
    for (const name of cjkTriggers) delete before[name];
    assert.deepEqual(after, before, "only the three CJK triggers are gone");
    await assertIndexesSound(path);
    assert.deepEqual(await searchIds(path, "kubernetes"), ["chat/user"]);
    assert.deepEqual(await searchIds(path, "部署日志"), ["chat/user"]);
    assert.deepEqual(await searchIds(path, "备份报告"), []);
  });

  test("reading a file with that CJK index changes nothing", async () => {
    const path = tempDbPath();
    copyFileSync(
      fileURLToPath(new URL("./fixtures/newer-cjk-tokenizer.db", import.meta.url)),
      path,
    );
    const before = await schemaOf(path);
    assert.deepEqual(await searchIds(path, "迁移计划"), ["chat/user"]);
    const report = await doctor(path);
    assert.equal(report.healthy, true);
    assert.deepEqual(await schemaOf(path), before);
  });
  test("a write that meets damage in its words index sets that Hermes's own mark, fts_stale, not ours", async () => {
    const path = await newerFile();
    // Its structure record overwritten, by another writer (this driver may not write shadow tables).
    const script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); " +
      "c.execute(\"UPDATE messages_fts_data SET block = x'ffffffffffffffff' WHERE id = 10\"); c.commit()";
    const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    {
      using db = await SessionDB.open({ path });
      db.appendMessage("chat", { role: "user", content: "a kestrel over the yard" });
      assert.equal(db.getMeta("fts_stale"), "1");
      assert.equal(db.getMeta("fts_stale:messages_fts"), undefined);
    }
    const schema = await schemaOf(path);
    for (const event of ["insert", "delete", "update"]) {
      assert.equal(schema[`messages_fts_${event}`], undefined, `${event} trigger set aside`);
    }
    assert.ok(schema.messages_fts_trigram_insert, "the trigram table is kept current");
    assert.deepEqual(await searchIds(path, "kestrel"), ["chat/user"]);
  });

  test("search reads a table it marked stale by substring; info and doctor name the mark", async () => {
    const path = await newerFile();
    {
      // As that Hermes leaves it: triggers set aside, the mark set, then a message it did not index.
      using raw = await rawOpen(path);
      raw.exec(`DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_delete;
        DROP TRIGGER messages_fts_update;
        INSERT INTO state_meta (key, value) VALUES ('fts_stale', '1');
        INSERT INTO messages (session_id, role, content, timestamp)
        VALUES ('chat', 'user', 'the osprey came back', 1800000000)`);
    }
    assert.deepEqual(await searchIds(path, "osprey"), ["chat/user"]);
    const cli = await runCli(["--db", path, "search", "osprey"]);
    assert.equal(cli.code, 0, cli.err);
    assert.equal(
      cli.err,
      "hermes-state: search: the search index messages_fts is marked stale by the newer Hermes " +
        "that wrote this file (its next start rebuilds it); those messages were matched by " +
        "substring instead (slower, newest first)\n",
    );
    {
      using db = await SessionDB.open({ path, readonly: true });
      const [stale, ...others] = db.inspect().staleFtsTables;
      assert.equal(others.length, 0);
      assert.equal(stale.table, "messages_fts");
      assert.match(
        stale.reason,
        /^fts_stale is set: the newer Hermes that wrote this file rebuilds/,
      );
    }
    const fts = (await doctor(path)).checks.find((c) => c.name === "fts:messages_fts");
    assert.equal(fts?.status, "problem");
    assert.equal(fts?.fixable, false);
    assert.match(fts?.summary ?? "", /marked stale in state_meta: fts_stale is set/);
    // Its "0" is no mark: the word index is read again, and finds nothing; the word is then
    // searched again by substring among the messages the trigram index holds, which has it.
    {
      using raw = await rawOpen(path);
      raw.exec("UPDATE state_meta SET value = '0' WHERE key = 'fts_stale'");
    }
    assert.deepEqual(await searchIds(path, "osprey"), ["chat/user"]);
    assert.deepEqual(await searchIds(path, "osprey NOT came"), []);
    assert.equal((await runCli(["--db", path, "search", "osprey"])).err, "");
  });
});
