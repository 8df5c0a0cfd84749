/**
 * Moving sessions between files keeps hostile values exactly: `export` →
 * `import` into a new file → `export` gives the same bytes, `copy a.db
 * b.db` gives a file whose export is a.db's, and the stored text of
 * `tool_calls` and multimodal content (JSON that is bad, has duplicate
 * keys, is nested 10,000 deep, holds integers and floats JavaScript
 * rounds) comes back byte for byte. Run on Deno, Bun and Node (their
 * SQLite drivers differ).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDbPath, tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { MAX_VALUE_DEPTH, nestedDeeperThan } from "../lib/core/exact_json.ts";

/** Text a line reader, a driver or a JSON writer may get wrong. */
const HOSTILE_TEXTS = [
  "nul\u0000mid\u0000",
  "replacement \uFFFD char, lone \uD800 high, lone \uDC00 low",
  "line\u2028separator\u2029paragraph\u0085next",
  "crlf\r\nbare\rcr\n",
  "emoji 👩‍👩‍👧 🚀 \u{1F600}",
  "RTL שלום مرحبا \u202Eevil\u202C",
  "combining e\u0301 a\u0308 \u0338",
];

/** `tool_calls` texts that parsing and writing JSON again would change. */
const RAW_TOOL_CALLS = [
  '{"a":',
  '{"a": 1, "a": 2}',
  "[".repeat(10_000) + "]".repeat(10_000),
  `${"[".repeat(MAX_VALUE_DEPTH)}"]]]"${"]".repeat(MAX_VALUE_DEPTH)}`,
  '{"a": ' + "[".repeat(MAX_VALUE_DEPTH) + "]".repeat(MAX_VALUE_DEPTH) + "}",
  '[{"n": 123456789012345678901234567890, "f": 1.0, "e": 1e400, "s": 1.5e-7}]',
  '[{"a":1,"b":[2,3]}]',
  "[]",
  "{}",
  "null",
  '""',
  "0",
  "false",
  '"text"',
  '[{"id": "c1", "name": "\\ud800"}]',
];

/** Multimodal content texts likewise. */
const RAW_CONTENTS = [
  '\u0000json:[{"type":"text","text":"compact"}]',
  '\u0000json:[{"type": "text", "n": 1.0, "big": 123456789012345678901234567890}]',
  "\u0000json:" + "[".repeat(10_000) + "]".repeat(10_000),
  "\u0000json:{bad",
];

/** 2^53 + 1, which a JavaScript number cannot hold (the API takes a bigint; its types say number). */
const BEYOND = (2n ** 53n + 1n) as unknown as number;

/** A database holding every hostile value, written through the library and, where it cannot, raw SQL. */
async function hostileDb(): Promise<string> {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path, clock: () => 1777000000.25 });
    const ids = ["plain", "id\nnewline", `q"uo'te\\`, "a/b/../c", "..", "x".repeat(10_000)];
    ids.push("sеssion", "session"); // a Cyrillic е and a Latin e
    for (const id of ids) db.createSession(id, "cli", { model: "m\u0000odel" });
    for (const content of HOSTILE_TEXTS) db.appendMessage("plain", { role: "user", content });
    db.appendMessage("plain", {
      role: "user",
      content: HOSTILE_TEXTS.join("|") + "y".repeat(5_000_000),
    });
    db.appendMessage("plain", {
      role: "assistant",
      content: [...HOSTILE_TEXTS],
      toolCalls: [{ id: "c", function: { name: HOSTILE_TEXTS.join(""), arguments: "{}" } }],
      tokenCount: BEYOND,
    });
    db.updateTokenCounts("plain", {
      inputTokens: BEYOND,
      outputTokens: -0,
      estimatedCostUsd: 1e308,
      actualCostUsd: 0.1 + 0.2,
      absolute: true,
    });
    db.updateTokenCounts("session", { estimatedCostUsd: -0, actualCostUsd: 5e-324 });
    db.setSessionTitle("plain", `t"it'le / .. שלום \u0301`);
    db.setSessionTitle("sеssion", "lookalike");
    db.setSessionTitle("session", "lookalikе");
    db.createSession("root", "cli");
    db.createSession("mid", "cli", { parentSessionId: "root" });
    db.createSession("tip", "cli", { parentSessionId: "mid" });
  }
  using raw = await rawOpen(path);
  const insert = raw.prepare(
    "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) " +
      "VALUES ('tip', 'assistant', ?, ?, 1777000001.5)",
  );
  RAW_TOOL_CALLS.forEach((text, i) => insert.run(`tool_calls ${i}`, text));
  for (const content of RAW_CONTENTS) insert.run(content, null);
  raw.exec(`
    UPDATE sessions SET title = 'two' || char(10) || 'lines' || char(0) || 'nul'
      WHERE id = 'id' || char(10) || 'newline';
    UPDATE sessions SET title = printf('%.*c', 10000, 'T') WHERE id = '..';
    UPDATE sessions SET output_tokens = -9223372036854775808, cache_read_tokens = 9223372036854775807
      WHERE id = 'root';
    -- REALs beyond SQLite's INTEGER range, which an export writes as integer digits
    -- (10000000000000000000): read back exactly, they failed the line ("too large to bind").
    UPDATE sessions SET input_tokens = 1e19, reasoning_tokens = -1e20 WHERE id = 'root';
  `);
  return path;
}

/** The JSON Lines export of `path`, as bytes. */
async function exportBytes(path: string): Promise<Buffer> {
  const out = join(tempDir(), "export.jsonl");
  const run = await runCli(["--db", path, "export", out]);
  assert.equal(run.code, 0, run.err);
  return readFileSync(out);
}

/** The first line that differs, shown around the first difference. */
function firstDifference(a: Buffer, b: Buffer): string {
  const [x, y] = [a.toString("utf8").split("\n"), b.toString("utf8").split("\n")];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] === y[i]) continue;
    let at = 0;
    while (x[i]?.[at] === y[i]?.[at]) at++;
    const around = (line = "") => JSON.stringify(line.slice(Math.max(0, at - 60), at + 60));
    return `line ${i + 1}, at ${at}: ${around(x[i])} became ${around(y[i])}`;
  }
  return "the same";
}

/** Each message's raw `tool_calls` and `content`: storage class and bytes. */
async function rawMessageValues(path: string): Promise<string[]> {
  using db = await rawOpen(path, true);
  return db.prepare(
    "SELECT id, typeof(tool_calls) || ':' || hex(CAST(tool_calls AS BLOB)) AS t, " +
      "typeof(content) || ':' || hex(CAST(content AS BLOB)) AS c FROM messages ORDER BY id",
  ).all().map((row) => `${row.id} tool_calls=${row.t} content=${row.c}`);
}

describe("hostile values move between files exactly", () => {
  test("export → import → export gives the same bytes, and the same stored text", async () => {
    const source = await hostileDb();
    const first = await exportBytes(source);
    const file = join(tempDir(), "first.jsonl");
    await import("node:fs").then((fs) => fs.writeFileSync(file, first));
    const target = tempDbPath();
    const imported = await runCli(["--db", target, "import", file]);
    assert.equal(imported.err, "");
    assert.equal(imported.code, 0);
    const deepest = MAX_VALUE_DEPTH + 4; // a record and its messages add a few levels
    assert.ok(!nestedDeeperThan(first.toString("utf8"), deepest), "every runtime reads it");
    const second = await exportBytes(target);
    assert.ok(first.equals(second), firstDifference(first, second));
    assert.deepEqual(await rawMessageValues(target), await rawMessageValues(source));
  });

  test("copy a.db b.db gives a file whose export is a.db's, and the same stored text", async () => {
    const source = await hostileDb();
    const target = join(tempDir(), "b.db");
    const copied = await runCli(["copy", source, target]);
    assert.equal(copied.err, "");
    assert.equal(copied.code, 0);
    const [a, b] = [await exportBytes(source), await exportBytes(target)];
    assert.ok(a.equals(b), firstDifference(a, b));
    assert.deepEqual(await rawMessageValues(target), await rawMessageValues(source));
  });

  test("a value edited in the export (a redaction) is written, not the text carried for it", async () => {
    const source = tempDbPath();
    {
      using db = await SessionDB.open({ path: source });
      db.createSession("s", "cli");
    }
    {
      using raw = await rawOpen(source);
      raw.exec(
        "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES " +
          `('s', 'assistant', char(0) || 'json:[{"text":"secret"}]', '[{"key":"secret"}]', 1)`,
      );
    }
    const text = (await exportBytes(source)).toString("utf8");
    assert.match(text, /hermes_state_bytes/, "compact JSON: its text is carried");
    const file = join(tempDir(), "redacted.jsonl");
    await import("node:fs").then((fs) => fs.writeFileSync(file, text.replaceAll("secret", "gone")));
    const target = tempDbPath();
    assert.equal((await runCli(["--db", target, "import", file])).code, 0);
    const [stored] = await rawMessageValues(target);
    const hex = (value: string) => Buffer.from(value).toString("hex").toUpperCase();
    assert.equal(
      stored.replace(/^\d+ /, ""),
      `tool_calls=text:${hex('[{"key": "gone"}]')} content=text:${
        hex('\u0000json:[{"text": "gone"}]')
      }`,
    );
  });

  test("NaN and Infinity are refused by the API, naming the value", async () => {
    using db = await SessionDB.open({ path: tempDbPath() });
    db.createSession("s", "cli");
    for (const bad of [NaN, Infinity, -Infinity]) {
      const shown = new RegExp(`current value is ${String(bad)}`);
      assert.throws(() => db.updateTokenCounts("s", { estimatedCostUsd: bad }), shown);
      assert.throws(() => db.updateTokenCounts("s", { inputTokens: bad }), shown);
      assert.throws(() => db.appendMessage("s", { role: "user", tokenCount: bad }), shown);
    }
    assert.equal(db.messageCount("s"), 0);
  });
});
