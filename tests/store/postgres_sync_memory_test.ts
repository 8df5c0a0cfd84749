/**
 * The memory a `syncFile()` pass takes is bounded by its byte budget, not by
 * what the file holds: a gateway's file with a session of 150 tool outputs
 * of 2 MB and 100 sessions of two 1 MB ones (500 MB of text) is shipped by
 * a child process whose peak resident set stays a few hundred megabytes
 * above where it started. Read whole and batched by count, the same file
 * took 2 GB more.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { promisify } from "node:util";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { rawOpen, ROOT, tempDbPath } from "../_helpers.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./_pg.ts";

/** Megabytes the pass may add to the child's resident set at its peak. */
const PEAK_ABOVE_START_MB = 900;

/**
 * Writes the file: session `big` with `bigMessages` messages of 2 MB, and
 * `sessions` sessions of two 1 MB messages. The text is one repeated
 * character (quick to write, to index and to compress on the server); the
 * client holds it at its full size all the same.
 */
async function gatewayFile(bigMessages: number, sessions: number): Promise<string> {
  const path = tempDbPath();
  (await SessionDB.open({ path })).close();
  using raw = await rawOpen(path);
  // Indexing megabytes of text in the file's FTS tables is not under test.
  raw.exec("DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_trigram_insert");
  raw.exec("BEGIN");
  const session = raw.prepare("INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)");
  const message = raw.prepare(
    `INSERT INTO messages (session_id, role, content, timestamp)
     VALUES (?, 'tool', ? || printf('%.*c', ?, 'x'), ?)`,
  );
  session.run("big", 1);
  for (let n = 0; n < bigMessages; n++) message.run("big", `output ${n} `, 2 << 20, 1 + n);
  for (let s = 0; s < sessions; s++) {
    session.run(`s${s}`, 2 + s);
    for (let n = 0; n < 2; n++) message.run(`s${s}`, `output ${n} `, 1 << 20, 2 + s + n);
  }
  raw.exec("COMMIT");
  return path;
}

describe("syncFile() memory", {
  skip: PG_SKIP || (process.platform !== "linux" && "reads /proc/self/status (Linux)"),
}, () => {
  test("a pass over 500 MB of large messages peaks a few hundred megabytes above its start", {
    timeout: 120_000,
  }, async () => {
    const file = await gatewayFile(150, 100);
    const child = join(ROOT, "tests", "store", "_sync_memory_child.ts");
    const args = runtimeName() === "deno" ? ["run", "-A", child] : [child];
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...args, file, schemaUrl(freshSchema())],
      { maxBuffer: 1 << 20 },
    );
    const { baselineMb, peakMb, messages } = JSON.parse(stdout);
    assert.equal(messages, 150 + 2 * 100);
    assert.ok(
      peakMb - baselineMb < PEAK_ABOVE_START_MB,
      `peak ${peakMb.toFixed(0)} MB, from ${baselineMb.toFixed(0)} MB at the start`,
    );
  });
});
