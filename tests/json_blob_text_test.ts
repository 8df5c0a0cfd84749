/**
 * A BLOB where the file should hold text (Python's sqlite3 stores `bytes`
 * as a BLOB: a model, a system prompt, a title, a source, an end reason, a
 * message's content, reasoning, tool name or tool calls) reads as its bytes
 * decoded as UTF-8 (each bad byte U+FFFD) in every JSON output, in the
 * library's decoded messages and in the web API, the same on Deno, Bun and
 * Node. `JSON.stringify` used to print the bytes as `{"0": 109, "1": 111…}`,
 * `String()` as `109,111,…` (stats, usage, prune, the transcript), and a
 * search hit's context lost a BLOB message's content (`""`).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen } from "./_helpers.ts";
import { runCli, v11Copy } from "./_cli_io.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import type { SessionStore } from "../lib/core/session_store.ts";
import { createHandler } from "../lib/web/handler.ts";
import { contextText, decodeContent } from "../lib/core/content.ts";
import { blobAsText } from "../lib/core/blob_text.ts";
import { storedText } from "../lib/render/stored_text.ts";

/** `model\0blob`, `sys\0prompt`, `blob\0tite`: the BLOBs of session `blob_s`. */
const MODEL = "model\u0000blob";
const PROMPT = "sys\u0000prompt";
const TITLE = "blob\u0000tite";
/** The child's BLOB title, a byte order mark first (kept: it is part of the value). */
const CHILD_TITLE = "\uFEFFbom title";
/** The child's model: `model2` and a byte that is not UTF-8. */
const CHILD_MODEL = "model2\uFFFD";
const USER_TEXT = "hello\u0000world paritybb";
const TOOL_TEXT = "tool output paritybb\uFFFD";
const ASSISTANT_TEXT = "done 完了 paritybb";
const TOOL_CALLS = [{ function: { name: "blob_tool", arguments: "{}" } }];

/** What `JSON.stringify` makes of a `Uint8Array`, and what `String()` makes of `cli`'s bytes. */
const BYTE_OBJECT = /"0":/;
const BYTE_LIST = /\b(?:99,108,105|109,111,100|104,101,108)\b/;

/**
 * A copy of the v11 fixture with session `blob_s` and its child `blob_c`,
 * whose text columns hold BLOBs.
 */
async function blobDb(): Promise<string> {
  const path = v11Copy();
  using raw = await rawOpen(path);
  raw.exec(`
    INSERT INTO sessions (id, source, model, system_prompt, started_at, message_count, title,
                          input_tokens)
      VALUES ('blob_s', 'cli', x'6d6f64656c00626c6f62', x'7379730070726f6d7074', 1777400000, 3,
              x'626c6f620074697465', 999999);
    INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, parent_session_id,
                          message_count, title)
      VALUES ('blob_c', x'636c69', x'6d6f64656c32ff', 1777400100, 1777400200,
              x'636f6d7072657373696f6e', 'blob_s', 1, x'efbbbf626f6d207469746c65');
    INSERT INTO messages (session_id, role, content, timestamp, reasoning)
      VALUES ('blob_s', 'user', x'68656c6c6f00776f726c64207061726974796262', 1777400001,
              x'72656173006f6e');
    INSERT INTO messages (session_id, role, content, timestamp, tool_name)
      VALUES ('blob_s', 'tool', x'746f6f6c206f7574707574207061726974796262ff', 1777400002,
              x'746f6f6c5f626c6f62');
    INSERT INTO messages (session_id, role, content, timestamp, reasoning, tool_calls,
                          finish_reason)
      VALUES ('blob_s', 'assistant', x'646f6e6520e5ae8ce4ba86207061726974796262', 1777400003,
              x'7468696e6b696e6700616c6f7564',
              x'5b7b2266756e6374696f6e223a207b226e616d65223a2022626c6f625f746f6f6c222c2022617267756d656e7473223a20227b7d227d7d5d',
              x'73746f70');
    INSERT INTO messages (session_id, role, content, timestamp)
      VALUES ('blob_c', 'user', x'6368696c64207061726974796262', 1777400101);
  `);
  return path;
}

/** The CLI's JSON for `argv` on `path`, checked to hold no BLOB printed as bytes. */
async function cliJson<T>(path: string, argv: readonly string[], now?: number): Promise<T> {
  const run = await runCli(["--db", path, "--json", ...argv], now === undefined ? {} : { now });
  assert.equal(run.err, "", argv.join(" "));
  assert.equal(run.code, 0, argv.join(" "));
  assert.doesNotMatch(run.out, BYTE_OBJECT, argv.join(" "));
  assert.doesNotMatch(run.out, BYTE_LIST, argv.join(" "));
  return JSON.parse(run.out) as T;
}

type Row = Record<string, unknown>;

let path: string;

before(async () => {
  path = await blobDb();
});

describe("JSON outputs of the CLI over BLOBs in text columns", () => {
  test("list --json reads each BLOB of a text column as its UTF-8 text", async () => {
    const rows = await cliJson<Row[]>(path, ["list", "--all", "--limit", "100"]);
    const parent = rows.find((row) => row.id === "blob_s")!;
    assert.equal(parent.model, MODEL);
    assert.equal(parent.system_prompt, PROMPT);
    assert.equal(parent.title, TITLE);
    assert.equal(parent.preview, "hello", "SQLite's SUBSTR stops at the NUL, as Python's does");
    const child = rows.find((row) => row.id === "blob_c")!;
    assert.equal(child.source, "cli");
    assert.equal(child.model, CHILD_MODEL);
    assert.equal(child.end_reason, "compression");
    assert.equal(child.title, CHILD_TITLE);
    assert.equal(child.preview, "child paritybb");
  });

  test("search --json keeps a BLOB message's content in its context, and names BLOBs as text", async () => {
    const hits = await cliJson<Row[]>(path, ["search", "paritybb"]);
    const user = hits.find((hit) => hit.session_id === "blob_s" && hit.role === "user")!;
    assert.equal(user.model, MODEL);
    assert.deepEqual(user.context, [
      { role: "user", content: USER_TEXT },
      { role: "tool", content: TOOL_TEXT },
    ]);
    const tool = hits.find((hit) => hit.role === "tool" && hit.session_id === "blob_s")!;
    assert.equal(tool.tool_name, "tool_blob");
    const child = hits.find((hit) => hit.session_id === "blob_c")!;
    assert.equal(child.source, "cli");
    assert.equal(child.model, CHILD_MODEL);
    // CJK: a substring match, its snippet cut from the BLOB itself.
    const cjk = (await cliJson<Row[]>(path, ["search", "完了"]))
      .find((one) => one.session_id === "blob_s")!;
    assert.ok(String(cjk.snippet).includes("完了"), String(cjk.snippet));
    assert.deepEqual((cjk.context as Row[]).map((entry) => entry.content), [
      TOOL_TEXT,
      ASSISTANT_TEXT,
    ]);
  });

  test("stats and usage --json name a BLOB model and source by their text", async () => {
    const stats = await cliJson<Record<string, Row[]>>(path, ["stats"]);
    const models = stats.by_model.map((row) => row.model);
    assert.ok(models.includes(MODEL) && models.includes(CHILD_MODEL), JSON.stringify(models));
    assert.ok(stats.by_source.every((row) => typeof row.source === "string"));
    assert.equal(stats.by_source.filter((row) => row.source === "cli").length, 2);
    assert.equal(stats.top_sessions[0].title, TITLE);
    assert.equal(stats.top_sessions[0].model, MODEL);
    for (const by of ["model", "source"]) {
      const report = await cliJson<{ rows: Row[] }>(path, ["usage", "--by", by, "--since", "all"]);
      const keys = report.rows.map((row) => row.key);
      assert.ok(keys.every((key) => typeof key === "string"), JSON.stringify(keys));
      if (by === "model") assert.ok(keys.includes(MODEL), JSON.stringify(keys));
    }
  });

  test("lineage and prune --dry-run --json show BLOB titles, sources and end reasons as text", async () => {
    const lineage = await cliJson<{ tree: Row & { children: Row[] } }>(path, ["lineage", "blob_c"]);
    assert.equal(lineage.tree.title, TITLE);
    const [child] = lineage.tree.children;
    assert.deepEqual(
      [child.id, child.title, child.source, child.end_reason],
      ["blob_c", CHILD_TITLE, "cli", "compression"],
    );
    const pruned = await cliJson<{ sessions: Row[] }>(
      path,
      ["prune", "--dry-run", "--older-than", "1"],
      1777400200 + 2 * 86400,
    );
    const candidate = pruned.sessions.find((row) => row.id === "blob_c")!;
    assert.deepEqual(
      [candidate.source, candidate.title, candidate.end_reason],
      ["cli", CHILD_TITLE, "compression"],
    );
  });

  test("show --json still carries the BLOBs' exact bytes (the export record)", async () => {
    const record = await cliJson<Row>(path, ["show", "blob_s"]);
    assert.equal(record.model, null);
    assert.deepEqual(record.hermes_state_bytes, {
      model: { blob: "bW9kZWwAYmxvYg==" },
      system_prompt: { blob: "c3lzAHByb21wdA==" },
      title: { blob: "YmxvYgB0aXRl" },
    });
  });

  test("show prints a BLOB message's content as its text, not its byte numbers", async () => {
    const run = await runCli(["--db", path, "show", "blob_s"]);
    assert.equal(run.code, 0, run.err);
    assert.ok(run.out.includes("hello␀world paritybb"), run.out);
    assert.ok(run.out.includes(ASSISTANT_TEXT), run.out);
    assert.doesNotMatch(run.out, BYTE_LIST);
  });

  test("export --format md shows the BLOBs an export carries as bytes as their text", async () => {
    const run = await runCli(["--db", path, "export", "--format", "md", "--session-id", "blob_s"]);
    assert.equal(run.code, 0, run.err);
    assert.ok(run.out.startsWith("# blob␀tite\n"), run.out);
    assert.ok(run.out.includes("- **Model:** model␀blob"), run.out);
    assert.ok(run.out.includes("\nhello␀world paritybb\n"), run.out);
    assert.ok(run.out.includes("## tool · `tool_blob` ·"), run.out);
    assert.ok(run.out.includes("tool output paritybb\uFFFD"), run.out);
    assert.ok(run.out.includes("thinking␀aloud"), run.out);
    assert.ok(run.out.includes("**Tool call** `blob_tool`"), run.out);
  });

  test("export --format html shows the BLOBs an export carries as bytes as their text", async () => {
    const run = await runCli([
      "--db",
      path,
      "export",
      "--format",
      "html",
      "--session-id",
      "blob_s",
    ]);
    assert.equal(run.code, 0, run.err);
    // The page shows NUL as ␀ (as the text commands do) and escapes the rest.
    for (const shown of ["model␀blob", "hello␀world paritybb", "tool_blob", "thinking␀aloud"]) {
      assert.ok(run.out.includes(shown), shown);
    }
    assert.ok(run.out.includes("blob_tool"), "the BLOB tool call");
    assert.doesNotMatch(run.out, BYTE_LIST);
  });

  test("stats prints a BLOB source as its text", async () => {
    const run = await runCli(["--db", path, "stats"]);
    assert.equal(run.code, 0, run.err);
    assert.doesNotMatch(run.out, BYTE_LIST);
    assert.match(run.out, /model␀blob/);
  });
});

describe("the library over BLOBs in text columns", () => {
  test("decodeContent and a search context read a BLOB as its UTF-8 text", () => {
    const bytes = new TextEncoder().encode("hi\u0000there");
    assert.equal(decodeContent(bytes), "hi\u0000there");
    assert.equal(contextText(bytes, 4), "hi\u0000t");
    // A BLOB is text, never multimodal parts: the prefix marks what Python stored as TEXT.
    const prefixed = new TextEncoder().encode('\u0000json:[{"type": "text", "text": "x"}]');
    assert.equal(decodeContent(prefixed), '\u0000json:[{"type": "text", "text": "x"}]');
    assert.equal(blobAsText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0xff])), "\uFEFFa\uFFFD");
    assert.equal(storedText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), "\uFEFFa");
  });

  test("getMessages and getMessagesAsConversation hold no BLOB and lose no content", async () => {
    using db = await SessionDB.open({ path, readonly: true });
    const messages = db.getMessages("blob_s");
    assert.deepEqual(
      messages.map((m) => [m.content, m.reasoning, m.tool_name]),
      [[USER_TEXT, "reas\u0000on", null], [TOOL_TEXT, null, "tool_blob"], [
        ASSISTANT_TEXT,
        "thinking\u0000aloud",
        null,
      ]],
    );
    assert.deepEqual(messages[2].tool_calls, TOOL_CALLS);
    assert.equal(messages[2].finish_reason, "stop");
    const conversation = db.getMessagesAsConversation("blob_s");
    assert.deepEqual(conversation, [
      { role: "user", content: USER_TEXT },
      { role: "tool", content: TOOL_TEXT, tool_name: "tool_blob" },
      {
        role: "assistant",
        content: ASSISTANT_TEXT,
        tool_calls: TOOL_CALLS,
        finish_reason: "stop",
        reasoning: "thinking\u0000aloud",
      },
    ]);
    assert.doesNotMatch(JSON.stringify([messages, conversation]), BYTE_OBJECT);
  });

  test("listings and reports of the library give text for a BLOB", async () => {
    using db = await SessionDB.open({ path, readonly: true });
    const listed = db.listSessionsRich({ includeChildren: true, limit: 100 });
    const parent = listed.find((row) => row.id === "blob_s")!;
    assert.deepEqual([parent.model, parent.title], [MODEL, TITLE]);
    const searched = db.searchSessions({ limit: 100 });
    assert.equal(searched.find((row) => row.id === "blob_c")!.title, CHILD_TITLE);
    assert.ok(db.usageByModel().some((row) => row.model === MODEL));
    assert.equal(db.topSessionsByTokens(1)[0].title, TITLE);
    assert.ok(db.usageBySource().every((row) => !BYTE_LIST.test(row.source)));
    const report = JSON.stringify([listed, searched, db.usageByModel()]);
    assert.doesNotMatch(report, BYTE_OBJECT);
  });

  test("a session's row and title, by id, by title and in its lineage, give text for a BLOB", async () => {
    // The child titled in TEXT: a title lookup never finds a BLOB title (SQL compares types).
    const copy = await blobDb();
    {
      using raw = await rawOpen(copy);
      raw.exec("UPDATE sessions SET title = 'text title' WHERE id = 'blob_c'");
    }
    using db = await SessionDB.open({ path: copy, readonly: true });
    await using store = await openStore(copy, { readonly: true });
    for (const rows of [db, store]) {
      const one = await rows.getSession("blob_s");
      assert.deepEqual([one?.model, one?.system_prompt, one?.title], [MODEL, PROMPT, TITLE]);
      assert.equal(await rows.getSessionTitle("blob_s"), TITLE);
      const child = await rows.getSessionByTitle("text title");
      assert.deepEqual(
        [child?.id, child?.source, child?.model, child?.end_reason],
        ["blob_c", "cli", CHILD_MODEL, "compression"],
      );
      const up = await rows.getAncestors("blob_c");
      const down = await rows.getDescendants("blob_s");
      assert.deepEqual(up.map((row) => row.title), ["text title", TITLE]);
      assert.deepEqual(down.map((row) => row.model), [MODEL, CHILD_MODEL]);
      assert.doesNotMatch(JSON.stringify([one, child, up, down]), BYTE_OBJECT);
    }
  });
});

describe("a byte order mark that starts a value", () => {
  test("is kept, in a BLOB and in TEXT holding U+0000, on every runtime", async () => {
    const bomPath = v11Copy();
    {
      using raw = await rawOpen(bomPath);
      // Deno's NUL-safe reads decode TEXT holding U+0000 from its bytes: a decoder that takes
      // the mark for a byte order mark dropped it there only (and so did an export).
      raw.exec(`
        INSERT INTO sessions (id, source, started_at, title)
          VALUES ('bom_nul', 'cli', 1777400000, char(65279) || 'a' || char(0) || 'b');
        INSERT INTO sessions (id, source, started_at, title)
          VALUES ('bom_blob', 'cli', 1777400001, x'efbbbf626c6f62');
      `);
    }
    const rows = await cliJson<Row[]>(bomPath, ["list", "--limit", "100"]);
    const titleOf = (id: string) => rows.find((row) => row.id === id)?.title;
    assert.equal(titleOf("bom_blob"), "\uFEFFblob");
    assert.equal(titleOf("bom_nul"), "\uFEFFa\u0000b");
    const record = await cliJson<Row>(bomPath, ["show", "bom_nul"]);
    assert.equal(record.title, "\uFEFFa\u0000b");
  });
});

describe("the web API over BLOBs in text columns", () => {
  let store: SessionStore;
  before(async () => {
    store = await openStore(path, { readonly: true });
  });
  after(() => store?.close());

  /** The API's JSON answer to `route`, checked to hold no BLOB printed as bytes. */
  async function api<T>(route: string): Promise<T> {
    const response = await createHandler(store)(new Request(`http://127.0.0.1:8787${route}`));
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.doesNotMatch(text, BYTE_OBJECT, route);
    assert.doesNotMatch(text, BYTE_LIST, route);
    return JSON.parse(text) as T;
  }

  test("the listing, the search and the resolver name BLOBs as text", async () => {
    const { sessions } = await api<{ sessions: Row[] }>("/api/sessions?limit=200");
    const parent = sessions.find((row) => row.id === "blob_s")!;
    assert.deepEqual([parent.model, parent.title], [MODEL, TITLE]);
    const { hits } = await api<{ hits: Row[] }>("/api/search?q=paritybb");
    const hit = hits.find((one) => one.session_id === "blob_s" && one.role === "user")!;
    assert.deepEqual([hit.title, hit.model], [TITLE, MODEL]);
    assert.deepEqual((hit.context as Row[])[0], { role: "user", content: USER_TEXT });
    const resolved = await api<{ session: Row }>("/api/resolve?id=blob_c");
    assert.deepEqual([resolved.session.title, resolved.session.source], [CHILD_TITLE, "cli"]);
  });

  test("a transcript sends the session, its messages and its lineage as text", async () => {
    const answer = await api<{ session: Row; messages: Row[]; lineage: unknown }>(
      "/api/session?id=blob_s",
    );
    assert.deepEqual(
      [answer.session.model, answer.session.system_prompt, answer.session.title],
      [MODEL, PROMPT, TITLE],
    );
    assert.deepEqual(
      answer.messages.map((m) => [m.content, m.reasoning, m.tool_name]),
      [[USER_TEXT, "reas\u0000on", null], [TOOL_TEXT, null, "tool_blob"], [
        ASSISTANT_TEXT,
        "thinking\u0000aloud",
        null,
      ]],
    );
    assert.ok(JSON.stringify(answer.lineage).includes(JSON.stringify(CHILD_TITLE)));
  });

  test("sources and usage name a BLOB source and model by their text, each source once", async () => {
    const { sources } = await api<{ sources: string[] }>("/api/sources");
    assert.equal(sources.filter((source) => source === "cli").length, 1);
    const { rows } = await api<{ rows: Row[] }>("/api/usage?by=model&since=all");
    assert.ok(rows.some((row) => row.key === MODEL), JSON.stringify(rows));
  });
});
