/**
 * A session whose `source`, or a message whose `role`, is a BLOB (Python's
 * sqlite3 stores `bytes` so) goes through export → import and `copy`
 * byte for byte. Export writes such a column as `null` with its bytes under
 * `hermes_state_bytes`, and import refused the record ("source must be a
 * string: current value is null"): export said 43 sessions, import 42.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, v11Copy } from "./_cli_io.ts";
import { rawOpen, tempDir } from "./_helpers.ts";

/** The types and bytes of session `bs` and its message, in `path`. */
async function stored(path: string): Promise<unknown> {
  using raw = await rawOpen(path, true);
  return raw.prepare(
    `SELECT typeof(s.source) AS source_type, hex(s.source) AS source,
            typeof(m.role) AS role_type, hex(m.role) AS role, m.content AS content
       FROM sessions s JOIN messages m ON m.session_id = s.id WHERE s.id = 'bs'`,
  ).get();
}

test("a BLOB source and a BLOB role survive export → import and copy, as BLOBs", async () => {
  const path = v11Copy();
  {
    using raw = await rawOpen(path);
    raw.exec(`
      INSERT INTO sessions (id, source, started_at) VALUES ('bs', CAST('cli' AS BLOB), 1777400000);
      INSERT INTO messages (session_id, role, content, timestamp)
        VALUES ('bs', CAST('user' AS BLOB), 'hello', 1777400001);
    `);
  }
  const original = await stored(path);
  assert.deepEqual(original, {
    source_type: "blob",
    source: "636C69",
    role_type: "blob",
    role: "75736572",
    content: "hello",
  });
  const dir = tempDir();
  const exported = join(dir, "all.jsonl");
  assert.equal((await runCli(["--db", path, "export", exported])).code, 0);
  const fresh = join(dir, "imported.db");
  const imported = await runCli(["--db", fresh, "import", exported]);
  assert.equal(imported.code, 0, imported.err);
  assert.deepEqual(await stored(fresh), original);
  const copied = join(dir, "copied.db");
  const copy = await runCli(["copy", path, copied]);
  assert.equal(copy.code, 0, copy.err);
  assert.deepEqual(await stored(copied), original);
});
