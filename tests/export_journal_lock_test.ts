/**
 * `export -` into a reader that pauses (`| less`), on a file in rollback
 * journal mode (`delete`: a copy, a file system without WAL): a read
 * snapshot there is a shared lock, which keeps every writer from
 * committing. The export held each session's snapshot while its chunks
 * were written out, so a gateway's write failed with "database is locked"
 * for as long as the reader paused. A read command takes no write lock and
 * answers while a gateway writes (README); in WAL mode the snapshot is
 * still held, a writer not waiting on it.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { main } from "../lib/cli/main.ts";
import { buildDb, recordingIo } from "./_cli_io.ts";
import { rawOpen, runPython } from "./_helpers.ts";

/** A write of another process, given a second: "ok", or the error it met. */
const WRITER = [
  "import sqlite3, sys",
  "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=1)",
  "try:",
  "    c.execute('BEGIN IMMEDIATE')",
  "    c.execute(\"UPDATE sessions SET title = 'written' WHERE id = 's'\")",
  "    c.execute('COMMIT')",
  "    print('ok')",
  "except Exception as error:",
  "    print(error)",
];

/** A file whose session `s` has 3,000 messages (30 chunks), in journal mode `mode`. */
async function fileIn(mode: "delete" | "wal"): Promise<string> {
  const path = await buildDb((db) => {
    db.createSession("s", "cli");
    db.appendMessages(
      "s",
      Array.from({ length: 3000 }, (_, i) => ({ role: "user", content: `message ${i}` })),
    );
  });
  using raw = await rawOpen(path);
  raw.exec(`PRAGMA journal_mode = ${mode}`);
  return path;
}

/** Exports the file to a standard output that pauses at its first drain, a write tried then. */
async function writeDuringPause(path: string): Promise<string> {
  const io = recordingIo();
  let outcome = "no pause";
  io.drain = () => {
    if (outcome === "no pause") outcome = runPython(WRITER, path).trim();
    return Promise.resolve();
  };
  const code = await main(["--db", path, "export", "-"], io);
  assert.equal(code, 0, io.err);
  assert.equal(io.out.split("\n").length, 2, "the one session, whole");
  return outcome;
}

describe("export - paused midway while a gateway writes", () => {
  test("a rollback-journal file: the write is not locked out", { timeout: 60_000 }, async () => {
    assert.equal(await writeDuringPause(await fileIn("delete")), "ok");
  });

  test("a WAL file: the write is not locked out", { timeout: 60_000 }, async () => {
    assert.equal(await writeDuringPause(await fileIn("wal")), "ok");
  });
});
