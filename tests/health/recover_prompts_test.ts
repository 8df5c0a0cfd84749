import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { rawOpen, runPython, tempDir } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { ARCHIVED, LIVE, PROMPT, promptsFile, REWOUND, TOOLS } from "../_newer_prompts.ts";

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

test("recoverDatabase() keeps a newer Hermes's system prompts, kept apart in system_prompts", async () => {
  const source = await promptsFile();
  const dest = join(tempDir(), "recovered.db");
  const result = await recoverDatabase(source, dest);
  assert.deepEqual([result.sessions, result.systemPrompts, result.clearedPrompts], [4, 2, 0]);
  assert.deepEqual(result.lost, []);
  using db = await SessionDB.open({ path: dest, readonly: true });
  assert.equal(db.getSession(LIVE)?.system_prompt, PROMPT);
  assert.equal(db.getSession(LIVE)?.tool_names, TOOLS);
  assert.equal(db.getSession(ARCHIVED)?.system_prompt, PROMPT);
  assert.equal(db.getSession(REWOUND)?.system_prompt, "inline prompt");
  using raw = await rawOpen(dest, true);
  assert.deepEqual(raw.prepare("PRAGMA foreign_key_check").all(), []);
  assert.equal(raw.prepare("SELECT version FROM schema_version").get()?.version, 30);
  assert.match(
    String(raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'system_prompts'").get()?.sql),
    /hash TEXT PRIMARY KEY, prompt TEXT NOT NULL/,
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
  assert.equal(result.systemPrompts, 2 + MANY - onDamaged.size);
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
  assert.doesNotMatch(cli.out, /Nothing was lost/);
  const json = await runCli(["recover", "--json", source, join(tempDir(), "json.db")]);
  const report = JSON.parse(json.out);
  assert.equal(report.cleared_prompts, onDamaged.size);
  assert.equal(report.system_prompts, 2 + MANY - onDamaged.size);
});

test("recoverDatabase() of a schema-11 file makes no system_prompts table", async () => {
  const dest = join(tempDir(), "recovered.db");
  const source = join(tempDir(), "state.db");
  {
    using db = await SessionDB.open({ path: source });
    db.createSession("s1", "cli", { systemPrompt: "inline" });
  }
  const result = await recoverDatabase(source, dest);
  assert.deepEqual([result.systemPrompts, result.clearedPrompts], [0, 0]);
  using raw = await rawOpen(dest, true);
  assert.equal(
    raw.prepare("SELECT name FROM sqlite_master WHERE name = 'system_prompts'").get(),
    undefined,
  );
});
