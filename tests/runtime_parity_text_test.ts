/**
 * The read commands give the same text on Deno, Bun and Node for values a
 * runtime may read differently: U+0000 inside any text column or a
 * session's id (Deno 2.9's `node:sqlite` cuts a returned string there; the
 * driver reads such text as bytes), bytes that are not valid UTF-8 (a lone
 * surrogate as Python's CESU bytes, a stray 0xFF, a cut sequence), each
 * read as U+FFFD per bad sequence, and text from SQL functions (the list's
 * SUBSTR preview, FTS5's snippet, aggregates). Each expectation is written
 * out, so a runtime that reads differently fails here.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";

/** A copy of the v11 fixture with sessions whose text holds NUL and bad UTF-8. */
async function hostileDb(): Promise<string> {
  const path = v11Copy();
  using raw = await rawOpen(path);
  const nul = (a: string, b: string) => `'${a}' || char(0) || '${b}'`;
  raw.exec(`
    INSERT INTO sessions (id, source, model, system_prompt, started_at, message_count, title,
                          input_tokens, output_tokens, billing_provider)
      VALUES ('par_nul', 'cli', ${nul("gpt", "-x")}, ${nul("sys", "prompt")}, 1777400000, 3,
              ${nul("Nul", "title")}, 900000000, 1, ${nul("open", "router")});
    INSERT INTO messages (session_id, role, content, timestamp, reasoning)
      VALUES ('par_nul', 'user', ${nul("hello", "world parityalpha")}, 1777400001,
              ${nul("think", "deep")});
    INSERT INTO messages (session_id, role, content, timestamp, tool_name)
      VALUES ('par_nul', 'tool', ${nul("tool", "out parityalpha")}, 1777400002,
              ${nul("read", "file")});
    INSERT INTO sessions (id, source, started_at, message_count, title)
      VALUES (${nul("par", "nulid")}, 'cli', 1777400003, 1, 'NUL id session');
    INSERT INTO messages (session_id, role, content, timestamp)
      VALUES (${nul("par", "nulid")}, 'user', 'in the nul-id session paritybeta', 1777400004);
    INSERT INTO sessions (id, source, model, started_at, message_count, title)
      VALUES ('par_bad', 'cli', CAST(x'6d6f64656cff' AS TEXT), 1777400005, 2,
              CAST(x'426164c0af7469746c65' AS TEXT));
    INSERT INTO messages (session_id, role, content, timestamp)
      VALUES ('par_bad', 'user', CAST(x'6c6f6e65eda0802070617269747967616d6d61' AS TEXT),
              1777400006);
    INSERT INTO messages (session_id, role, content, timestamp)
      VALUES ('par_bad', 'assistant', CAST(x'6e756c00ff2070617269747967616d6d6120e282' AS TEXT),
              1777400007);
    INSERT OR REPLACE INTO state_meta (key, value) VALUES (${nul("par", "key")}, 'v');
  `);
  return path;
}

/** Runs a read command with `--json` and parses what it printed. */
async function json(path: string, ...args: string[]): Promise<unknown> {
  const run = await runCli(["--db", path, ...args, "--json"]);
  assert.equal(run.err, "");
  assert.equal(run.code, 0);
  return JSON.parse(run.out);
}

type Row = Record<string, unknown>;

describe("read commands give every runtime's text the same", () => {
  test("list: titles, models and previews around NUL and bad bytes", async () => {
    const path = await hostileDb();
    const rows = await json(path, "list", "--all", "--limit", "100") as Row[];
    const of = (id: string) => rows.find((row) => row.id === id);
    assert.deepEqual(
      [of("par_nul")?.title, of("par_nul")?.model, of("par_nul")?.preview],
      ["Nul\u0000title", "gpt\u0000-x", "hello"], // SQLite's SUBSTR stops at the NUL
    );
    assert.equal(of("par\u0000nulid")?.title, "NUL id session");
    assert.deepEqual(
      [of("par_bad")?.title, of("par_bad")?.model, of("par_bad")?.preview],
      ["Bad\uFFFD\uFFFDtitle", "model\uFFFD", "lone\uFFFD\uFFFD\uFFFD paritygamma"],
    );
  });

  test("show: every text column whole", async () => {
    const path = await hostileDb();
    const shown = await json(path, "show", "par_nul") as Row & { messages: Row[] };
    assert.deepEqual(
      [shown.title, shown.model, shown.system_prompt, shown.billing_provider],
      ["Nul\u0000title", "gpt\u0000-x", "sys\u0000prompt", "open\u0000router"],
    );
    assert.deepEqual(
      shown.messages.map((m) => [m.content, m.reasoning, m.tool_name]),
      [
        ["hello\u0000world parityalpha", "think\u0000deep", null],
        ["tool\u0000out parityalpha", null, "read\u0000file"],
      ],
    );
    const bad = await json(path, "show", "par_bad") as Row & { messages: Row[] };
    assert.deepEqual(
      bad.messages.map((m) => m.content),
      ["lone\uFFFD\uFFFD\uFFFD paritygamma", "nul\u0000\uFFFD paritygamma \uFFFD"],
    );
  });

  test("search: FTS5 snippets and session ids around NUL and bad bytes", async () => {
    const path = await hostileDb();
    const hits = await json(path, "search", "paritybeta") as Row[];
    assert.deepEqual(hits.map((hit) => hit.session_id), ["par\u0000nulid"]);
    const alpha = await json(path, "search", "parityalpha") as Row[];
    assert.deepEqual(
      alpha.map((hit) => [hit.session_id, hit.tool_name]).sort(),
      [["par_nul", "read\u0000file"], ["par_nul", null]].sort(),
    );
    for (const hit of alpha) assert.match(String(hit.snippet), />>>parityalpha<<</);
    const gamma = await json(path, "search", "paritygamma") as Row[];
    assert.equal(gamma.length, 2);
    for (const hit of gamma) assert.match(String(hit.snippet), />>>paritygamma<<</);
  });

  test("stats, info and lineage: titles and meta keys whole", async () => {
    const path = await hostileDb();
    const stats = await json(path, "stats", "--top", "1") as { top_sessions: Row[] };
    assert.deepEqual(
      stats.top_sessions.map((row) => [row.id, row.title, row.model]),
      [["par_nul", "Nul\u0000title", "gpt\u0000-x"]],
    );
    const info = await json(path, "info", "--no-check") as { meta_keys: string[] };
    assert.ok(info.meta_keys.includes("par\u0000key"), JSON.stringify(info.meta_keys));
    const lineage = await json(path, "lineage", "par_nul") as { tree: Row };
    assert.equal(lineage.tree.title, "Nul\u0000title");
  });
});
