/**
 * insertIndexedAfter() through appendMessages() and importSession(): a large
 * batch fills both full-text tables with exactly what the triggers write,
 * leaves sqlite_master as it was byte for byte, keeps the triggers of a file
 * whose triggers are not the v11 ones, and rolls everything back on failure.
 */
import { describe, test } from "node:test";
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { BULK_INDEX_THRESHOLD } from "../lib/sqlite/fts_bulk.ts";
import type { NewMessage } from "../lib/core/types.ts";
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { mulberry32 } from "./_random.ts";

const MASTER_SQL =
  "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY type, name";

function batch(count: number, seed: number): NewMessage[] {
  const random = mulberry32(seed);
  const words = ["docker", "数据库性能", "kernel", "負荷テスト", "🚀", "a_b-c.d", "Ünïcode"];
  return Array.from({ length: count }, (_, i): NewMessage => {
    const text = Array.from(
      { length: 1 + Math.floor(random() * 8) },
      () => words[Math.floor(random() * words.length)],
    ).join(" ");
    switch (i % 5) {
      case 0:
        return { role: "user", content: text };
      case 1:
        return {
          role: "assistant",
          content: i % 10 === 1 ? null : text,
          toolCalls: [{
            id: `c${i}`,
            type: "function",
            function: { name: "run", arguments: text },
          }],
        };
      case 2:
        return { role: "tool", content: text, toolName: "run", toolCallId: `c${i - 1}` };
      case 3:
        return { role: "user", content: [{ type: "text", text }, { type: "image_url" }] };
      default:
        return { role: "assistant", content: "" };
    }
  });
}

/** Both full-text tables, every row, as stored and as indexed (every token instance). */
function ftsState(raw: SqliteConnection): unknown {
  const state: Record<string, unknown> = {};
  for (const table of ["messages_fts", "messages_fts_trigram"]) {
    state[table] = raw.prepare(
      `SELECT rowid, hex(CAST(content AS BLOB)) AS c FROM ${table} ORDER BY rowid`,
    ).all();
    raw.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_${table} USING fts5vocab(main, ${table}, instance)`,
    );
    state[`${table} tokens`] = raw.prepare(
      `SELECT hex(term) AS t, doc, col, offset FROM temp.v_${table} ORDER BY doc, offset, t`,
    ).all();
    raw.exec(`INSERT INTO ${table}(${table}) VALUES('integrity-check')`);
  }
  return state;
}

async function inspect(
  path: string,
): Promise<{ master: unknown[]; fts: unknown; messages: number }> {
  const raw = await rawOpen(path);
  try {
    return {
      master: raw.prepare(MASTER_SQL).all(),
      fts: ftsState(raw),
      messages: Number(raw.prepare("SELECT count(*) AS n FROM messages").get()!.n),
    };
  } finally {
    raw.close();
  }
}

/**
 * The last two objects created in the file: a batch that set the triggers
 * aside recreated them, so they come last (the one trace it leaves; SQLite
 * and Python never read sqlite_master in row order).
 */
async function lastCreated(path: string): Promise<string[]> {
  const raw = await rawOpen(path);
  try {
    return raw.prepare("SELECT name FROM sqlite_master ORDER BY rowid DESC LIMIT 2").all()
      .map((row) => String(row.name)).reverse();
  } finally {
    raw.close();
  }
}

describe("appendMessages() above the bulk-index threshold", () => {
  test("appendMessages() fills both FTS tables exactly as the per-row triggers would", async () => {
    const messages = batch(600, 11);
    const bulk = tempDbPath();
    const rowByRow = tempDbPath();
    for (const path of [bulk, rowByRow]) {
      using db = await SessionDB.open({ path, clock: () => 1_700_000_000 });
      db.createSession("s", "cli");
      db.appendMessages("s", [{ role: "user", content: "before the batch docker" }]);
    }
    const masterBefore = (await inspect(bulk)).master;
    {
      using db = await SessionDB.open({ path: bulk });
      assert.ok(messages.length >= BULK_INDEX_THRESHOLD);
      db.appendMessages("s", messages);
    }
    {
      using db = await SessionDB.open({ path: rowByRow });
      const small = BULK_INDEX_THRESHOLD - 1;
      for (let i = 0; i < messages.length; i += small) {
        db.appendMessages("s", messages.slice(i, i + small));
      }
    }
    const [a, b] = [await inspect(bulk), await inspect(rowByRow)];
    assert.equal(a.messages, 601);
    assert.deepEqual(a.fts, b.fts);
    assert.deepEqual(a.master, masterBefore, "sqlite_master is unchanged byte for byte");
    assert.deepEqual(await lastCreated(bulk), [
      "messages_fts_insert",
      "messages_fts_trigram_insert",
    ]);
    assert.notDeepEqual(
      await lastCreated(rowByRow),
      await lastCreated(bulk),
      "row by row kept them",
    );
  });

  test("importSession() of a large session indexes it as the triggers would", async () => {
    const source = tempDbPath();
    {
      using db = await SessionDB.open({ path: source });
      db.createSession("s", "cli");
      db.appendMessages("s", batch(300, 5));
    }
    const record = await (async () => {
      using db = await SessionDB.open({ path: source });
      return db.exportSession("s")!;
    })();
    const target = tempDbPath();
    {
      using db = await SessionDB.open({ path: target });
      assert.equal(db.importSession(record).outcome, "imported");
    }
    const [a, b] = [await inspect(target), await inspect(source)];
    assert.deepEqual(a.fts, b.fts);
    assert.deepEqual(a.master, b.master);
    assert.deepEqual(await lastCreated(target), [
      "messages_fts_insert",
      "messages_fts_trigram_insert",
    ]);
  });

  test("replaceMessages() of a long transcript indexes it as the triggers would", async () => {
    const path = tempDbPath();
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
      db.appendMessages("s", batch(20, 4));
      db.replaceMessages(
        "s",
        db.getMessagesAsConversation("s").concat(
          db.getMessagesAsConversation("s"),
          Array.from({ length: 100 }, (_, i) => ({ role: "user", content: `again docker ${i}` })),
        ),
      );
      assert.equal(db.getSession("s")!.message_count, 140);
    }
    assert.deepEqual(await lastCreated(path), [
      "messages_fts_insert",
      "messages_fts_trigram_insert",
    ]);
    const raw = await rawOpen(path);
    try {
      for (const table of ["messages_fts", "messages_fts_trigram"]) {
        const differing = raw.prepare(
          `SELECT count(*) AS n FROM messages m LEFT JOIN ${table} f ON f.rowid = m.id
           WHERE f.content IS NOT (COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') ||
             ' ' || COALESCE(m.tool_calls, ''))`,
        ).get()!;
        assert.equal(Number(differing.n), 0, table);
        const rows = raw.prepare(`SELECT count(*) AS n FROM ${table}`).get()!;
        assert.equal(Number(rows.n), 140, table);
        raw.exec(`INSERT INTO ${table}(${table}) VALUES('integrity-check')`);
      }
    } finally {
      raw.close();
    }
  });

  test("appendMessages() keeps the triggers of a file whose insert trigger is not the v11 one", async () => {
    const path = tempDbPath();
    (await SessionDB.open({ path })).close();
    const raw = await rawOpen(path);
    try {
      raw.exec("DROP TRIGGER messages_fts_insert");
      raw.exec(`CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, 'custom ' || COALESCE(new.content, ''));
END`);
    } finally {
      raw.close();
    }
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
      db.appendMessages(
        "s",
        Array.from({ length: 100 }, (_, i) => ({ role: "user", content: `m${i}` })),
      );
    }
    const check = await rawOpen(path);
    try {
      const rows = check.prepare("SELECT content FROM messages_fts ORDER BY rowid").all();
      assert.equal(rows.length, 100);
      assert.ok(rows.every((r, i) => r.content === `custom m${i}`), "the file's own trigger ran");
    } finally {
      check.close();
    }
  });

  test("appendMessages() of a large batch into a damaged index writes every message and marks the table stale", async () => {
    const path = tempDbPath();
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
      db.appendMessages("s", batch(10, 8));
    }
    // Garbage in the unicode61 table's structure record, written by another process (Python).
    const script = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n" +
      "c.execute(\"UPDATE messages_fts_data SET block = x'ffffffffffffffff' WHERE id = 10\")\n" +
      "c.commit()\n";
    const run = spawnSync("python3", ["-c", script, path], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    {
      using db = await SessionDB.open({ path });
      db.appendMessages("s", batch(300, 9));
      assert.equal(db.getSession("s")!.message_count, 310);
      assert.match(db.getMeta("fts_stale:messages_fts") ?? "", /^\{"reason":/);
    }
    const raw = await rawOpen(path);
    try {
      const names = raw.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name",
      )
        .all().map((r) => String(r.name));
      assert.deepEqual(names, [
        "messages_fts_trigram_delete",
        "messages_fts_trigram_insert",
        "messages_fts_trigram_update",
      ]);
      const indexed = raw.prepare("SELECT count(*) AS n FROM messages_fts_trigram").get()!;
      assert.equal(Number(indexed.n), 310, "the trigram table still has every message");
      raw.exec("INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES('integrity-check')");
    } finally {
      raw.close();
    }
  });

  test("appendMessages() that fails mid-batch leaves messages, index and triggers as they were", async () => {
    const path = tempDbPath();
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
      db.appendMessages("s", batch(10, 1));
    }
    const before = await inspect(path);
    {
      using db = await SessionDB.open({ path });
      const messages = batch(300, 2);
      messages[250] = { role: 42 } as unknown as NewMessage;
      assert.throws(() => db.appendMessages("s", messages), {
        name: "TypeError",
        message: "Cannot append messages: role must be a string: current value is 42",
      });
      assert.throws(() => db.appendMessages("missing", batch(300, 2)), /FOREIGN KEY/);
      assert.equal(db.getSession("s")!.message_count, 10);
    }
    assert.deepEqual(await inspect(path), before);
  });
});
