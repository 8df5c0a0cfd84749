/**
 * `export` then `import` gives back every session and message row exactly:
 * integers beyond 2^53, BLOBs and text that is not valid UTF-8 included
 * (compared with raw SQL: storage class and bytes of every value).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDbPath, tempDir } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";
import { parseJsonExact } from "../lib/core/exact_json.ts";
import { jsonLine } from "../lib/render/json_line.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

/** 2^60 + 1: a token count a JS number rounds. */
const HUGE = "1152921504606846977";

/**
 * A copy of the v11 fixture with values JSON and JS numbers do not carry as
 * they are, written with raw SQL into one session: two message ids beyond
 * 2^53 one apart, counts of 2^60 + 1 (in columns, in multimodal content and in
 * `tool_calls`), a BLOB content, text that is not valid UTF-8 (a message's
 * content, a session's title).
 */
async function unusualFile(): Promise<{ path: string; session: string }> {
  const path = v11Copy();
  using db = await rawOpen(path);
  const session = String(db.prepare("SELECT id FROM sessions ORDER BY id LIMIT 1").get()?.id);
  db.exec(`
    INSERT INTO messages (id, session_id, role, content, timestamp, token_count) VALUES
      (9007199254740992, '${session}', 'user', 'at 2^53', 1777000000.5, ${HUGE}),
      (9007199254740993, '${session}', 'assistant', 'at 2^53 + 1', 1777000001.5, -${HUGE}),
      (9007199254740994, '${session}', 'user', X'0102', 1777000002.5, NULL),
      (9007199254740995, '${session}', 'user', CAST(X'61FF62' AS TEXT), 1777000003.5, NULL),
      (9007199254740996, '${session}', 'tool', 'bytes', 1777000004.5, X'00FF');
    INSERT INTO messages (id, session_id, role, content, tool_calls, timestamp) VALUES
      (9007199254740997, '${session}', 'assistant', char(0) || 'json:[{"type": "text", "n": ${HUGE}}]',
       '[{"id": "c1", "n": ${HUGE}}]', 1777000005.5);
    UPDATE sessions SET input_tokens = ${HUGE}, title = CAST(X'746974FE6C65' AS TEXT)
      WHERE id = '${session}';
  `);
  return { path, session };
}

/** Every row of `table` by id (an import writes sessions in export order): each value's storage class and exact form. */
async function exactRows(path: string, table: string): Promise<string[][]> {
  using db = await rawOpen(path, true);
  const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all()
    .map((row) => String(row.name));
  const terms = columns.map((c) =>
    `typeof("${c}") || ':' || CASE typeof("${c}") WHEN 'real' THEN printf('%!.17g', "${c}") ` +
    `ELSE hex(CAST("${c}" AS BLOB)) END`
  );
  return db.prepare(`SELECT ${terms.join(", ")} FROM ${table} ORDER BY id`).all()
    .map((row) => columns.map((c, i) => `${c}=${Object.values(row)[i]}`));
}

/** Exports `path` (JSON Lines) and imports the file into a new database. */
async function roundTrip(path: string): Promise<{ copy: string; text: string }> {
  const out = join(tempDir(), "export.jsonl");
  const exported = await runCli(["--db", path, "export", out]);
  assert.equal(exported.code, 0, exported.err);
  const copy = tempDbPath();
  const imported = await runCli(["--db", copy, "import", out]);
  assert.equal(imported.code, 0, imported.err);
  assert.doesNotMatch(imported.err, /no column|not kept/, "nothing reported as dropped");
  return { copy, text: readFileSync(out, "utf8") };
}

describe("export and import keep every value exactly", () => {
  test("every session and message row comes back with the same storage class and bytes", async () => {
    const { path } = await unusualFile();
    const { copy } = await roundTrip(path);
    for (const table of ["sessions", "messages"]) {
      const before = await exactRows(path, table);
      const after = await exactRows(copy, table);
      assert.equal(after.length, before.length, `${table}: row count`);
      before.forEach((row, i) => assert.deepEqual(after[i], row, `${table} row ${i + 1}`));
    }
  });

  test("import --replace over the same file leaves every row as it was", async () => {
    const { path } = await unusualFile();
    const before = {
      sessions: await exactRows(path, "sessions"),
      messages: await exactRows(path, "messages"),
    };
    const out = join(tempDir(), "export.jsonl");
    assert.equal((await runCli(["--db", path, "export", out])).code, 0);
    const run = await runCli(["--db", path, "import", "--replace", out]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(await exactRows(path, "sessions"), before.sessions);
    assert.deepEqual(await exactRows(path, "messages"), before.messages);
  });

  test("show --json and export --format md print integers beyond 2^53 with every digit", async () => {
    const { path, session } = await unusualFile();
    const shown = await runCli(["--db", path, "show", "--json", session]);
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, new RegExp(`"input_tokens": ${HUGE},`));
    assert.match(shown.out, /"id": 9007199254740993,/);
    const md = await runCli([
      "--db",
      path,
      "export",
      "--format",
      "md",
      "--session-id",
      session,
      "-",
    ]);
    assert.equal(md.code, 0, md.err);
    assert.match(md.out, /\*\*Tokens:\*\* 1,152,921,504,606,846,977 in/);
  });

  test("the library's exportAll and iterateExport give integers beyond 2^53 as bigint", async () => {
    const { path, session } = await unusualFile();
    const db = await SessionDB.open({ path, readonly: true });
    try {
      for (const records of [db.exportAll(), [...db.iterateExport()]]) {
        const record = records.find((r) => r.id === session)!;
        assert.equal(record.input_tokens as unknown, BigInt(HUGE));
        const ids = record.messages.map((m) => m.id as unknown);
        assert.ok(ids.includes(BigInt("9007199254740992")));
        assert.ok(ids.includes(BigInt("9007199254740993")));
      }
    } finally {
      db.close();
    }
  });

  test("integers beyond 2^53 are written with every digit, two ids one apart stay two", async () => {
    const { path, session } = await unusualFile();
    const { text } = await roundTrip(path);
    const line = text.split("\n").find((l) => l.includes(`"id":"${session}"`));
    assert.ok(line);
    assert.match(line, /"id":9007199254740992,/);
    assert.match(line, /"id":9007199254740993,/);
    assert.match(line, new RegExp(`"input_tokens":${HUGE},`));
    assert.match(line, new RegExp(`"token_count":-${HUGE},`));
    assert.ok(line.includes(`"content":[{"type":"text","n":${HUGE}}]`), "inside content");
    assert.ok(line.includes(`"tool_calls":[{"id":"c1","n":${HUGE}}]`), "inside tool_calls");
  });

  test("a BLOB and text that is not valid UTF-8 carry their bytes under hermes_state_bytes", async () => {
    const { path, session } = await unusualFile();
    const { text } = await roundTrip(path);
    const record = parseJsonExact(
      text.split("\n").find((l) => l.includes(`"id":"${session}"`))!,
    ) as {
      title: string;
      hermes_state_bytes: unknown;
      messages: { id: bigint; content: unknown; hermes_state_bytes?: unknown }[];
    };
    assert.equal(record.title, "tit\uFFFDle");
    assert.deepEqual(record.hermes_state_bytes, { title: { text: "dGl0/mxl" } });
    const byId = (id: string) => record.messages.find((m) => m.id === BigInt(id))!;
    assert.equal(byId("9007199254740994").content, null);
    assert.deepEqual(byId("9007199254740994").hermes_state_bytes, { content: { blob: "AQI=" } });
    assert.equal(byId("9007199254740995").content, "a\uFFFDb");
    assert.deepEqual(byId("9007199254740995").hermes_state_bytes, { content: { text: "Yf9i" } });
    assert.deepEqual(byId("9007199254740996").hermes_state_bytes, {
      token_count: { blob: "AP8=" },
    });
  });

  test("Markdown and HTML exports of such values do not fail", async () => {
    const { path, session } = await unusualFile();
    for (const format of ["md", "html"]) {
      const run = await runCli([
        "--db",
        path,
        "export",
        "--session-id",
        session,
        "--format",
        format,
      ]);
      assert.equal(run.code, 0, `${format}: ${run.err}`);
      assert.match(run.out, /at 2\^53 \+ 1/);
      assert.doesNotMatch(run.out, /1,2/, `${format}: no BLOB shown as its numbers joined`);
    }
  });

  test("a bad hermes_state_bytes value is refused with the field named, nothing written", async () => {
    const file = join(tempDir(), "bad.jsonl");
    const record = {
      id: "s-bad",
      source: "cli",
      started_at: 1777000000,
      messages: [{ role: "user", timestamp: 1777000000, hermes_state_bytes: { content: "AQI=" } }],
    };
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, jsonLine(record));
    const copy = tempDbPath();
    const run = await runCli(["--db", copy, "import", file]);
    assert.equal(run.code, 1);
    assert.match(run.err, /messages\[0\]\.hermes_state_bytes\.content/);
    using db = await rawOpen(copy, true);
    assert.equal(db.prepare("SELECT count(*) AS n FROM sessions").get()?.n, 0);
  });
});

describe("a value no export can carry", () => {
  test("a session id that is not valid UTF-8 stops the export with the id named, no file", async () => {
    const path = v11Copy();
    {
      using db = await rawOpen(path);
      db.exec(
        "INSERT INTO sessions (id, source, started_at) VALUES (CAST(X'6964FF' AS TEXT), 'cli', 1)",
      );
    }
    const out = join(tempDir(), "export.jsonl");
    const run = await runCli(["--db", path, "export", out]);
    assert.equal(run.code, 1);
    // One line for the user, as other refusals are (it said "unexpected error" and where to debug).
    assert.match(
      run.err,
      /^hermes-state: Cannot export session "id\uFFFD": its id is not valid UTF-8 text[^\n]*\n$/,
    );
    assert.equal(existsSync(out), false);
  });
});

describe("exact JSON", () => {
  test("parseJsonExact reads integers beyond 2^53 as bigint, the rest as JSON.parse does", () => {
    const value = parseJsonExact(
      `{"a": 9007199254740993, "b": -${HUGE}, "c": 9007199254740991, "d": 1e300, ` +
        `"e": 0.30000000000000004, "f": "12345678901234567890", "g": [1,-9007199254740993]}`,
    );
    assert.deepEqual(value, {
      a: BigInt("9007199254740993"),
      b: -BigInt(HUGE),
      c: 9007199254740991,
      d: 1e300,
      e: 0.30000000000000004,
      f: "12345678901234567890",
      g: [1, -BigInt("9007199254740993")],
    });
  });

  test("jsonLine writes a bigint as its digits", () => {
    assert.equal(jsonLine({ id: BigInt(HUGE), n: 1 }), `{"id":${HUGE},"n":1}\n`);
  });
});
