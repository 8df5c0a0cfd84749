import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { join } from "node:path";
import { runCli } from "./_cli_io.ts";
import { copyFixture, expected, rawOpen, tempDir } from "./_helpers.ts";

/** What the schema-21 Hermes answers on `hermes-v21.db` (`expected/v21.json`). */
interface V21 {
  schema_version: number;
  list_sessions_rich: string[];
  list_sessions_rich_include_archived: string[];
  get_messages: Record<string, number[]>;
  get_messages_include_inactive: Record<string, number[]>;
  search_messages: Record<string, [string, number][]>;
}

const V21_EXPECTED = await expected<V21>("v21.json");

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

for (const readonly of [true, false]) {
  const how = readonly ? "read-only" : "writable";

  test(`listSessionsRich() hides archived sessions of a schema-21 file unless includeArchived (${how})`, async () => {
    using db = await SessionDB.open({ path: copyFixture("hermes-v21.db"), readonly });
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
    assert.deepEqual(ids(db.listSessionsRich()), V21_EXPECTED.list_sessions_rich);
    assert.deepEqual(
      ids(db.listSessionsRich({ includeArchived: true })),
      V21_EXPECTED.list_sessions_rich_include_archived,
    );
    const archived = db.listSessionsRich({ includeArchived: true }).find((row) =>
      row.id === "20260501_100000_arch01"
    );
    assert.equal(archived?.archived, 1, "the newer column is returned");
  });

  test(`getMessages() leaves out rewound and compacted rows of a schema-21 file unless includeInactive (${how})`, async () => {
    using db = await SessionDB.open({ path: copyFixture("hermes-v21.db"), readonly });
    for (const [id, wanted] of Object.entries(V21_EXPECTED.get_messages)) {
      assert.deepEqual(db.getMessages(id).map((m) => m.id), wanted, id);
    }
    for (const [id, wanted] of Object.entries(V21_EXPECTED.get_messages_include_inactive)) {
      assert.deepEqual(db.getMessages(id, { includeInactive: true }).map((m) => m.id), wanted, id);
    }
    const replay = db.getMessagesAsConversation("20260501_110000_rew01");
    assert.equal(replay.length, 2, "a rewound turn is not replayed");
    assert.ok(!JSON.stringify(replay).includes("ZEBRAFISH42"));
  });

  test(`searchMessages() keeps compacted rows and drops rewound ones of a schema-21 file (${how})`, async () => {
    using db = await SessionDB.open({ path: copyFixture("hermes-v21.db"), readonly });
    for (const [query, wanted] of Object.entries(V21_EXPECTED.search_messages)) {
      const hits = db.searchMessages(query).map((hit) => [hit.session_id, hit.id]);
      assert.deepEqual(hits, wanted, query);
    }
    const rewound = db.searchMessages("ZEBRAFISH42", { includeInactive: true });
    assert.deepEqual(rewound.map((hit) => hit.id), [9, 10]);
  });
}

test("exportSession() of a schema-21 file keeps every row and every newer column", async () => {
  using db = await SessionDB.open({ path: copyFixture("hermes-v21.db"), readonly: true });
  const record = db.exportSession("20260501_120000_comp01")!;
  assert.deepEqual(record.messages.map((m) => m.id), [11, 12, 13, 14, 15]);
  assert.equal(record.messages[0].compacted, 1);
  assert.equal(record.messages[0].active, 0);
  assert.equal(record.rewind_count, 0);
});

test("every export of a schema-21 file keeps the rewound and compacted rows: SessionDB and SessionStore agree", async () => {
  const path = copyFixture("hermes-v21.db");
  using db = await SessionDB.open({ path, readonly: true });
  await using store = await openStore(path, { readonly: true });
  const ids = (records: { id: string; messages: { id: number }[] }[]) =>
    records.map((record) => [record.id, record.messages.map((m) => m.id)]);
  const all = db.exportAll();
  const everyRow = all.map((session) => [
    session.id,
    db.getMessages(session.id, { includeInactive: true }).map((m) => m.id),
  ]);
  assert.equal(all.flatMap((session) => session.messages).length, 15);
  assert.deepEqual(ids(all), everyRow);
  for (const [id, wanted] of Object.entries(V21_EXPECTED.get_messages_include_inactive)) {
    assert.deepEqual(all.find((session) => session.id === id)?.messages.map((m) => m.id), wanted);
  }
  assert.deepEqual([...db.iterateExport()], all);
  assert.deepEqual(
    all.map((session) => db.exportSession(session.id)),
    all.map(({ last_active: _, ...rest }) => rest),
  );
  assert.deepEqual(await store.exportAll(), all);
  const streamed = [];
  for await (const session of store.iterateExport()) streamed.push(session);
  assert.deepEqual(streamed, all);
  assert.deepEqual(
    await store.exportSession("20260501_110000_rew01"),
    db.exportSession("20260501_110000_rew01"),
  );
});

test("export - of a schema-21 file writes exactly what exportAll() returns, every row included", async () => {
  const path = copyFixture("hermes-v21.db");
  const run = await runCli(["--db", path, "export", "-"]);
  assert.equal(run.code, 0, run.err);
  using db = await SessionDB.open({ path, readonly: true });
  const lines = run.out.trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(lines, JSON.parse(JSON.stringify(db.exportAll())));
  assert.equal(lines.flatMap((session) => session.messages).length, 15);
});

test("exportAll() and importSession() round-trip a schema-21 file, inactive rows included", async () => {
  using from = await SessionDB.open({ path: copyFixture("hermes-v21.db"), readonly: true });
  using into = await SessionDB.open({ path: copyFixture("hermes-v21.db") });
  const exported = from.exportAll();
  for (const session of exported) into.deleteSession(session.id);
  for (const session of [...exported].reverse()) {
    assert.deepEqual(into.importSession(session).droppedColumns, [], session.id);
  }
  assert.deepEqual(into.exportAll(), exported);
  assert.deepEqual(
    into.getMessages("20260501_110000_rew01", { includeInactive: true }).map((m) => m.id),
    [7, 8, 9, 10],
  );
  assert.deepEqual(into.getMessages("20260501_110000_rew01").map((m) => m.id), [7, 8]);
});

test("SessionDB.open() of a schema-21 file changes no byte read-only, and neither schema nor version writable", async () => {
  const path = copyFixture("hermes-v21.db");
  const before = sha256(path);
  const raw = await rawOpen(path, true);
  const schema = raw.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
  raw.close();
  (await SessionDB.open({ path, readonly: true })).close();
  await (await openStore(path, { readonly: true })).close();
  assert.equal(sha256(path), before);
  (await SessionDB.open({ path })).close();
  const after = await rawOpen(path, true);
  assert.deepEqual(
    after.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all(),
    schema,
  );
  assert.equal(after.prepare("SELECT version FROM schema_version").get()!.version, 21);
  after.close();
});

test("importSession() into a schema-11 file reports the columns of a schema-21 export it could not keep", async () => {
  using from = await SessionDB.open({ path: copyFixture("hermes-v21.db"), readonly: true });
  using into = await SessionDB.open({ path: join(tempDir(), "state.db") });
  const result = into.importSession(from.exportSession("20260501_100000_arch01"));
  assert.equal(result.outcome, "imported");
  assert.ok(result.droppedColumns.includes("archived"), result.droppedColumns.join());
  assert.ok(result.droppedColumns.includes("messages.active"));
  assert.ok(!result.droppedColumns.includes("last_active"));
  assert.ok(!result.droppedColumns.includes("messages"));
  using same = await SessionDB.open({ path: copyFixture("hermes-v21.db") });
  const copy = same.exportSession("20260501_120000_comp01")!;
  const again = same.importSession({ ...copy }, { replace: true });
  assert.deepEqual(again.droppedColumns, [], "a schema-21 file keeps every column");
  assert.deepEqual(same.getMessages("20260501_120000_comp01").map((m) => m.id), [14, 15]);
});

test("the CLI lists archived sessions and shows rewound messages only with --all, marked", async () => {
  const path = copyFixture("hermes-v21.db");
  const list = await runCli(["--db", path, "list"]);
  assert.equal(list.code, 0, list.err);
  assert.ok(!list.out.includes("20260501_100000_arch01"));
  const all = await runCli(["--db", path, "list", "--all"]);
  assert.match(all.out, /\[archived\] Archived .*20260501_100000_arch01/);
  const show = await runCli(["--db", path, "show", "20260501_110000_rew01"]);
  assert.ok(!show.out.includes("ZEBRAFISH42"));
  const shown = await runCli(["--db", path, "show", "--all", "20260501_110000_rew01"]);
  assert.match(shown.out, /── user · [^\n]* · \[rewound\] ─+\nWrong turn: talk about ZEBRAFISH42/);
  const compacted = await runCli(["--db", path, "show", "--all", "20260501_120000_comp01"]);
  assert.equal((compacted.out.match(/\[compacted\]/g) ?? []).length, 3);
});

/** A copy of the schema-21 fixture whose messages 1 (the first user message) and 2 are `display_kind = 'hidden'`. */
async function withHiddenRows(): Promise<string> {
  const path = copyFixture("hermes-v21.db");
  using raw = await rawOpen(path);
  raw.exec(`ALTER TABLE messages ADD COLUMN display_kind TEXT;
    UPDATE messages SET display_kind = 'hidden' WHERE id IN (1, 2)`);
  return path;
}

test("show leaves out rows that Hermes hides; --all shows them marked [hidden]", async () => {
  const path = await withHiddenRows();
  const show = await runCli(["--db", path, "show", "20260501_090000_live01"]);
  assert.equal(show.code, 0, show.err);
  assert.ok(!show.out.includes("docker compose"), show.out);
  assert.match(show.out, /Also check the 数据库 migration status/);
  const all = await runCli(["--db", path, "show", "--all", "20260501_090000_live01"]);
  assert.match(
    all.out,
    /── user · [^\n]* · \[hidden\] ─+\nDeploy the chat service with docker compose/,
  );
  assert.equal((all.out.match(/\[hidden\]/g) ?? []).length, 2);
});

test("Markdown and HTML exports mark the rows that Hermes neither replays nor shows", async () => {
  const path = await withHiddenRows();
  const md = await runCli(["--db", path, "export", "--format", "md", "-"]);
  assert.equal(md.code, 0, md.err);
  const marked = (mark: string) =>
    (md.out.match(new RegExp(`^## .* · \\[${mark}\\]$`, "gm")) ?? []).length;
  assert.deepEqual([marked("hidden"), marked("rewound"), marked("compacted")], [2, 2, 3]);
  const html = await runCli(["--db", path, "export", "--format", "html", "-"]);
  assert.equal(html.code, 0, html.err);
  assert.equal(
    (html.out.match(/<span class="mark">\[(hidden|rewound|compacted)\]<\/span>/g) ?? []).length,
    7,
  );
});

test("a listing's preview skips the rows that Hermes's search skips: hidden and rewound", async () => {
  const path = await withHiddenRows();
  {
    using raw = await rawOpen(path);
    // The rewound session's first user row taken back too: its preview is the next shown one.
    raw.exec("UPDATE messages SET active = 0 WHERE id = 7");
  }
  using db = await SessionDB.open({ path, readonly: true });
  const previews = Object.fromEntries(
    db.listSessionsRich({ includeArchived: true }).map((row) => [row.id, row.preview]),
  );
  assert.equal(previews["20260501_090000_live01"], "Also check the 数据库 migration status");
  assert.equal(previews["20260501_110000_rew01"], "");
  assert.match(previews["20260501_120000_comp01"], /^Long discussion about postgres vacuum/);
});

test("import of a schema-21 export into a schema-11 file names the columns it could not keep", async () => {
  const exported = await runCli(["--db", copyFixture("hermes-v21.db"), "export", "-"]);
  const into = join(tempDir(), "state.db");
  const run = await runCli(["--db", into, "import", "-"], { stdin: exported.out });
  assert.equal(run.code, 0, run.err);
  assert.match(
    run.err,
    /^hermes-state: import: this file has no column for .*\barchived\b.*messages\.active, messages\.compacted: those values were not kept\n$/,
  );
  const json = await runCli(["--db", join(tempDir(), "state.db"), "--json", "import", "-"], {
    stdin: exported.out,
  });
  assert.ok(JSON.parse(json.out).dropped_columns.includes("rewind_count"));
});

test("a store open while another process upgrades the file sees the new columns at once", async () => {
  // Python Hermes adding `archived` to a file a long-lived reader (the web server, `sync
  // --follow`) keeps open: the reader's next listing hides what the new column hides.
  const path = copyFixture("hermes-v11.db");
  const db = await SessionDB.open({ path });
  try {
    const before = db.listSessionsRich({ limit: 100 }).map((row) => row.id);
    assert.ok(before.length > 1);
    {
      using other = await rawOpen(path);
      other.exec("ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0");
      other.prepare("UPDATE sessions SET archived = 1 WHERE id = ?").run(before[0]);
    }
    const after = db.listSessionsRich({ limit: 100 }).map((row) => row.id);
    assert.deepEqual(after, before.slice(1));
  } finally {
    db.close();
  }
});
