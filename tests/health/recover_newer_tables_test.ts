import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { openClocked, rawOpen, runPython, tempDir } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { ARCHIVED, LIVE, PROMPT, promptsFile, REWOUND, TOOLS } from "../_newer_prompts.ts";
import type { OtherTableReport } from "../../lib/health/recover.ts";

const PAGE = 4096;
const MANY = 40;

/** The prompt of session `p<i>` in {@linkcode manyPromptsFile}: about a quarter of a page each. */
function promptOf(i: number): string {
  return `prompt-${i}: ${"You are Hermes. ".repeat(60)}`;
}

/** {@linkcode promptsFile} with {@linkcode MANY} more sessions, each with a prompt of its own. */
async function manyPromptsFile(): Promise<string> {
  const path = await promptsFile();
  using raw = await rawOpen(path);
  for (let i = 0; i < MANY; i++) {
    raw.prepare("INSERT INTO system_prompts (hash, prompt) VALUES (?, ?)").run(
      `h${i}`,
      promptOf(i),
    );
    raw.prepare(
      "INSERT INTO sessions (id, source, started_at, system_prompt_hash) VALUES (?, 'cli', ?, ?)",
    ).run(`p${i}`, 1_777_000_000 + i, `h${i}`);
  }
  return path;
}

/** The leaf pages of `system_prompts`, from Python's sqlite3 `dbstat`. */
function promptLeaves(path: string): number[] {
  const stdout = runPython(
    [
      "import json, sqlite3, sys",
      "c = sqlite3.connect(sys.argv[1])",
      "rows = c.execute(\"SELECT pageno FROM dbstat WHERE name = 'system_prompts' AND pagetype = 'leaf'\").fetchall()",
      "print(json.dumps([r[0] for r in rows]))",
    ],
    path,
  );
  return JSON.parse(stdout) as number[];
}

/** The report of `table`. */
function reportOf(
  tables: readonly OtherTableReport[],
  table: string,
): OtherTableReport | undefined {
  return tables.find((report) => report.table === table);
}

test("recoverDatabase() keeps a newer Hermes's system prompts, kept apart in system_prompts, and its other tables", async () => {
  const source = await promptsFile();
  const dest = join(tempDir(), "recovered.db");
  const result = await recoverDatabase(source, dest);
  assert.deepEqual([result.sessions, result.clearedPrompts], [4, 0]);
  assert.deepEqual(result.lost, []);
  assert.deepEqual(result.otherTables, [
    { table: "session_model_usage", rows: 0, leftOut: 0, whole: true },
    { table: "gateway_routing", rows: 0, leftOut: 0, whole: true },
    { table: "compression_locks", rows: 0, leftOut: 0, whole: true },
    { table: "async_delegations", rows: 0, leftOut: 0, whole: true },
    { table: "system_prompts", rows: 2, leftOut: 0, whole: true },
  ]);
  using db = await SessionDB.open({ path: dest, readonly: true });
  assert.equal(db.getSession(LIVE)?.system_prompt, PROMPT);
  assert.equal(db.getSession(LIVE)?.tool_names, TOOLS);
  assert.equal(db.getSession(ARCHIVED)?.system_prompt, PROMPT);
  assert.equal(db.getSession(REWOUND)?.system_prompt, "inline prompt");
  using raw = await rawOpen(dest, true);
  assert.deepEqual(raw.prepare("PRAGMA foreign_key_check").all(), []);
  assert.equal(raw.prepare("SELECT version FROM schema_version").get()?.version, 30);
  using original = await rawOpen(source, true);
  const schemaOf = (db: typeof raw, names: string) =>
    db.prepare(
      `SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN (${names}) ORDER BY name`,
    ).all();
  const newer = "'system_prompts', 'session_model_usage', 'async_delegations', 'gateway_routing'";
  assert.deepEqual(schemaOf(raw, newer), schemaOf(original, newer), "as the source declares them");
});

test("recoverDatabase() keeps a newer Hermes's usage rows exactly, leaving out those of a lost session", async (t) => {
  const source = await promptsFile();
  {
    const { db } = await openClocked(t, 1_800_000_000, source);
    db.updateTokenCounts(LIVE, { inputTokens: 100, estimatedCostUsd: 0.25, apiCallCount: 1 });
    db.updateTokenCounts(ARCHIVED, { inputTokens: 7, apiCallCount: 1 });
    db.close();
  }
  {
    using raw = await rawOpen(source);
    raw.exec(`UPDATE session_model_usage SET cache_read_tokens = 9007199254740993
      WHERE session_id = '${LIVE}'`);
    // The archived session is lost; its usage row stays behind in the source.
    raw.exec("PRAGMA foreign_keys = OFF");
    raw.exec(`DELETE FROM messages WHERE session_id = '${ARCHIVED}'`);
    raw.exec(`DELETE FROM sessions WHERE id = '${ARCHIVED}'`);
  }
  const dest = join(tempDir(), "recovered.db");
  const result = await recoverDatabase(source, dest);
  assert.deepEqual(reportOf(result.otherTables, "session_model_usage"), {
    table: "session_model_usage",
    rows: 1,
    leftOut: 1,
    whole: true,
  });
  using raw = await rawOpen(dest, true);
  const usage = raw.prepare(
    `SELECT session_id, input_tokens, CAST(cache_read_tokens AS TEXT) AS cache_read,
       estimated_cost_usd, typeof(estimated_cost_usd) AS cost_type, first_seen
     FROM session_model_usage`,
  ).all();
  assert.deepEqual(usage, [{
    session_id: LIVE,
    input_tokens: 100,
    cache_read: "9007199254740993",
    estimated_cost_usd: 0.25,
    cost_type: "real",
    first_seen: 1_800_000_000,
  }]);
  assert.deepEqual(raw.prepare("PRAGMA foreign_key_check").all(), []);
  const cli = await runCli(["recover", source, join(tempDir(), "cli.db")]);
  assert.equal(cli.code, 1);
  assert.match(
    cli.out,
    /Rows left out: 1 row of session_model_usage: each names a row the new file lacks/,
  );
});

test("recoverDatabase() reads the system prompts of the intact pages and clears the links to those of a damaged one", async () => {
  const source = await manyPromptsFile();
  const leaves = promptLeaves(source);
  assert.ok(leaves.length >= 4, `the prompts span ${leaves.length} leaf pages`);
  const damaged = leaves[1];
  const bytes = readFileSync(source).subarray((damaged - 1) * PAGE, damaged * PAGE);
  const onDamaged = new Set(
    [...new TextDecoder("latin1").decode(bytes).matchAll(/prompt-(\d+):/g)].map((m) =>
      Number(m[1])
    ),
  );
  assert.ok(onDamaged.size > 0 && onDamaged.size < MANY);
  const fd = openSync(source, "r+");
  try {
    writeSync(fd, new Uint8Array(PAGE).fill(0x5a), 0, PAGE, (damaged - 1) * PAGE);
  } finally {
    closeSync(fd);
  }

  const dest = join(tempDir(), "recovered.db");
  const result = await recoverDatabase(source, dest);
  assert.equal(result.clearedPrompts, onDamaged.size);
  assert.deepEqual(reportOf(result.otherTables, "system_prompts"), {
    table: "system_prompts",
    rows: 2 + MANY - onDamaged.size,
    leftOut: 0,
    whole: false,
  });
  using db = await SessionDB.open({ path: dest, readonly: true });
  for (let i = 0; i < MANY; i++) {
    const session = db.getSession(`p${i}`);
    assert.ok(session !== undefined, `session p${i} is kept`);
    assert.equal(session.system_prompt, onDamaged.has(i) ? null : promptOf(i), `p${i}`);
    assert.equal(session.system_prompt_hash, onDamaged.has(i) ? null : `h${i}`, `p${i}`);
  }
  assert.equal(db.getSession(LIVE)?.system_prompt, PROMPT, "the first leaf's prompts are kept");
  using raw = await rawOpen(dest, true);
  assert.deepEqual(raw.prepare("PRAGMA foreign_key_check").all(), []);

  const cli = await runCli(["recover", source, join(tempDir(), "cli.db")]);
  assert.equal(cli.code, 1, "a lost prompt is a loss");
  assert.match(
    cli.out,
    new RegExp(
      `System prompts lost: ${onDamaged.size} sessions named a prompt that could not be read`,
    ),
  );
  assert.match(cli.out, /Some rows may be lost: system_prompts \(a table of a newer Hermes\)/);
  assert.doesNotMatch(cli.out, /Nothing was lost/);
  const json = await runCli(["recover", "--json", source, join(tempDir(), "json.db")]);
  const report = JSON.parse(json.out);
  assert.equal(report.cleared_prompts, onDamaged.size);
  assert.deepEqual(report.other_tables.at(-1), {
    table: "system_prompts",
    rows: 2 + MANY - onDamaged.size,
    left_out: 0,
    whole: false,
  });
});

test("recoverDatabase() of a schema-11 file makes no other table", async () => {
  const dest = join(tempDir(), "recovered.db");
  const source = join(tempDir(), "state.db");
  {
    using db = await SessionDB.open({ path: source });
    db.createSession("s1", "cli", { systemPrompt: "inline" });
  }
  const result = await recoverDatabase(source, dest);
  assert.deepEqual([result.otherTables, result.clearedPrompts], [[], 0]);
  using raw = await rawOpen(dest, true);
  assert.equal(
    raw.prepare("SELECT name FROM sqlite_master WHERE name = 'system_prompts'").get(),
    undefined,
  );
});

test("recoverDatabase() leaves out and counts a row of a newer table that breaks its constraints, and keeps those of a key it cannot check", async () => {
  const source = await promptsFile();
  {
    using raw = await rawOpen(source);
    raw.exec(`CREATE TABLE session_notes (
      id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, stars INTEGER CHECK (stars BETWEEN 1 AND 5));
      INSERT INTO session_notes (session_id, stars) VALUES ('${LIVE}', 4);
      PRAGMA ignore_check_constraints = ON;
      INSERT INTO session_notes (session_id, stars) VALUES ('${LIVE}', 9);
      PRAGMA ignore_check_constraints = OFF;
      PRAGMA foreign_keys = OFF;
      CREATE TABLE session_links (id INTEGER PRIMARY KEY, title TEXT REFERENCES sessions(title));
      INSERT INTO session_links (title) VALUES ('a title');`);
  }
  const dest = join(tempDir(), "recovered.db");
  const result = await recoverDatabase(source, dest);
  assert.deepEqual(reportOf(result.otherTables, "session_notes"), {
    table: "session_notes",
    rows: 1,
    leftOut: 1,
    whole: true,
  });
  // A key SQLite cannot check ("foreign key mismatch": sessions.title is no key) keeps its rows.
  assert.deepEqual(reportOf(result.otherTables, "session_links"), {
    table: "session_links",
    rows: 1,
    leftOut: 0,
    whole: true,
  });
  using raw = await rawOpen(dest, true);
  assert.deepEqual(raw.prepare("SELECT id, stars FROM session_notes").all(), [{ id: 1, stars: 4 }]);
});
