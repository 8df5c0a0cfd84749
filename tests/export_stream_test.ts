/**
 * An export written in pieces (`lib/core/export_pieces.ts`): each session's
 * row, then its messages a chunk at a time, so that a session of any size
 * can be exported with memory bounded by a chunk. The pieces, joined, are
 * byte for byte what the whole records give (`jsonLine(exactRecord(…))`,
 * `renderMarkdown`, `renderSessionHtml`), for the Python fixtures and for
 * hostile values (integers beyond 2^53, BLOBs, text that is not valid
 * UTF-8, U+0000, bad and deep JSON, odd timestamps), on SQLite and on
 * PostgreSQL, for every chunk size; and `export` and the web's download
 * write no string larger than a chunk.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { copyFixture, rawOpen, tempDbPath, tempDir } from "./_helpers.ts";
import { recordingIo } from "./_cli_io.ts";
import { copiesOf } from "./_built_once.ts";
import { REPO, runtimeBinary, workerEnv, workersSpanRuntimes } from "./reliability/_runtimes.ts";
import { openPgStore, PG_SKIP } from "./store/_pg.ts";
import { main } from "../lib/cli/main.ts";
import { openStore } from "../lib/open_store.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import type { SessionStore } from "../lib/core/session_store.ts";
import type { SessionExport } from "../lib/core/types.ts";
import { type ExportSelection, readExportPieces } from "../lib/core/export_pieces.ts";
import { exactRecord } from "../lib/core/exact_record.ts";
import { jsonLine } from "../lib/render/json_line.ts";
import { renderMarkdown } from "../lib/render/markdown.ts";
import {
  htmlDocumentEnd,
  htmlDocumentStart,
  renderHtmlDocument,
  renderSessionHtml,
} from "../lib/web/html_transcript.ts";
import { type ExportFormat, exportStoreStream, exportTexts } from "../lib/web/export_stream.ts";

const FORMATS: readonly ExportFormat[] = ["jsonl", "md", "html"];

/** 2^60 + 1: a count a JS number rounds. */
const HUGE = "1152921504606846977";

/** Text a line reader, a driver or a JSON writer may get wrong. */
const HOSTILE_TEXTS = [
  "nul\u0000mid\u0000",
  "replacement \uFFFD char, lone \uD800 high, lone \uDC00 low",
  "line\u2028separator\u2029paragraph\u0085next",
  "crlf\r\nbare\rcr\n",
  'quote " backslash \\ "messages":[] ,"messages":[]}',
  "RTL שלום \u202Eevil\u202C emoji 👩‍👩‍👧",
];

/** `tool_calls` and multimodal content texts an export carries as stored. */
const RAW_TOOL_CALLS = [
  '{"a":',
  '{"a": 1, "a": 2}',
  "[".repeat(5_000) + "]".repeat(5_000),
  `[{"n": ${HUGE}, "f": 1.0, "e": 1e400}]`,
  '[{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]',
  "[]",
  "null",
];
const RAW_CONTENTS = [
  `\u0000json:[{"type": "text", "text": "x", "n": ${HUGE}}]`,
  '\u0000json:[{"type":"text","text":"compact"}]',
  "\u0000json:{bad",
];

/**
 * A file of hostile sessions: values of every kind (above), message ids
 * beyond 2^53 one apart, BLOBs, text that is not valid UTF-8, timestamps
 * that are text, a BLOB, equal or out of id order, a session without
 * messages, a title that is not valid UTF-8, counts of 2^60 + 1.
 */
async function hostileDb(): Promise<string> {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path, clock: () => 1777000000.25 });
    for (const id of ["plain", "id\nnewline", `q"uo'te\\`, "empty", "odd"]) {
      db.createSession(id, "cli", { model: "m\u0000odel" });
    }
    db.createSession("child", "tool", { parentSessionId: "plain" });
    for (const content of HOSTILE_TEXTS) db.appendMessage("plain", { role: "user", content });
    db.appendMessage("plain", {
      role: "assistant",
      content: [...HOSTILE_TEXTS],
      toolCalls: [{ id: "c", function: { name: HOSTILE_TEXTS.join(""), arguments: "{}" } }],
    });
    db.appendMessage("plain", { role: "tool", toolCallId: "c", content: "result ".repeat(500) });
    for (let i = 0; i < 9; i++) db.appendMessage("child", { role: "user", content: `m${i}` });
    db.setSessionTitle("plain", `t"it'le / שלום \u0301`);
  }
  using raw = await rawOpen(path);
  const insert = raw.prepare(
    "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) " +
      "VALUES ('id' || char(10) || 'newline', 'assistant', ?, ?, 1777000001.5)",
  );
  RAW_TOOL_CALLS.forEach((text, i) => insert.run(`tool_calls ${i}`, text));
  for (const content of RAW_CONTENTS) insert.run(content, null);
  raw.exec(`
    INSERT INTO messages (id, session_id, role, content, timestamp, token_count) VALUES
      (9007199254740992, 'q"uo''te\\', 'user', 'at 2^53', 1777000000.5, ${HUGE}),
      (9007199254740993, 'q"uo''te\\', 'assistant', 'at 2^53 + 1', 1777000001.5, -${HUGE}),
      (9007199254740994, 'q"uo''te\\', 'user', X'0102', 1777000002.5, NULL),
      (9007199254740995, 'q"uo''te\\', 'user', CAST(X'61FF62' AS TEXT), 1777000003.5, NULL),
      (9007199254740996, 'q"uo''te\\', 'tool', 'bytes', 1777000004.5, 7);
    INSERT INTO messages (id, session_id, role, content, timestamp, token_count) VALUES
      (56, 'odd', 'tool', 'a BLOB count', 7, X'00FF');
    INSERT INTO messages (id, session_id, role, content, timestamp) VALUES
      (51, 'odd', 'user', 'text time', 'yesterday'),
      (52, 'odd', 'user', 'same time b', 5.5),
      (49, 'odd', 'user', 'same time a', 5.5),
      (53, 'odd', 'user', 'blob time', X'01'),
      (54, 'odd', 'user', 'negative', -1e300),
      (55, 'odd', 'user', 'integer time', 3);
    UPDATE sessions SET input_tokens = ${HUGE}, title = CAST(X'746974FE6C65' AS TEXT)
      WHERE id = 'q"uo''te\\';
    UPDATE sessions SET output_tokens = -9223372036854775808 WHERE id = 'odd';
  `);
  return path;
}

/** The text of an export of whole records: what `export` wrote before it wrote in pieces. */
async function wholeText(
  store: SessionStore,
  selection: ExportSelection,
  format: ExportFormat,
): Promise<string> {
  const records: AsyncIterable<SessionExport> | SessionExport[] = "id" in selection
    ? [await store.exportSession(selection.id)].filter((r) => r !== undefined)
    : store.iterateExport(selection.filter);
  let text = format === "html" ? htmlDocumentStart("t") : "";
  let count = 0;
  for await (const record of records) {
    text += format === "html"
      ? renderSessionHtml(record)
      : format === "md"
      ? `${count > 0 ? "\n---\n\n" : ""}${renderMarkdown(record)}`
      : jsonLine(exactRecord(record));
    count++;
  }
  return format === "html" ? text + htmlDocumentEnd() : text;
}

/** The text of an export in pieces of `chunk` messages, and its longest piece. */
async function piecesText(
  store: SessionStore,
  selection: ExportSelection,
  format: ExportFormat,
  chunk: number,
  holdSnapshot: boolean,
): Promise<string> {
  const pieces = readExportPieces(store, selection, { chunk, holdSnapshot });
  let text = "";
  for await (const piece of exportTexts(pieces, format, "t")) text += piece.text;
  return text;
}

/** Where two texts first differ, for a readable failure. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at ${i} of ${a.length}/${b.length}: ${JSON.stringify(a.slice(i - 40, i + 40))} vs ${
    JSON.stringify(b.slice(i - 40, i + 40))
  }`;
}

/** Every session id of `store`, and the whole export, for the selections to compare. */
async function selections(store: SessionStore): Promise<ExportSelection[]> {
  const ids: string[] = [];
  for await (const record of store.iterateExport()) ids.push(record.id);
  return [{ filter: {} }, { filter: { source: "cli" } }, ...ids.map((id) => ({ id }))];
}

/** Checks that every selection, format and chunk size gives the whole records' text. */
async function assertSameText(store: SessionStore, chunks: readonly number[]): Promise<void> {
  for (const selection of await selections(store)) {
    for (const format of FORMATS) {
      const whole = await wholeText(store, selection, format);
      for (const chunk of chunks) {
        for (const hold of [true, false]) {
          const text = await piecesText(store, selection, format, chunk, hold);
          if (text !== whole) {
            assert.fail(
              `${JSON.stringify(selection)} ${format} chunk ${chunk}: ${
                firstDifference(text, whole)
              }`,
            );
          }
        }
      }
    }
  }
}

/** The fixtures, copied (never opened in place). */
const FIXTURES = ["hermes-v6.db", "hermes-v10-external.db", "hermes-v11.db", "hermes-v21.db"];

describe("an export in pieces is the whole records' text, byte for byte", () => {
  for (const name of FIXTURES) {
    test(`the fixture ${name}, every chunk size`, async () => {
      await using store = await openStore(copyFixture(name), { readonly: true });
      await assertSameText(store, [1, 3, 100]);
    });
  }

  test("hostile values, every chunk size", async () => {
    await using store = await openStore(await hostileDb(), { readonly: true });
    await assertSameText(store, [1, 2, 3, 7, 100]);
  });

  test("export FILE writes, for every format, the bytes the whole records give", async () => {
    const path = await hostileDb();
    const dir = tempDir();
    for (const format of FORMATS) {
      const output = join(dir, `out.${format}`);
      const io = recordingIo();
      assert.equal(await main(["--db", path, "export", "--format", format, output], io), 0);
      const written = readFileSync(output);
      await using store = await openStore(path, { readonly: true });
      const whole = (await wholeText(store, { filter: {} }, format)).replace(
        "<title>t</title>",
        "<title>hermes-state export</title>",
      );
      assert.ok(written.equals(Buffer.from(whole)), `${format}: the same bytes`);
      assert.match(io.out, /Exported 6 sessions to /);
    }
  });
});

describe("an export in pieces on PostgreSQL is the whole records' text", { skip: PG_SKIP }, () => {
  test("hostile values and the v11 fixture, every chunk size", async () => {
    await using server = await openPgStore();
    for (const path of [await hostileDb(), copyFixture("hermes-v11.db")]) {
      using source = await SessionDB.open({ path, readonly: true });
      for (const record of source.iterateExport()) {
        // Times and a count PostgreSQL has no place for (text, BLOBs) stay in the file.
        if (record.id !== "odd") await server.importSession(record);
      }
    }
    await assertSameText(server, [1, 3, 100]);
  });
});

describe("a session read in pieces is one snapshot when held", () => {
  /** The messages of session `plain` read a chunk of 1 at a time, another process writing between. */
  async function readWhileWritten(holdSnapshot: boolean): Promise<string[]> {
    const path = await hostileDb();
    await using store = await openStore(path, { readonly: true });
    using writer = await rawOpen(path);
    const contents: string[] = [];
    let written = false;
    for await (
      const piece of readExportPieces(store, { id: "plain" }, { chunk: 1, holdSnapshot })
    ) {
      if ("messages" in piece) contents.push(String(piece.messages[0].content).slice(0, 8));
      if (!written) {
        writer.exec(`DELETE FROM messages WHERE session_id = 'plain' AND id > (
          SELECT MIN(id) FROM messages WHERE session_id = 'plain')`);
        written = true;
      }
    }
    return contents;
  }

  test("held: messages deleted by another process meanwhile still come, as one snapshot", async () => {
    const contents = await readWhileWritten(true);
    assert.equal(contents.length, HOSTILE_TEXTS.length + 2);
  });

  test("held: a checkpoint meanwhile, after which a read-only store opens the file again, ends nothing", async () => {
    // The chunks after the reopen ran on the new connection, without the savepoint: the export
    // failed with "no such savepoint: hermes_export_pieces" next to a live gateway.
    const path = await hostileDb();
    using writer = await rawOpen(path);
    writer.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
    writer.exec("UPDATE sessions SET title = 'before the export' WHERE id = 'plain'");
    await using store = await openStore(path, { readonly: true });
    const contents: string[] = [];
    let written = false;
    for await (
      const piece of readExportPieces(store, { id: "plain" }, { chunk: 1, holdSnapshot: true })
    ) {
      if ("messages" in piece) contents.push(String(piece.messages[0].content));
      if (written) continue;
      written = true;
      writer.exec("DELETE FROM messages WHERE session_id = 'plain'");
      // Copies the frames written before the export into the file, which moves its times.
      writer.exec("PRAGMA wal_checkpoint(PASSIVE)");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(contents.length, HOSTILE_TEXTS.length + 2, "one snapshot, the deleted ones too");
  });

  test("not held: the messages deleted meanwhile are left out (each chunk read as it is then)", async () => {
    const contents = await readWhileWritten(false);
    assert.equal(contents.length, 1);
  });
});

/** A session `big` of 300 messages of 20,000 characters each (a 6 MB line), at `path`. */
async function buildBigDb(path: string): Promise<void> {
  {
    using db = await SessionDB.open({ path });
    db.createSession("big", "cli");
  }
  using raw = await rawOpen(path);
  raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
    INSERT INTO messages (session_id, role, content, timestamp)
    SELECT 'big', 'tool', printf('%d', i) || printf('%.*c', 20000, 'x'), 1000 + i FROM n`);
}

/** A copy of one {@linkcode buildBigDb} (indexing its text takes a while): one per test. */
const bigDb = copiesOf(buildBigDb);

/** The longest write a chunk of 100 such messages may take (their text and some JSON). */
const CHUNK_CHARS = 100 * 20_400;

describe("a large session is written a chunk at a time", () => {
  for (const format of ["jsonl", "md"] as const) {
    test(`export - (${format}) writes no string larger than a chunk of messages`, async () => {
      const path = await bigDb();
      const io = recordingIo();
      let longest = 0;
      const record = io.stdout;
      io.stdout = (text) => {
        longest = Math.max(longest, text.length);
        record(text);
      };
      assert.equal(await main(["--db", path, "export", "--format", format, "-"], io), 0);
      await using store = await openStore(path, { readonly: true });
      const whole = await wholeText(store, { filter: {} }, format);
      assert.ok(whole.length > 2.5 * CHUNK_CHARS, `${whole.length} characters`);
      assert.ok(io.out === whole, "the same text as the whole record");
      assert.ok(longest <= CHUNK_CHARS, `the longest write is ${longest} characters`);
    });
  }

  test("the web's download of a store sends no piece larger than a chunk of messages", async () => {
    const path = await bigDb();
    await using store = await openStore(path, { readonly: true });
    for (const selection of [{ id: "big" }, { filter: {} }]) {
      const stream = await exportStoreStream(store, selection, "jsonl", "t");
      assert.ok(stream !== undefined);
      const decoder = new TextDecoder();
      let text = "";
      let longest = 0;
      for await (const bytes of stream) {
        longest = Math.max(longest, bytes.length);
        text += decoder.decode(bytes, { stream: true });
      }
      assert.ok(text === await wholeText(store, selection, "jsonl"), "the same text");
      assert.ok(longest <= CHUNK_CHARS, `the longest piece is ${longest} bytes`);
    }
    assert.equal(await exportStoreStream(store, { id: "nope" }, "jsonl", "t"), undefined);
    // One session's page is titled after it, as the download of its whole record was.
    const page = await exportStoreStream(store, { id: "big" }, "html", (s) => s.title || s.id);
    assert.ok(page !== undefined);
    const html = await new Response(page).text();
    assert.ok(html === renderHtmlDocument((await store.exportSession("big"))!), "the same page");
  });
});

/**
 * A session `huge` of 2,000 tool results of 100,000 characters: a 200 MB
 * line (written without the full-text triggers, which would take a minute).
 */
async function hugeDb(): Promise<string> {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path });
    db.createSession("huge", "cli");
  }
  using raw = await rawOpen(path);
  const triggers = raw.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages'",
  ).all();
  for (const { name } of triggers) raw.exec(`DROP TRIGGER "${name}"`);
  raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
    INSERT INTO messages (session_id, role, content, timestamp)
    SELECT 'huge', 'tool', printf('%.*c', 100000, 'x'), 1000 + i FROM n`);
  return path;
}

test("export of a 200 MB session runs in a 96 MB heap (it ran out of memory whole)", {
  skip: workersSpanRuntimes() &&
    "its export runs in a child on Deno whatever runs the test: the run under Deno runs it",
}, async () => {
  const deno = runtimeBinary("deno");
  assert.ok(deno !== undefined, "the test runs its child under Deno");
  const path = await hugeDb();
  const output = join(tempDir(), "huge.jsonl");
  const run = spawnSync(deno, [
    "run",
    "-A",
    "--no-lock",
    "--v8-flags=--max-old-space-size=96",
    join(REPO, "cli.ts"),
    "--db",
    path,
    "export",
    output,
  ], { encoding: "utf8", env: workerEnv(), timeout: 60_000 });
  assert.equal(run.status, 0, `exit ${run.status} ${run.signal}: ${run.stderr.slice(-500)}`);
  assert.match(run.stdout, /Exported 1 session to /);
  const size = statSync(output).size;
  assert.ok(size > 200_000_000, `${size} bytes`);
  const text = readFileSync(output, "latin1");
  assert.ok(text.startsWith('{"id":"huge"') && text.endsWith("}]}\n"), "a whole record");
  assert.equal(text.split('"role":"tool"').length - 1, 2000, "every message");
  assert.equal(text.indexOf("\n"), text.length - 1, "one line");
});
