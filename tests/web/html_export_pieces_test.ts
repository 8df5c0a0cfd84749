/**
 * The HTML transcript written in pieces (`lib/web/html_texts.ts`): joined,
 * the pieces are byte for byte `renderSessionHtml` of the whole record for
 * sessions whose tool results come within the bound (after their calls,
 * several per message, missing, before their calls, hostile text, empty
 * content), for chunks of 1, 2, 3 and 100 messages; past the bound they are
 * what `htmlTexts` documents; what is held never passes the bound; and
 * `export --format html` of a real SQLite file writes the whole records'
 * bytes, in a heap smaller than a whole session.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { copyFixture, rawOpen, tempDbPath, tempDir } from "../_helpers.ts";
import { recordingIo } from "../_cli_io.ts";
import { mulberry32, type Random } from "../_random.ts";
import { REPO, runtimeBinary, workerEnv } from "../reliability/_runtimes.ts";
import { main } from "../../lib/cli/main.ts";
import { openStore } from "../../lib/open_store.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { JsonValue, MessageRow, SessionExport } from "../../lib/core/types.ts";
import { type HtmlHoldLimits, htmlTexts } from "../../lib/web/html_texts.ts";
import {
  htmlDocumentEnd,
  htmlDocumentStart,
  messageCountHtml,
  renderHtmlDocument,
  renderSessionHtml,
} from "../../lib/web/html_transcript.ts";

/** Text an HTML writer may get wrong, or that looks like the transcript's own markup. */
const HOSTILE = [
  "<script>alert(1)</script>",
  '</article></section><dl class="details-list"><dt>Messages</dt>',
  "nul\u0000mid, lone \uD800 high, RTL \u202Eevil\u202C 👩‍👩‍👧",
  "```js\n<b>fenced</b>\n``` and `code` and **bold**",
  "crlf\r\nbare\rcr\n&amp; &lt;",
  "",
  "   ",
];

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

/** A message with every column a transcript reads. */
function message(id: number, fields: Partial<MessageRow>): MessageRow {
  return {
    id,
    session_id: "s",
    role: "user",
    content: null,
    tool_call_id: null,
    tool_calls: null,
    tool_name: null,
    timestamp: 1777000000 + id,
    token_count: null,
    finish_reason: null,
    reasoning: null,
    reasoning_content: null,
    reasoning_details: null,
    codex_reasoning_items: null,
    codex_message_items: null,
    ...fields,
  };
}

/** A session record with `messages`. */
function record(messages: MessageRow[], messageCount: unknown = messages.length): SessionExport {
  return {
    id: "s<1>",
    source: "cli",
    user_id: null,
    model: "m & m",
    model_config: null,
    system_prompt: null,
    parent_session_id: null,
    started_at: 1777000000,
    ended_at: null,
    end_reason: null,
    message_count: messageCount as number,
    tool_call_count: 0,
    input_tokens: 3,
    output_tokens: 4,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    billing_provider: null,
    billing_base_url: null,
    billing_mode: null,
    estimated_cost_usd: null,
    actual_cost_usd: null,
    cost_status: null,
    cost_source: null,
    pricing_version: null,
    title: "<i>t</i>",
    api_call_count: 0,
    messages,
  };
}

/** Some content: text (hostile, empty, blank), `null`, or parts. */
function content(random: Random): MessageRow["content"] {
  const roll = random();
  if (roll < 0.1) return null;
  if (roll < 0.2) return [{ type: "text", text: pick(random, HOSTILE) }, { type: "image_url" }];
  return `${pick(random, HOSTILE)}${random() < 0.3 ? "x".repeat(Math.floor(random() * 300)) : ""}`;
}

/**
 * A session of `size` messages: users, assistants with 0 to 3 tool calls
 * (unique ids; some without an id), each call's result after it (soon, or
 * up to 30 messages later), before it, or never, results without a call.
 */
function generated(random: Random, size: number): MessageRow[] {
  const rows: MessageRow[] = [];
  /** Results still to place, with the index after which they may come. */
  const later: { row: Partial<MessageRow>; at: number }[] = [];
  let callNumber = 0;
  const result = (id: string): Partial<MessageRow> => ({
    role: "tool",
    tool_call_id: id,
    tool_name: pick(random, ["shell", "<b>x</b>", null]),
    content: content(random),
  });
  while (rows.length < size) {
    const due = later.findIndex((entry) => entry.at <= rows.length);
    if (due >= 0 && random() < 0.7) {
      rows.push(message(rows.length + 1, later.splice(due, 1)[0].row));
      continue;
    }
    const roll = random();
    if (roll < 0.35) {
      rows.push(
        message(rows.length + 1, {
          role: pick(random, ["user", "system"]),
          content: content(random),
        }),
      );
    } else if (roll < 0.4) {
      // A result whose call never comes.
      rows.push(message(rows.length + 1, result(`orphan-${callNumber++}`)));
    } else {
      const calls = Array.from({ length: Math.floor(random() * 4) }, (): JsonValue => {
        const id = `call-${callNumber++}`;
        const fate = random();
        if (fate < 0.1) rows.push(message(rows.length + 1, result(id))); // before its call
        else if (fate < 0.7) later.push({ row: result(id), at: rows.length + 1 });
        else if (fate < 0.9) {
          later.push({ row: result(id), at: rows.length + 1 + Math.floor(random() * 30) });
        } // else: never answered
        return random() < 0.1 ? { function: { name: "no id", arguments: "{}" } } : {
          id,
          type: "function",
          function: { name: pick(random, HOSTILE), arguments: '{"a": [1, "<x>"]}' },
        };
      });
      rows.push(message(rows.length + 1, {
        role: "assistant",
        content: content(random),
        reasoning: random() < 0.2 ? pick(random, HOSTILE) : null,
        tool_calls: calls.length === 0 && random() < 0.5 ? null : calls,
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
      }));
    }
  }
  for (const { row } of later) rows.push(message(rows.length + 1, row));
  return rows;
}

/** What the pieces of `exported`, in chunks of `chunk` messages, join into; the texts seen before the tail. */
function piecesHtml(
  exported: SessionExport,
  chunk: number,
  limits?: HtmlHoldLimits,
): { html: string; beforeTail: string } {
  const { messages, ...session } = exported;
  const texts = htmlTexts(limits);
  let html = texts.head(session);
  for (let at = 0; at < messages.length; at += chunk) {
    html += texts.messages(messages.slice(at, at + chunk));
  }
  const beforeTail = html;
  return { html: html + texts.tail(), beforeTail };
}

/** Where two texts first differ, for a readable failure. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at ${i} of ${a.length}/${b.length}: ${JSON.stringify(a.slice(i - 60, i + 60))} vs ${
    JSON.stringify(b.slice(i - 60, i + 60))
  }`;
}

function assertSameHtml(actual: string, expected: string, what: string): void {
  if (actual !== expected) assert.fail(`${what}: ${firstDifference(actual, expected)}`);
}

/** Checks that the file at `path` holds the UTF-8 bytes of `expected` (a lone surrogate as U+FFFD). */
function assertFileBytes(path: string, expected: string, what: string): void {
  const bytes = readFileSync(path);
  if (!bytes.equals(Buffer.from(expected))) {
    assertSameHtml(bytes.toString("utf8"), Buffer.from(expected).toString("utf8"), what);
    assert.fail(`${what}: the bytes differ`);
  }
}

/** `messages` with the tool call of id `from` given id `to` (ids are not drawn: only the pairing changes). */
function renamedCall(messages: MessageRow[], from: string, to: string): MessageRow[] {
  return messages.map((row) =>
    Array.isArray(row.tool_calls)
      ? {
        ...row,
        tool_calls: row.tool_calls.map((call) =>
          (call as { id?: string }).id === from ? { ...call as object, id: to } : call
        ),
      }
      : row
  );
}

describe("an HTML transcript in pieces is the whole rendering, byte for byte, within the bound", () => {
  test("generated sessions, every chunk size", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = mulberry32(seed);
      const messages = generated(random, Math.floor(random() * 120));
      // Now and then a `message_count` that is not a count: the row shows the number of messages.
      const count = seed % 7 === 0 ? null : seed % 11 === 0 ? "many" : messages.length + seed;
      const whole = renderSessionHtml(record(messages, count));
      for (const chunk of [1, 2, 3, 100]) {
        const { html } = piecesHtml(record(messages, count), chunk);
        assertSameHtml(html, whole, `seed ${seed}, chunk ${chunk}`);
      }
    }
  });

  test("several calls in one message, results in any order after it, one before it", () => {
    const calls = ["a", "b", "c"].map((id) => ({ id, function: { name: id, arguments: "{}" } }));
    const messages = [
      message(1, { role: "tool", tool_call_id: "c", content: "early c" }),
      message(2, { role: "assistant", content: "", tool_calls: calls }),
      message(3, { role: "tool", tool_call_id: "b", content: "" }),
      message(4, { role: "user", content: "between" }),
      message(5, { role: "tool", tool_call_id: "a", content: [{ type: "text", text: "A" }] }),
    ];
    const whole = renderSessionHtml(record(messages));
    assert.equal(
      whole.split('<div class="figures">result</div>').length - 1,
      3,
      "three results drawn",
    );
    for (const chunk of [1, 2, 3, 100]) {
      assertSameHtml(piecesHtml(record(messages), chunk).html, whole, `chunk ${chunk}`);
    }
  });

  test("a session without messages, and one whose head waits for its count", () => {
    for (const count of [0, null, "text"]) {
      assertSameHtml(
        piecesHtml(record([], count), 1).html,
        renderSessionHtml(record([], count)),
        `${count}`,
      );
    }
  });
});

describe("past the bound, the pieces are what htmlTexts documents", () => {
  const call = (id: number, callId: string) =>
    message(id, {
      role: "assistant",
      tool_calls: [{ id: callId, function: { name: "t", arguments: "{}" } }],
    });

  test("more messages held than the bound: the call is written without its result, before the session ends", () => {
    const messages = [
      call(1, "x"),
      ...[2, 3, 4, 5].map((id) => message(id, { role: "user", content: `u${id}` })),
      message(6, { role: "tool", tool_call_id: "x", content: "late" }),
    ];
    const { html, beforeTail } = piecesHtml(record(messages), 1, { messages: 3 });
    assertSameHtml(
      html,
      renderSessionHtml(record(renamedCall(messages, "x", "unpaired"))),
      "unpaired",
    );
    assert.ok(beforeTail.includes('id="m-1"'), "the call is written before the session ends");
    // Within the bound (the result 5 messages later, 6 held at most), it is paired.
    assertSameHtml(
      piecesHtml(record(messages), 1, { messages: 5 }).html,
      renderSessionHtml(record(messages)),
      "paired",
    );
  });

  test("more characters held than the bound: the same", () => {
    const messages = [
      call(1, "x"),
      message(2, { role: "user", content: "y".repeat(5_000) }),
      message(3, { role: "tool", tool_call_id: "x", content: "late" }),
    ];
    assertSameHtml(
      piecesHtml(record(messages), 1, { chars: 4_000 }).html,
      renderSessionHtml(record(renamedCall(messages, "x", "unpaired"))),
      "unpaired",
    );
    assertSameHtml(
      piecesHtml(record(messages), 1, { chars: 8_000 }).html,
      renderSessionHtml(record(messages)),
      "paired",
    );
  });

  test("results before their calls: the last `earlyResults` are kept", () => {
    const messages = [
      ...["a", "b", "c"].map((id, i) =>
        message(i + 1, { role: "tool", tool_call_id: id, content: `r${id}` })
      ),
      ...["a", "b", "c"].map((id, i) => call(i + 4, id)),
    ];
    assertSameHtml(
      piecesHtml(record(messages), 2, { earlyResults: 2 }).html,
      renderSessionHtml(record(renamedCall(messages, "a", "forgotten"))),
      "the oldest forgotten",
    );
    assertSameHtml(
      piecesHtml(record(messages), 2, { earlyResults: 3 }).html,
      renderSessionHtml(record(messages)),
      "all kept",
    );
  });

  test("ids that repeat: the last result before the call, else the first after it", () => {
    const before = [
      message(1, { role: "tool", tool_call_id: "x", content: "first" }),
      call(2, "x"),
      message(3, { role: "tool", tool_call_id: "x", content: "second" }),
    ];
    // The whole rendering draws "second" under the call; the pieces "first".
    const renamedSecond = before.map((row) =>
      row.id === 3 ? { ...row, tool_call_id: "other" } : row
    );
    assertSameHtml(
      piecesHtml(record(before), 1).html,
      renderSessionHtml(record(renamedSecond)),
      "before",
    );
    const after = [
      call(1, "x"),
      message(2, { role: "tool", tool_call_id: "x", content: "first" }),
      call(3, "x"),
      message(4, { role: "tool", tool_call_id: "x", content: "second" }),
    ];
    // Each call gets the first result after it (the whole rendering: "second" under both).
    const paired = renamedCall(after.slice(0, 2), "x", "x1").concat(after.slice(2))
      .map((row) => row.id === 2 ? { ...row, tool_call_id: "x1" } : row);
    assertSameHtml(piecesHtml(record(after), 1).html, renderSessionHtml(record(paired)), "after");
  });

  test("a message_count that is not a count, past the bound: the count comes after the last message", () => {
    const messages = [1, 2, 3, 4, 5].map((id) => message(id, { role: "user", content: `u${id}` }));
    const { html, beforeTail } = piecesHtml(record(messages, null), 1, { messages: 2 });
    const counted = renderSessionHtml(record(messages, 5));
    const expected = counted.replace("<dt>Messages</dt><dd>5</dd>", "")
      .replace(/<\/section>\n$/, `${messageCountHtml(5)}</section>\n`);
    assertSameHtml(html, expected, "count at the end");
    assert.ok(beforeTail.includes('id="m-3"'), "written before the session ends");
  });

  test("a limit that is not a positive integer is refused, naming it", () => {
    assert.throws(
      () => htmlTexts({ messages: 0 }),
      /messages must be a positive integer: current value is 0/,
    );
    assert.throws(
      () => htmlTexts({ chars: 1.5 }),
      /chars must be a positive integer: current value is 1.5/,
    );
  });
});

describe("what the HTML pieces hold stays within the bound", () => {
  test("calls answered at once: at most one message held, text written as it comes", () => {
    const texts = htmlTexts();
    let written = texts.head(record([]));
    let mostHeld = 0;
    for (let i = 0; i < 20_000; i += 2) {
      written += texts.messages([
        message(i + 1, {
          role: "assistant",
          tool_calls: [{ id: `c${i}`, function: { name: "t" } }],
        }),
        message(i + 2, { role: "tool", tool_call_id: `c${i}`, content: "r".repeat(1_000) }),
      ]);
      mostHeld = Math.max(mostHeld, texts.heldMessages);
      assert.equal(texts.heldMessages, 0, `nothing held once the result came (message ${i})`);
      assert.equal(texts.heldChars, 0, `no character held once the result came (message ${i})`);
    }
    assert.equal(mostHeld, 0);
    assert.ok(written.length > 20_000_000, `${written.length} characters written before the end`);
    assert.equal(texts.tail(), "</section>\n");
  });

  test("calls never answered, results of no call: the held messages and characters never pass the bound", () => {
    const limits = { messages: 50, chars: 200_000, earlyResults: 10 };
    const texts = htmlTexts(limits);
    const random = mulberry32(7);
    texts.head(record([], null));
    let mostMessages = 0;
    let mostChars = 0;
    let written = 0;
    for (let i = 1; i <= 5_000; i++) {
      const row = random() < 0.5
        ? message(i, {
          role: "assistant",
          tool_calls: [{ id: `never-${i}`, function: { name: "t" } }],
        })
        : message(i, {
          role: "tool",
          tool_call_id: `orphan-${i}`,
          content: "z".repeat(Math.floor(random() * 20_000)),
        });
      written += texts.messages([row]).length;
      mostMessages = Math.max(mostMessages, texts.heldMessages);
      mostChars = Math.max(mostChars, texts.heldChars);
    }
    assert.ok(mostMessages <= limits.messages, `${mostMessages} messages held`);
    assert.ok(mostChars <= limits.chars, `${mostChars} characters held`);
    assert.ok(mostMessages >= limits.messages - 1, "the calls were held, waiting");
    assert.ok(written > 10 * limits.chars, `${written} characters written before the end`);
    assert.match(texts.tail(), /<dt>Messages<\/dt><dd>5000<\/dd><\/dl><\/section>\n$/);
  });
});

/** A SQLite file of generated sessions (results before, after and without calls), through `importSession`. */
async function generatedDb(): Promise<string> {
  const path = tempDbPath();
  using db = await SessionDB.open({ path });
  for (let seed = 1; seed <= 12; seed++) {
    const random = mulberry32(100 + seed);
    const { messages, ...session } = record(generated(random, 40 + seed * 5));
    db.importSession({
      ...session,
      id: `gen-${seed}`,
      title: `<t${seed}>`,
      messages: messages.map(({ id: _id, session_id: _s, ...row }) => row),
    });
  }
  return path;
}

describe("export --format html of a SQLite file writes the whole records' bytes", () => {
  const files = ["hermes-v6.db", "hermes-v10-external.db", "hermes-v11.db", "hermes-v21.db"];
  for (const name of [...files, "generated"]) {
    test(`${name}: every session, and each on its own`, async () => {
      const path = name === "generated" ? await generatedDb() : copyFixture(name);
      const dir = tempDir();
      await using store = await openStore(path, { readonly: true });
      const records: SessionExport[] = [];
      for await (const exported of store.iterateExport()) records.push(exported);
      assert.ok(records.length > 0);
      const output = join(dir, "all.html");
      assert.equal(
        await main(["--db", path, "export", "--format", "html", output], recordingIo()),
        0,
      );
      assertFileBytes(
        output,
        htmlDocumentStart("hermes-state export") + records.map(renderSessionHtml).join("") +
          htmlDocumentEnd(),
        name,
      );
      for (const exported of records) {
        const one = join(dir, "one.html");
        const io = recordingIo();
        assert.equal(
          await main(
            ["--db", path, "export", "--format", "html", "--session-id", exported.id, one],
            io,
          ),
          0,
          io.err,
        );
        const whole = renderHtmlDocument((await store.exportSession(exported.id))!);
        // The file is titled after the id asked for, the whole record's page after its title.
        const start = htmlDocumentStart(exported.title || exported.id);
        assert.ok(whole.startsWith(start));
        const expected = htmlDocumentStart(exported.id) + whole.slice(start.length);
        assertFileBytes(one, expected, `${name} ${exported.id}`);
      }
    });
  }
});

/**
 * A session `calls` of 500 tool calls, each answered by a 100,000-character
 * result: 50 MB of messages, a 100 MB page (each result drawn twice).
 */
async function callsDb(): Promise<string> {
  const path = tempDbPath();
  {
    using db = await SessionDB.open({ path });
    db.createSession("calls", "cli");
  }
  using raw = await rawOpen(path);
  const triggers = raw.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages'",
  ).all();
  for (const { name } of triggers) raw.exec(`DROP TRIGGER "${name}"`);
  raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
    INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, timestamp)
    SELECT 'calls', 'assistant', 'call ' || i,
      '[{"id": "c' || i || '", "type": "function", "function": {"name": "t", "arguments": "{}"}}]',
      NULL, 1000 + 2 * i FROM n
    UNION ALL
    SELECT 'calls', 'tool', printf('%.*c', 100000, 'x'), NULL, 'c' || i, 1001 + 2 * i FROM n`);
  raw.exec("UPDATE sessions SET message_count = 1000 WHERE id = 'calls'");
  return path;
}

test("export --format html of a 100 MB page runs in a 64 MB heap (it ran out of memory whole)", async () => {
  const deno = runtimeBinary("deno");
  assert.ok(deno !== undefined, "the test runs its child under Deno");
  const path = await callsDb();
  const output = join(tempDir(), "calls.html");
  const run = spawnSync(deno, [
    "run",
    "-A",
    "--no-lock",
    "--v8-flags=--max-old-space-size=64",
    join(REPO, "cli.ts"),
    "--db",
    path,
    "export",
    "--format",
    "html",
    output,
  ], { encoding: "utf8", env: workerEnv(), timeout: 120_000 });
  assert.equal(run.status, 0, `exit ${run.status} ${run.signal}: ${run.stderr.slice(-500)}`);
  const size = statSync(output).size;
  assert.ok(size > 100_000_000, `${size} bytes`);
  const text = readFileSync(output, "latin1");
  assert.equal(
    text.split('<div class="figures">result</div>').length - 1,
    500,
    "every call with its result",
  );
  assert.equal(
    text.split("<details><summary>Tool result</summary>").length - 1,
    500,
    "every result",
  );
  assert.ok(text.endsWith("</section>\n</main></body></html>\n"), "a whole page");
});
