/**
 * The doctor/backup/recover kit's leftovers: a 0-byte file given to
 * `backup`, a file cut mid-way given to `recover`, integers beyond 2^53,
 * zero and negative ids, and text that is not valid UTF-8.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { copyFixture, rawOpen, tempDir } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { recoverDatabase } from "../../lib/health/recover.ts";

describe("backup of a 0-byte file", () => {
  test("backup of a 0-byte file says it is empty and not a Hermes database, exits 1, and leaves it untouched", async () => {
    const dir = tempDir();
    const source = join(dir, "state.db");
    writeFileSync(source, "");
    const mtime = statSync(source).mtimeMs;
    const run = await runCli(["--db", source, "backup", join(dir, "copy.db")]);
    assert.equal(run.code, 1, run.out);
    assert.equal(run.out, "");
    assert.match(
      run.err,
      /the file is empty \(0 bytes\), not a Hermes database; there is nothing to back up/,
    );
    assert.doesNotMatch(run.err, /no such table/);
    assert.equal(statSync(source).size, 0);
    assert.equal(statSync(source).mtimeMs, mtime);
    assert.deepEqual(readdirSync(dir), ["state.db"]);
  });

  test("backup of another application's SQLite file names it as not a Hermes state.db, and writes nothing", async () => {
    const dir = tempDir();
    const source = join(dir, "other.db");
    const raw = await rawOpen(source);
    raw.exec("CREATE TABLE notes (x)");
    raw.close();
    const before = readFileSync(source);
    const run = await runCli(["--db", source, "backup", join(dir, "copy.db")]);
    assert.equal(run.code, 1, run.out);
    assert.match(run.err, /not a Hermes state\.db \(no sessions table\)/);
    assert.deepEqual(readFileSync(source), before);
    assert.deepEqual(readdirSync(dir), ["other.db"]);
  });
});

/** Every value of `sql`'s rows as SQLite prints it (`quote()`): exact integers, text bytes. */
async function quoted(path: string, sql: string): Promise<string[]> {
  const db = await rawOpen(path, true);
  try {
    return db.prepare(sql).all().map((row) => String(Object.values(row)[0]));
  } finally {
    db.close();
  }
}

describe("recover of a file cut mid-way", () => {
  test("recover of hermes-v11.db cut to 60% says how many sessions were lost cannot be known, and exits 1", async () => {
    const source = copyFixture("hermes-v11.db");
    truncateSync(source, Math.floor(statSync(source).size * 0.6));
    const dest = join(tempDir(), "new.db");
    const run = await runCli(["recover", source, dest]);
    assert.equal(run.code, 1, run.err);
    // 42 sessions in the file, fewer recovered: the report may not pass over the others.
    const kept = await quoted(dest, "SELECT count(*) FROM sessions WHERE source != 'unknown'");
    assert.ok(Number(kept[0]) < 42, `${kept[0]} sessions kept`);
    assert.match(
      run.out,
      /Some rows may be lost: how many sessions and meta keys the file held cannot be known \(the file is \d+ pages shorter than its header says\)/,
    );
    assert.doesNotMatch(run.out, /Nothing was lost/);
    const json = JSON.parse((await runCli(["--json", "recover", "--force", source, dest])).out);
    assert.deepEqual(json.loss_unknown_in, ["sessions", "state_meta"]);
    assert.equal(json.loss_unknown, true);
  });
});

describe("recover keeps every value as it was", () => {
  /**
   * A copy of hermes-v11.db with rows a raw SQL write left: big integers, odd ids, odd text;
   * and `filler` messages more (past a few thousand, the rows read wait in a scratch file).
   */
  async function oddRows(filler = 0): Promise<string> {
    const path = copyFixture("hermes-v11.db");
    const db = await rawOpen(path);
    try {
      const session = String(db.prepare("SELECT id FROM sessions ORDER BY id LIMIT 1").get()?.id);
      db.exec(`
        INSERT INTO messages (id, session_id, role, content, timestamp, token_count) VALUES
          (9007199254740993, '${session}', 'user', 'big one', 1, 9007199254740993),
          (9007199254740992, '${session}', 'user', 'big two', 1, -9007199254740993),
          (-5, '${session}', 'user', 'negative id', 1, 1),
          (0, '${session}', 'user', 'zero id', 1, 1);
        INSERT INTO messages (session_id, role, content, timestamp) VALUES
          ('${session}', 'user', CAST(X'41FF42' AS TEXT), 1),
          ('${session}', 'user', X'0102', 1);
        UPDATE sessions SET input_tokens = 9007199254740995, title = CAST(X'54C3' AS TEXT)
          WHERE id = '${session}';
        INSERT INTO state_meta (key, value) VALUES ('odd', CAST(X'FE00FF' AS TEXT));
        WITH RECURSIVE n(i) AS (SELECT 1 WHERE ${filler} > 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${filler})
        INSERT INTO messages (session_id, role, content, timestamp)
          SELECT '${session}', 'user', 'filler ' || i, 2 FROM n;
      `);
    } finally {
      db.close();
    }
    return path;
  }

  const MESSAGES =
    "SELECT quote(id) || ' ' || quote(token_count) || ' ' || typeof(content) || ' ' || hex(content) FROM messages ORDER BY id";
  const SESSIONS =
    "SELECT quote(id) || ' ' || quote(input_tokens) || ' ' || hex(title) FROM sessions ORDER BY id";
  const META =
    "SELECT key || ' ' || hex(value) || ' ' || typeof(value) FROM state_meta ORDER BY key";

  for (const filler of [0, 5_000]) {
    test(`recover carries integers beyond 2^53, zero and negative ids, invalid UTF-8 and BLOBs exactly (${filler} messages more)`, async () => {
      const source = await oddRows(filler);
      const dest = join(tempDir(), "new.db");
      const run = await runCli(["recover", source, dest]);
      assert.equal(run.code, 0, run.out + run.err);
      assert.deepEqual(readdirSync(dirname(dest)), ["new.db"], "no scratch file is left");
      const messages = (203 + filler).toLocaleString("en-US");
      assert.match(
        run.out,
        new RegExp(`^Recovered 42 sessions and ${messages} messages \\(4 meta keys\\)`),
      );
      for (const sql of [MESSAGES, SESSIONS, META]) {
        assert.deepEqual(await quoted(dest, sql), await quoted(source, sql));
      }
      // The id sequence is the source's, exact: the next message takes the id after it.
      const sequence = "SELECT quote(seq) FROM sqlite_sequence WHERE name = 'messages'";
      assert.deepEqual(await quoted(dest, sequence), await quoted(source, sequence));
      if (filler === 0) assert.deepEqual(await quoted(dest, sequence), ["9007199254740995"]);
    });
  }

  test("recover's scratch file of the rows read is private to its user while it exists, and removed", async () => {
    const source = await oddRows(5_000);
    const dest = join(tempDir(), "new.db");
    const seen: string[] = [];
    await recoverDatabase(source, dest, {
      onStage: (stage) => {
        if (stage !== "writing the new file") return;
        for (const name of readdirSync(dirname(dest))) {
          if (!name.endsWith(".recover-rows")) continue;
          seen.push(
            `${name.replace(/\.\d+\./, ".PID.")} ${
              (statSync(join(dirname(dest), name)).mode & 0o777).toString(8)
            }`,
          );
        }
      },
    });
    assert.deepEqual(seen, [".new.db.PID.recover-rows 600"]);
    assert.deepEqual(readdirSync(dirname(dest)), ["new.db"]);
  });

  test("recover from the pages (header page zeroed) keeps invalid UTF-8 and exact ids, and loses no such row", async () => {
    const source = await oddRows();
    const fd = openSync(source, "r+");
    writeSync(fd, new Uint8Array(4096), 0, 4096, 0);
    closeSync(fd);
    const dest = join(tempDir(), "new.db");
    const run = await runCli(["--json", "recover", source, dest]);
    const result = JSON.parse(run.out);
    assert.equal(result.schema_readable, false);
    const pristine = await oddRows();
    assert.deepEqual(await quoted(dest, MESSAGES), await quoted(pristine, MESSAGES));
    assert.deepEqual(await quoted(dest, SESSIONS), await quoted(pristine, SESSIONS));
    assert.deepEqual(await quoted(dest, META), await quoted(pristine, META));
  });
});

describe("recover of rows that share a key", () => {
  test("recover of two sessions with one id (a file without the unique key) keeps the first, reports the other, exits 1", async () => {
    const dir = tempDir();
    const source = join(dir, "state.db");
    const db = await rawOpen(source);
    try {
      db.exec(`
        CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL);
        CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT,
          content TEXT, timestamp REAL);
        INSERT INTO sessions VALUES ('a', 'cli', 1), ('a', 'telegram', 2), ('b', 'cli', 3);
        INSERT INTO messages (session_id, role, content, timestamp) VALUES ('a', 'user', 'hi', 1);
      `);
    } finally {
      db.close();
    }
    const dest = join(dir, "new.db");
    const run = await runCli(["recover", source, dest]);
    assert.equal(run.code, 1, run.out + run.err);
    assert.match(run.out, /^Recovered 2 sessions and 1 messages/);
    assert.match(
      run.out,
      /Rows left out: 1 sessions had the id of another row \(the first was kept\)/,
    );
    assert.doesNotMatch(run.out, /Nothing was lost/);
    assert.deepEqual(await quoted(dest, "SELECT id || ' ' || source FROM sessions ORDER BY id"), [
      "a cli",
      "b cli",
    ]);
    const json = JSON.parse((await runCli(["--json", "recover", "--force", source, dest])).out);
    assert.deepEqual(json.duplicates, { sessions: 1, messages: 0, state_meta: 0 });
  });
});
