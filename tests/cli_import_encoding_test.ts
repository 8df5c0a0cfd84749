/**
 * `import` of a file that is not UTF-8 (an export saved in Latin-1 by an
 * editor): each byte that is not UTF-8 was read as U+FFFD, and the session
 * went in with `caf\uFFFD` for `café`, exit 0, without a word. The line is
 * now named and the run stops there, as at a damaged `.gz`: every session
 * before it is in. Binary data on the first line is still said to be what
 * it is.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { tempDir } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

/** A record of session `id` titled `title`, as one JSON line. */
function line(id: string, title: string): string {
  return JSON.stringify({ id, source: "cli", started_at: 1, title, messages: [] });
}

describe("import of text that is not UTF-8", () => {
  test("stops at the first line that is not UTF-8, naming it; what came before is in", async () => {
    const folder = tempDir();
    const input = join(folder, "latin1.jsonl");
    // Line 2 as Latin-1 writes `café`: 0xE9 is no UTF-8.
    writeFileSync(
      input,
      Buffer.concat([
        Buffer.from(`${line("a", "plain")}\n`),
        Buffer.from(`${line("b", "café")}\n`, "latin1"),
        Buffer.from(`${line("c", "after")}\n`),
      ]),
    );
    const db = join(folder, "state.db");
    const run = await runCli(["--db", db, "import", input]);
    assert.equal(run.code, 1);
    assert.match(run.err, /line 2 is not valid UTF-8 text/);
    using store = await SessionDB.open({ path: db, readonly: true });
    assert.deepEqual(store.listSessionsRich().map((s) => s.id), ["a"]);
    const json = await runCli(["--json", "--db", join(folder, "other.db"), "import", input]);
    assert.match(JSON.parse(json.out).input_error, /line 2 is not valid UTF-8/);
  });

  test("a first line not UTF-8 is refused before any database is made; binary data says so", async () => {
    const folder = tempDir();
    const input = join(folder, "latin1.jsonl");
    writeFileSync(input, Buffer.from(`${line("b", "café")}\n`, "latin1"));
    const db = join(folder, "state.db");
    const run = await runCli(["--db", db, "import", input]);
    assert.equal(run.code, 1);
    assert.match(run.err, /line 1 is not valid UTF-8 text/);
    assert.equal(existsSync(db), false);
    // A gzip stream given a name without .gz: still named as gzip.
    const gz = join(folder, "export.jsonl");
    writeFileSync(gz, gzipSync(`${line("a", "x")}\n`));
    const binary = await runCli(["--db", db, "import", gz]);
    assert.equal(binary.code, 1);
    assert.match(binary.err, /gzip-compressed/);
    // UTF-8 with a BOM, CRLF ends and a U+2028 inside a string reads as before.
    const fine = join(folder, "fine.jsonl");
    writeFileSync(fine, `\ufeff${line("x", "a\u2028b")}\r\n${line("y", "ok")}\r\n`);
    const ok = await runCli(["--db", db, "import", fine]);
    assert.equal(ok.code, 0, ok.err);
    using store = await SessionDB.open({ path: db, readonly: true });
    assert.equal(store.getSession("x")?.title, "a\u2028b");
  });
});
