/**
 * What a message's parsed columns stored (`tool_calls`, multimodal
 * `content`) survives every way out of PostgreSQL, as it survives a copy
 * between files: text that is not JSON, `1.0`, duplicate keys, an integer
 * beyond 2^53 and `NaN`, which the server holds byte for byte.
 *
 * - `copy URL FILE --origin NAME` wrote `NULL`, `1`, the last key and a
 *   rounded integer: the messages, made anew under the file's ids, lost the
 *   text each kept of the store.
 * - `export --db URL` carried none of it under `hermes_state_bytes`, so an
 *   import wrote `[]`, `1` and the last key.
 * - `sync` of a file holding -2^63 in an integer column failed whole with
 *   SQLite's "integer overflow" (its `abs()` of that value), nothing shipped.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDir } from "../_helpers.ts";
import { fileWithStoredTexts, storedMessageTexts } from "../_raw_rows.ts";
import { runCli } from "../_cli_io.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./_pg.ts";

/** `tool_calls` texts an import would not write again from the value read. */
const TOOL_CALLS = [
  "not json",
  '[{"big": 18446744073709551617}]',
  '[{"n": 1.0}]',
  '[{"a": 1, "a": 2}]',
  '[{"x": NaN, "y": Infinity}]',
  '[{"a":1}]',
];

/** Multimodal content holding an integer beyond 2^53, beside each. */
const CONTENT = '\u0000json:[{"type": "text", "text": "t", "n": 1152921504606846977}]';

/** A file with session `s` holding one message for each text. */
const fileWithTexts = () => fileWithStoredTexts(TOOL_CALLS.map((calls) => [CONTENT, calls]));

describe("stored text out of PostgreSQL", { skip: PG_SKIP }, () => {
  test("sync, then copy back with --origin: every text as the file held it", async () => {
    const path = await fileWithTexts();
    const url = schemaUrl(freshSchema());
    const sync = await runCli(["sync", path, "--to", url, "--origin", "o1"]);
    assert.equal(sync.code, 0, sync.err);
    const back = join(tempDir(), "back.db");
    const copy = await runCli(["copy", url, back, "--origin", "o1"]);
    assert.equal(copy.code, 0, copy.err);
    assert.deepEqual(await storedMessageTexts(back), await storedMessageTexts(path));
  });

  test("copy to the server and back, and export --db URL then import: the same texts", async () => {
    const path = await fileWithTexts();
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", path, url])).code, 0);
    const back = join(tempDir(), "back.db");
    assert.equal((await runCli(["copy", url, back])).code, 0);
    assert.deepEqual(await storedMessageTexts(back), await storedMessageTexts(path));

    const exported = await runCli(["--db", url, "export", "-"]);
    assert.equal(exported.code, 0, exported.err);
    const lines = join(tempDir(), "export.jsonl");
    writeFileSync(lines, exported.out);
    const imported = join(tempDir(), "imported.db");
    const run = await runCli(["--db", imported, "import", lines]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(await storedMessageTexts(imported), await storedMessageTexts(path));
  });

  test("sync of a file holding -2^63 in integer columns ships every session", async () => {
    const path = await fileWithTexts();
    {
      using raw = await rawOpen(path);
      raw.exec(`UPDATE sessions SET input_tokens = -9223372036854775808;
        UPDATE messages SET token_count = -9223372036854775808`);
    }
    const url = schemaUrl(freshSchema());
    const sync = await runCli(["sync", path, "--to", url, "--origin", "o1"]);
    assert.equal(sync.code, 0, sync.err);
    assert.doesNotMatch(sync.err, /overflow/);
    const back = join(tempDir(), "back.db");
    assert.equal((await runCli(["copy", url, back, "--origin", "o1"])).code, 0);
    using raw = await rawOpen(back, true);
    const counts = raw.prepare("SELECT DISTINCT token_count AS n FROM messages").all();
    assert.deepEqual(counts.map((row) => BigInt(row.n as number | bigint)), [-(2n ** 63n)]);
  });
});
