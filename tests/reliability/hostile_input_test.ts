// Hostile text in every field: kept exactly where the spec keeps the value, titles
// sanitized, nothing read as SQL or as a LIKE/FTS pattern.
//
// Lone surrogates (a UTF-16 half with no partner) cannot be encoded in UTF-8, which is
// what SQLite stores. Every runtime's driver (node:sqlite on Deno and Node, bun:sqlite)
// binds them as U+FFFD, so a plain TEXT column returns U+FFFD in their place. JSON
// columns and multimodal content are written with Python's ASCII escapes (`\ud800`),
// so there a lone surrogate survives exactly. Both behaviours are tested below.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { TitleError } from "../../lib/core/errors.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";

/** Text meant to break things, by kind. */
const HOSTILE: Readonly<Record<string, string>> = {
  nul: "before\u0000after",
  leadingNul: "\u0000json:not json at all",
  bidi: "invoice \u202Egpj.exe\u202C and \u2066isolated\u2069 \u200F",
  zeroWidth: "zero\u200Bwidth\u200C\u200Djoin\uFEFFer\u2060",
  emoji: "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🚀",
  loneHigh: "half \uD800 a pair",
  loneLow: "\uDC00 low first",
  reversedPair: "\uDC00\uD800",
  sqlQuote: "'; DROP TABLE sessions; --",
  sqlDouble: '" OR 1=1 -- ; DELETE FROM messages',
  likeMeta: "100%_done\\ and % and _ and \\%",
  fts: 'NEAR(a b) AND "unbalanced * ^col:x (',
  controls: "bell\u0007 escape\u001b[31mred\u001b[0m\r\n\ttab\u007f",
  separators: "line\u2028para\u2029nbsp\u00A0ideo\u3000end",
  cjk: "数据库迁移 週次レポート 회의록",
};

/** What SQLite gives back for `text` bound as TEXT: lone surrogates become U+FFFD. */
function stored(text: string): string {
  return text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    "\uFFFD",
  );
}

async function openDb(): Promise<SessionDB> {
  let tick = 1_700_000_000;
  return await SessionDB.open({ path: tempDbPath(), clock: () => tick++ });
}

test("createSession() and getSession() keep hostile ids, sources, models, prompts, users and configs", async () => {
  using db = await openDb();
  for (const [kind, text] of Object.entries(HOSTILE)) {
    db.createSession(text, text, {
      model: text,
      systemPrompt: text,
      userId: text,
      modelConfig: { [kind]: text, nested: [text] },
    });
  }
  for (const text of Object.values(HOSTILE)) {
    const row = db.getSession(text);
    assert.ok(row !== undefined, JSON.stringify(text));
    assert.equal(row.id, stored(text));
    assert.equal(row.source, stored(text));
    assert.equal(row.model, stored(text));
    assert.equal(row.system_prompt, stored(text));
    assert.equal(row.user_id, stored(text));
  }
  // JSON columns keep even lone surrogates (written as ASCII escapes, as Python does).
  using raw = await rawOpen(db.path, true);
  const config = raw.prepare("SELECT model_config FROM sessions WHERE id = ?").get(
    stored(HOSTILE.loneHigh),
  );
  assert.deepEqual(JSON.parse(String(config!.model_config)), {
    loneHigh: HOSTILE.loneHigh,
    nested: [HOSTILE.loneHigh],
  });
  assert.equal(db.sessionCount(), Object.keys(HOSTILE).length);
  assert.equal(raw.prepare("PRAGMA integrity_check").get()!.integrity_check, "ok");
});

test("appendMessage() and getMessages() keep hostile text in every message field", async () => {
  using db = await openDb();
  db.createSession("s", "cli");
  const texts = Object.values(HOSTILE);
  for (const text of texts) {
    db.appendMessage("s", {
      role: "assistant",
      content: text,
      toolName: text,
      toolCallId: text,
      toolCalls: [{ id: text, type: "function", function: { name: text, arguments: text } }],
      finishReason: text,
      reasoning: text,
      reasoningContent: text,
      reasoningDetails: [{ type: "summary", text }],
      codexReasoningItems: [{ text }],
      codexMessageItems: [{ text }],
    });
  }
  const rows = db.getMessages("s");
  assert.equal(rows.length, texts.length);
  rows.forEach((row, i) => {
    const text = texts[i];
    const kept = stored(text);
    // A plain string that begins with the multimodal marker is the spec's one exception:
    // it is read back as JSON when it parses; this one does not, so it comes back as is.
    assert.equal(row.content, kept, JSON.stringify(text));
    assert.equal(row.tool_name, kept);
    assert.equal(row.tool_call_id, kept);
    assert.equal(row.finish_reason, kept);
    assert.equal(row.reasoning, kept);
    assert.equal(row.reasoning_content, kept);
    // JSON columns keep the exact string, lone surrogates included.
    assert.deepEqual(row.tool_calls, [
      { id: text, type: "function", function: { name: text, arguments: text } },
    ]);
    // These three stay JSON text in getMessages, as Python returns them.
    assert.deepEqual(JSON.parse(row.reasoning_details as string), [{ type: "summary", text }]);
    assert.deepEqual(JSON.parse(row.codex_reasoning_items as string), [{ text }]);
    assert.deepEqual(JSON.parse(row.codex_message_items as string), [{ text }]);
  });
  const session = db.getSession("s")!;
  assert.equal(session.message_count, texts.length);
  assert.equal(session.tool_call_count, texts.length);
});

test("appendMessage() keeps multimodal parts with hostile text exactly, lone surrogates included", async () => {
  using db = await openDb();
  db.createSession("s", "cli");
  const parts = Object.values(HOSTILE).map((text) => ({ type: "text", text }));
  db.appendMessage("s", { role: "user", content: parts });
  assert.deepEqual(db.getMessages("s")[0].content, parts);
});

test("appendMessage() reads back a plain string that starts with the multimodal marker and parses as JSON as parts, like Python", async () => {
  using db = await openDb();
  db.createSession("s", "cli");
  db.appendMessage("s", { role: "user", content: '\u0000json:[{"type": "text", "text": "hi"}]' });
  assert.deepEqual(db.getMessages("s")[0].content, [{ type: "text", text: "hi" }]);
});

test("appendMessage() keeps 10 MB of content with NUL, emoji and CJK inside, and search finds its last word", async () => {
  using db = await openDb();
  db.createSession("s", "cli");
  const unit = "lorem ipsum 🚀 dolor \u0000 sit amet 数据 ";
  const body = unit.repeat(Math.ceil(10_000_000 / unit.length)).slice(0, 10_000_000);
  const content = `needlebegin ${body} haystackend`;
  const id = db.appendMessage("s", { role: "user", content });
  const [row] = db.getMessages("s");
  assert.equal(row.id, id);
  assert.equal(row.content, content);
  assert.deepEqual(db.searchMessages("haystackend").map((hit) => hit.id), [id]);
  assert.deepEqual(db.searchMessages("needlebegin").map((hit) => hit.id), [id]);
});

test("setSessionTitle() strips controls, bidi and zero-width characters and keeps the rest literally", async () => {
  using db = await openDb();
  const cases: Array<[string, string]> = [
    ["invoice \u202Egpj.exe\u202C", "invoice gpj.exe"],
    ["zero\u200Bwidth\u200C\u200Djoin\uFEFFer\u2060", "zerowidthjoiner"],
    ["nul\u0000 bell\u0007 esc\u001b[0m", "nul bell esc[0m"],
    ["  tabs\tand\nnew\r\nlines\u3000\u00A0here  ", "tabs and new lines here"],
    ["'; DROP TABLE sessions; --", "'; DROP TABLE sessions; --"],
    ["100%_done\\", "100%_done\\"],
    // U+200D (the emoji joiner) is in the stripped U+200B–200F range: the family falls apart.
    ["👩‍👩‍👧‍👦 launch 🚀", "👩👩👧👦 launch 🚀"],
    ["half \uD800 a pair", "half \uFFFD a pair"],
  ];
  cases.forEach(([given], i) => {
    db.createSession(`t${i}`, "cli");
    assert.equal(db.setSessionTitle(`t${i}`, given), true);
  });
  cases.forEach(([, clean], i) => {
    assert.equal(db.getSessionTitle(`t${i}`), clean);
    assert.equal(db.getSessionByTitle(clean)?.id, `t${i}`);
  });
  assert.equal(db.setSessionTitle("t0", "\u200B\u202E \u0000 "), true, "cleans to nothing");
  assert.equal(db.getSessionTitle("t0"), null);
  // The stored form of a lone surrogate is U+FFFD, so both spellings are the same title.
  db.createSession("other", "cli");
  assert.throws(() => db.setSessionTitle("other", "half \uFFFD a pair"), TitleError);
  assert.equal(db.sessionCount(), cases.length + 1, "no statement was injected");
});

test("resolveSessionId() and resolveSessionByTitle() take % _ and \\ literally", async () => {
  using db = await openDb();
  for (const id of ["100%_done", "100xydone", "a_b", "aXb", "a\\b", "a\\\\c"]) {
    db.createSession(id, "cli");
  }
  assert.equal(db.resolveSessionId("100%"), "100%_done");
  assert.equal(db.resolveSessionId("100%_"), "100%_done");
  assert.equal(db.resolveSessionId("a_"), "a_b");
  assert.equal(db.resolveSessionId("a\\b"), "a\\b");
  assert.equal(db.resolveSessionId("a\\\\"), "a\\\\c");
  assert.equal(db.resolveSessionId("%"), undefined);
  assert.equal(db.resolveSessionId("_"), undefined);
  db.setSessionTitle("a_b", "50% off");
  db.setSessionTitle("aXb", "50X off #2");
  db.setSessionTitle("100xydone", "a_b");
  db.setSessionTitle("a\\b", "aXb #3");
  assert.equal(db.resolveSessionByTitle("50% off"), "a_b");
  assert.equal(db.resolveSessionByTitle("a_b"), "100xydone");
});

test("searchMessages() answers hostile queries with hits or nothing, never an error or a changed file", async () => {
  using db = await openDb();
  db.createSession("s", "cli");
  db.appendMessage("s", { role: "user", content: "drop table plans for 记忆 and 记录" });
  db.appendMessage("s", { role: "assistant", content: "literal 100%_done\\ marker" });
  for (const text of Object.values(HOSTILE)) db.appendMessage("s", { role: "user", content: text });
  const before = db.messageCount();
  const queries = [
    ...Object.values(HOSTILE),
    "*",
    "**",
    "AND",
    "OR OR",
    "NOT",
    "NEAR(",
    ")(",
    '"',
    "'",
    "content:drop",
    "messages_fts MATCH 'x'",
    "x".repeat(10_000),
    "\u0000",
    " ",
  ];
  for (const query of queries) {
    const hits = db.searchMessages(query);
    assert.ok(Array.isArray(hits), JSON.stringify(query));
  }
  assert.equal(db.messageCount(), before);
  // Text around SQL metacharacters is still found as text.
  assert.ok(db.searchMessages("drop table").some((hit) => hit.session_id === "s"));
  // A short CJK query goes through LIKE: % and _ must not act as wildcards.
  assert.equal(db.searchMessages("记%").length, 0);
  assert.equal(db.searchMessages("记_").length, 0);
  assert.equal(db.searchMessages("记忆").length, 1);
  using raw = await rawOpen(db.path, true);
  assert.equal(raw.prepare("PRAGMA integrity_check").get()!.integrity_check, "ok");
});
