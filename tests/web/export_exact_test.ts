/**
 * The web page's JSON Lines export writes what `hermes-state export` writes:
 * integers beyond 2^53 with every digit (in columns, in multimodal content,
 * in `tool_calls`), BLOBs and text that is not valid UTF-8 as base64 under
 * `hermes_state_bytes`. Served over HTTP from a copy of the v11 fixture
 * changed with raw SQL.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDbPath, tempDir } from "../_helpers.ts";
import { runCli, v11Copy } from "../_cli_io.ts";
import { parseJsonExact } from "../../lib/core/exact_json.ts";
import { serve, type Served } from "./_served.ts";

/** 2^60 + 3: a count a JS number rounds (to 2^60). */
const HUGE = "1152921504606846979";

/** The session the unusual values go into. */
const SESSION = "20260501_090000_exact";

/** A copy of the v11 fixture with one `cli` session of values JSON.parse and JS numbers lose. */
async function unusualFile(): Promise<string> {
  const path = v11Copy();
  using db = await rawOpen(path);
  db.exec(`
    INSERT INTO sessions (id, source, started_at, title, output_tokens, model)
      VALUES ('${SESSION}', 'cli', 1777626000, CAST(X'E29C93FF' AS TEXT), ${HUGE}, X'6D6F64656C');
    INSERT INTO messages (id, session_id, role, content, timestamp, token_count) VALUES
      (9007199254740998, '${SESSION}', 'user', 'at 2^53 + 6', 1777626001.5, ${HUGE}),
      (9007199254740999, '${SESSION}', 'assistant', 'at 2^53 + 7', 1777626002.5, -${HUGE}),
      (9007199254741000, '${SESSION}', 'user', X'00FF01', 1777626003.5, NULL),
      (9007199254741001, '${SESSION}', 'user', CAST(X'6F6BC3' AS TEXT), 1777626004.5, NULL);
    INSERT INTO messages (id, session_id, role, content, tool_calls, timestamp) VALUES
      (9007199254741002, '${SESSION}', 'assistant',
       char(0) || 'json:[{"type": "text", "text": "n", "n": ${HUGE}}]',
       '[{"id": "c9", "function": {"name": "f", "arguments": "{}"}, "n": -${HUGE}}]', 1777626005.5);
  `);
  return path;
}

let path: string;
let served: Served;
before(async () => {
  path = await unusualFile();
  served = await serve(path);
});
after(() => served.close());

async function webExport(query: string): Promise<string> {
  const response = await fetch(`${served.origin}/api/export?format=jsonl&${query}`);
  assert.equal(response.status, 200);
  return await response.text();
}

async function cliExport(...args: string[]): Promise<string> {
  const run = await runCli(["--db", path, "export", ...args, "-"]);
  assert.equal(run.code, 0, run.err);
  return run.out;
}

describe("the web JSON Lines export keeps every value exactly", () => {
  test("one session: the same bytes as hermes-state export --session-id", async () => {
    const web = await webExport(`session=${SESSION}`);
    assert.equal(web, await cliExport("--session-id", SESSION));
  });

  test("a listing's export (source filter): the same bytes as hermes-state export --source", async () => {
    const web = await webExport("source=cli");
    assert.equal(web, await cliExport("--source", "cli"));
  });

  test("integers beyond 2^53 are written with every digit, in columns, content and tool_calls", async () => {
    const line = await webExport(`session=${SESSION}`);
    assert.match(line, new RegExp(`"output_tokens":${HUGE},`));
    assert.match(line, /"id":9007199254740998,/);
    assert.match(line, /"id":9007199254740999,/);
    assert.match(line, new RegExp(`"token_count":-${HUGE},`));
    assert.ok(line.includes(`"content":[{"type":"text","text":"n","n":${HUGE}}]`), "content");
    assert.ok(line.includes(`"n":-${HUGE}}]`), "tool_calls");
  });

  test("BLOBs and text that is not valid UTF-8 carry their bytes under hermes_state_bytes", async () => {
    const record = parseJsonExact(await webExport(`session=${SESSION}`)) as {
      title: string;
      hermes_state_bytes?: unknown;
      messages: { id: bigint; content: unknown; hermes_state_bytes?: unknown }[];
    };
    assert.equal(record.title, "\u2713\uFFFD");
    assert.deepEqual(record.hermes_state_bytes, {
      title: { text: "4pyT/w==" },
      model: { blob: "bW9kZWw=" },
    });
    const byId = (id: string) => record.messages.find((m) => m.id === BigInt(id))!;
    assert.deepEqual(byId("9007199254741000").hermes_state_bytes, { content: { blob: "AP8B" } });
    assert.deepEqual(byId("9007199254741001").hermes_state_bytes, { content: { text: "b2vD" } });
  });

  test("hermes-state import reads the web export back to what the CLI exports of the original", async () => {
    const web = await webExport(`session=${SESSION}`);
    const file = join(tempDir(), "web.jsonl");
    writeFileSync(file, web);
    const copy = tempDbPath();
    const imported = await runCli(["--db", copy, "import", file]);
    assert.equal(imported.code, 0, imported.err);
    const again = await runCli(["--db", copy, "export", "--session-id", SESSION, "-"]);
    assert.equal(again.code, 0, again.err);
    assert.equal(again.out, await cliExport("--session-id", SESSION));
  });
});
