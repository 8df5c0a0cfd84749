import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import process from "node:process";
import { doctor } from "../../lib/health/doctor.ts";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { mulberry32 } from "../_random.ts";
import { copyFixture, FIXTURES, rawOpen, runPython, tempDir } from "../_helpers.ts";
import { besideWalOf, emptyFileWithWal, fileAndWal, liveWalOf } from "./_damaged_files.ts";
import { runCli } from "../_cli_io.ts";
import { buildLargeFile } from "../_large_file.ts";
import { caseSkip, stackEnginesSkip } from "../reliability/_runtimes.ts";

const PAGE = 4096;
const MESSAGES = 50_000;

/** Every message of a file: id → [session, content]. */
async function messagesOf(path: string): Promise<Map<number, [string, string]>> {
  const db = await rawOpen(path, true);
  try {
    const out = new Map<number, [string, string]>();
    for (const row of db.prepare("SELECT id, session_id, content FROM messages").iterate()) {
      out.set(Number(row.id), [String(row.session_id), String(row.content)]);
    }
    return out;
  } finally {
    db.close();
  }
}

/** The pages of a table by kind, from Python's sqlite3 `dbstat`. */
function pagesOf(path: string, table: string): { leaf: number[]; internal: number[] } {
  const stdout = runPython(
    [
      "import json, sqlite3, sys",
      "c = sqlite3.connect(sys.argv[1])",
      "rows = c.execute('SELECT pageno, pagetype FROM dbstat WHERE name = ?', (sys.argv[2],)).fetchall()",
      "print(json.dumps(rows))",
    ],
    path,
    table,
  );
  const rows = JSON.parse(stdout) as [number, string][];
  return {
    leaf: rows.filter(([, type]) => type === "leaf").map(([page]) => page),
    internal: rows.filter(([, type]) => type === "internal").map(([page]) => page),
  };
}

/** Ids of the messages whose text (`m<i> …`) lies on one of `pages` of the original bytes. */
function messagesOnPages(bytes: Uint8Array, pages: readonly number[]): Set<number> {
  const found = new Set<number>();
  const text = new TextDecoder("latin1");
  for (const page of pages) {
    const chunk = text.decode(bytes.subarray((page - 1) * PAGE, page * PAGE));
    for (const match of chunk.matchAll(/m(\d+) /g)) found.add(Number(match[1]));
  }
  return found;
}

function overwrite(path: string, pages: readonly number[], random: () => number): void {
  const fd = openSync(path, "r+");
  try {
    for (const page of pages) {
      const junk = new Uint8Array(PAGE).map(() => Math.floor(random() * 256));
      writeSync(fd, junk, 0, PAGE, (page - 1) * PAGE);
    }
  } finally {
    closeSync(fd);
  }
}

/** `row` restricted to the keys of `like` (the new file has every v11 column; an old source fewer). */
function keysOf<T extends object>(row: T | undefined, like: T): T {
  const values = (row ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.keys(like).map((key) => [key, values[key]])) as T;
}

async function assertPassesDoctor(path: string): Promise<void> {
  const report = await doctor(path, { full: true });
  assert.deepEqual(
    report.checks.filter((c) => c.status !== "ok").map((c) => `${c.name}: ${c.summary}`),
    [],
  );
}

describe("recoverDatabase() on fixtures", () => {
  for (const name of ["hermes-v11.db", "hermes-v6.db", "hermes-v21.db"]) {
    test(`recoverDatabase() copies every session, message and meta key of ${name}, and the copy passes doctor`, async () => {
      const source = copyFixture(name);
      const dest = join(tempDir(), "new.db");
      const result = await recoverDatabase(source, dest);
      assert.deepEqual(result.lost, []);
      assert.equal(result.placeholderSessions, 0);
      using a = await SessionDB.open({ path: source, readonly: true });
      using b = await SessionDB.open({ path: dest, readonly: true });
      assert.equal(result.sessions, a.sessionCount());
      assert.equal(result.messages, a.messageCount());
      for (const { id } of a.searchSessions({ limit: 1000 })) {
        // The new file has every v11 column; compare those the source has.
        assert.deepEqual(keysOf(b.getSession(id), a.getSession(id)!), a.getSession(id));
        const messages = a.getMessages(id);
        assert.deepEqual(b.getMessages(id).map((m, i) => keysOf(m, messages[i])), messages);
      }
      assert.equal(statSync(dest).mode & 0o777, 0o600);
      await assertPassesDoctor(dest);
    });
  }

  test("recoverDatabase() refuses to write over the source or an existing file", async () => {
    const source = copyFixture("hermes-v11.db");
    await assert.rejects(recoverDatabase(source, source), { name: "RecoverError" });
    await assert.rejects(recoverDatabase(source, `${source}-wal`), { name: "RecoverError" });
    const dest = join(tempDir(), "new.db");
    await recoverDatabase(source, dest);
    await assert.rejects(recoverDatabase(source, dest), /exists \(give --force/);
    assert.equal((await recoverDatabase(source, dest, { force: true })).messages, 197);
  });
});

// The pages are read by our own code, the same on every runtime: under one of them (`caseSkip`).
describe(`recoverDatabase() on a ${MESSAGES}-message file damaged on purpose`, {
  skip: caseSkip(1),
}, () => {
  let base = "";
  let original = new Map<number, [string, string]>();
  let bytes = new Uint8Array();
  let pages: { leaf: number[]; internal: number[] } = { leaf: [], internal: [] };
  before(async () => {
    base = join(tempDir(), "base.db");
    await buildLargeFile(base, { messages: MESSAGES });
    original = await messagesOf(base);
    bytes = readFileSync(base);
    pages = pagesOf(base, "messages");
  }, { timeout: 120_000 });

  async function recoverAndCompare(damaged: string, lostPages: readonly number[]) {
    const dest = join(tempDir(), "recovered.db");
    const result = await recoverDatabase(damaged, dest);
    const recovered = await messagesOf(dest);
    // Only the messages table's own leaf pages hold its rows (the FTS pages repeat the text).
    const leaves = new Set(pages.leaf);
    const mayLose = messagesOnPages(bytes, lostPages.filter((page) => leaves.has(page)));
    const missing = [...original.keys()].filter((id) => !recovered.has(id));
    assert.deepEqual(
      missing.filter((id) => !mayLose.has(id)),
      [],
      "a message on an intact page was lost",
    );
    assert.deepEqual(new Set(missing), mayLose, "lost: exactly the messages on damaged leaf pages");
    for (const [id, row] of recovered) {
      assert.deepEqual(row, original.get(id), `message ${id} differs`);
    }
    await assertPassesDoctor(dest);
    process.stderr.write(
      `recover: ${recovered.size} of ${original.size} messages back (${result.fromPages.messages} ` +
        `read from pages), ${missing.length} lost of ${mayLose.size} on damaged pages, ` +
        `${result.lost.length} lost ranges; the new file passes doctor --full\n`,
    );
    return { result, missing, recovered };
  }

  test(
    "recoverDatabase() keeps every message of the intact pages when random pages are overwritten (6 message leaves, an interior page, 5 others)",
    { timeout: 120_000 },
    async () => {
      const random = mulberry32(20260601);
      const pick = (list: readonly number[]) => list[Math.floor(random() * list.length)];
      const damaged = new Set<number>();
      while (damaged.size < 6) damaged.add(pick(pages.leaf));
      assert.ok(pages.internal.length > 0, "the messages table has interior pages");
      damaged.add(pick(pages.internal));
      const total = bytes.length / PAGE;
      while (damaged.size < 12) damaged.add(2 + Math.floor(random() * (total - 1)));
      const path = join(tempDir(), "state.db");
      copyFileSync(base, path);
      overwrite(path, [...damaged], random);
      const { result, missing } = await recoverAndCompare(path, [...damaged]);
      assert.ok(missing.length > 0 && missing.length < 1000, `${missing.length} messages lost`);
      assert.ok(result.fromPages.messages > 0, "no row came from below the damaged interior page");
      assert.ok(result.lost.some((range) => range.table === "messages"));
      const lostIds = result.lost.filter((r) => r.table === "messages")
        .reduce((n, r) => n + r.to - r.from + 1, 0);
      assert.equal(lostIds, missing.length);
    },
  );

  test(
    "recoverDatabase() keeps every message before a truncated tail",
    { timeout: 120_000 },
    async () => {
      const cut = pages.leaf.slice().sort((a, b) => a - b)[Math.floor(pages.leaf.length / 2)];
      const path = join(tempDir(), "state.db");
      copyFileSync(base, path);
      truncateSync(path, (cut - 1) * PAGE + 1234);
      const total = bytes.length / PAGE;
      const gone = Array.from({ length: total - cut + 1 }, (_, i) => cut + i);
      const { missing, result } = await recoverAndCompare(path, gone);
      assert.ok(missing.length > 1000, `${missing.length} messages lost`);
      assert.equal(result.messages, MESSAGES - missing.length);
      const lostIds = result.lost.filter((r) => r.table === "messages")
        .flatMap((r) => Array.from({ length: r.to - r.from + 1 }, (_, i) => r.from + i));
      assert.deepEqual(lostIds, missing.sort((a, b) => a - b));
    },
  );

  test("recoverDatabase() reads every message from the pages when the header page is zeroed", {
    timeout: 120_000,
  }, async () => {
    const path = join(tempDir(), "state.db");
    copyFileSync(base, path);
    const fd = openSync(path, "r+");
    writeSync(fd, new Uint8Array(PAGE), 0, PAGE, 0);
    closeSync(fd);
    const { result, missing } = await recoverAndCompare(path, [1]);
    assert.equal(result.schemaReadable, false);
    assert.deepEqual(missing, []);
    assert.equal(result.messages, MESSAGES);
    assert.equal(result.sessions, MESSAGES / 50);
  });
});

/** Every session (id, source, started_at, parent, title) and message of a file, read by SQLite. */
async function contentOf(path: string): Promise<{ sessions: unknown[]; messages: unknown[] }> {
  const db = await rawOpen(path, true);
  try {
    return {
      sessions: db.prepare(
        "SELECT id, source, started_at, parent_session_id, title FROM sessions ORDER BY id",
      ).all(),
      messages: db.prepare(
        "SELECT id, session_id, role, content, tool_calls, timestamp FROM messages ORDER BY id",
      ).all(),
    };
  } finally {
    db.close();
  }
}

describe("recoverDatabase() when the header page is gone", () => {
  for (const name of ["hermes-v6.db", "hermes-v10-external.db", "hermes-v21.db", "hermes-v11.db"]) {
    for (const bytes of [100, PAGE]) {
      test(`recoverDatabase() reads every session and message of ${name} from the pages when its first ${bytes} bytes are zeroed`, async () => {
        const path = copyFixture(name);
        const fd = openSync(path, "r+");
        writeSync(fd, new Uint8Array(bytes), 0, bytes, 0);
        closeSync(fd);
        const dest = join(tempDir(), "new.db");
        const result = await recoverDatabase(path, dest);
        assert.equal(result.schemaReadable, false);
        const want = await contentOf(copyFixture(name));
        const got = await contentOf(dest);
        assert.deepEqual(got.messages, want.messages);
        assert.deepEqual(got.sessions, want.sessions);
        assert.equal(result.placeholderSessions, 0);
        // Page 1 holds only the schema: every other page of the external-content file parses
        // (no free page), so the loss is counted (none). The others have free pages, which
        // cannot be told from damaged ones without the header.
        if (name === "hermes-v10-external.db") assert.deepEqual(result.lossUnknownIn, []);
        else assert.equal(result.lossUnknown, true);
      });
    }
  }
});

describe("recoverDatabase()'s stages", () => {
  test("onStage names each stage as it begins; the pages are read again only when SQLite missed rows", async () => {
    const stagesOf = async (path: string) => {
      const stages: string[] = [];
      await recoverDatabase(path, join(tempDir(), "new.db"), { onStage: (s) => stages.push(s) });
      return stages;
    };
    assert.deepEqual(await stagesOf(copyFixture("hermes-v11.db")), [
      "reading pages",
      "reading rows",
      "writing the new file",
      "building the search indexes",
    ]);
    const zeroed = copyFixture("hermes-v11.db");
    const fd = openSync(zeroed, "r+");
    writeSync(fd, new Uint8Array(PAGE), 0, PAGE, 0);
    closeSync(fd);
    assert.deepEqual(await stagesOf(zeroed), [
      "reading pages",
      "reading rows",
      "reading missed rows from pages",
      "writing the new file",
      "building the search indexes",
    ]);
  });
});

describe("recoverDatabase() on what is not a state.db", () => {
  const cases: Array<[string, (path: string) => void, RegExp]> = [
    ["a text file", (p) => writeFileSync(p, "hello, not sqlite\n".repeat(1000)), /not a SQLite/],
    [
      "a gzip file",
      (p) => writeFileSync(p, gzipSync(readFileSync(join(FIXTURES, "hermes-v11.db")))),
      /not a SQLite/,
    ],
    [
      "an empty file without -wal",
      (p) => writeFileSync(p, ""),
      /the file is empty and has no -wal/,
    ],
    [
      "a SQLite file of another application",
      (p) => {
        const run = spawnSync("python3", [
          "-c",
          "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE t (x)'); c.commit()",
          p,
        ]);
        assert.equal(run.status, 0, String(run.stderr));
      },
      /not a Hermes state.db/,
    ],
    ["a folder", (p) => mkdirSync(p), /it is a folder/],
  ];
  for (const [what, make, message] of cases) {
    test(`recoverDatabase() refuses ${what} with a RecoverError and writes nothing`, async () => {
      const dir = tempDir();
      const source = join(dir, "state.db");
      make(source);
      const dest = join(dir, "new.db");
      await assert.rejects(recoverDatabase(source, dest), { name: "RecoverError", message });
      assert.equal(existsSync(dest), false);
      assert.deepEqual(readdirSync(dir).filter((f) => f !== "state.db"), []);
    });
  }

  test("recoverDatabase() refuses a folder as dest before salvaging, with force or without", async () => {
    const source = copyFixture("hermes-v11.db");
    const dest = join(tempDir(), "folder");
    mkdirSync(dest);
    // Without force it said "it exists (give --force to replace it)", which would not help.
    for (const force of [true, false]) {
      await assert.rejects(recoverDatabase(source, dest, { force }), {
        name: "RecoverError",
        message: `Cannot recover into ${dest}: it is a folder, not a file`,
      });
    }
    assert.deepEqual(readdirSync(dest), []);
  });
});

describe("recoverDatabase() on a 0-byte file whose -wal holds commits", () => {
  test("recoverDatabase() salvages every row from the -wal's committed frames and leaves the -wal as it was", async () => {
    const source = emptyFileWithWal();
    const before = fileAndWal(source);
    const dest = join(tempDir(), "new.db");
    const result = await recoverDatabase(source, dest);
    assert.deepEqual(fileAndWal(source), before, "the file or its -wal changed");
    assert.equal(result.fromWal, true);
    assert.equal(result.sessions, 42);
    assert.equal(result.messages, 197);
    const want = await contentOf(copyFixture("hermes-v11.db"));
    assert.deepEqual(await contentOf(dest), want);
    await assertPassesDoctor(dest);
    // Through a symbolic link the -wal is the one beside the file the link leads to.
    const link = join(tempDir(), "link.db");
    symlinkSync(source, link);
    const linked = await recoverDatabase(link, join(tempDir(), "new.db"));
    assert.equal(linked.fromWal, true);
    assert.equal(linked.messages, 197);
    assert.deepEqual(fileAndWal(source), before);
  });
});

test(
  "recoverDatabase() reads a file of 130,000 messages (no stack overflow), and every one comes back",
  // Under Deno and Bun: V8's stack and JavaScriptCore's (Node's is V8's too).
  { timeout: 180_000, skip: stackEnginesSkip() },
  async () => {
    const path = join(tempDir(), "state.db");
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
    }
    {
      using raw = await rawOpen(path);
      raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 130000)
      INSERT INTO messages (session_id, role, content, timestamp) SELECT 's', 'user', 'm' || i, i FROM n`);
      raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    const result = await recoverDatabase(path, join(tempDir(), "new.db"));
    assert.equal(result.messages, 130_000);
    assert.deepEqual(result.lost, []);
  },
);

test("recoverDatabase() removes the temporary files a killed recover left beside dest", async () => {
  const source = copyFixture("hermes-v11.db");
  const dir = tempDir();
  const dead = spawnSync("true").pid!;
  const stale = [".new.db.DEAD.recover", ".new.db.DEAD.recover-journal", ".new.db.DEAD.recover-wal"]
    .map((name) => join(dir, name.replace("DEAD", String(dead))));
  for (const file of stale) writeFileSync(file, "left behind");
  await recoverDatabase(source, join(dir, "new.db"));
  assert.deepEqual(readdirSync(dir), ["new.db"]);
});

/** Per column of `table`: its declaration and how many values of each storage class it holds. */
async function columnsOf(path: string, table: string): Promise<Map<string, string>> {
  using db = await rawOpen(path, true);
  const out = new Map<string, string>();
  for (const column of db.prepare(`SELECT * FROM pragma_table_info('${table}')`).all()) {
    const name = String(column.name);
    const classes = db.prepare(
      `SELECT group_concat(kind || ' ' || n) AS classes FROM
       (SELECT typeof("${name}") AS kind, count(*) AS n FROM ${table} GROUP BY 1 ORDER BY 1)`,
    ).get()?.classes;
    out.set(name, `${column.type} ${column.notnull} ${column.dflt_value} | ${classes}`);
  }
  return out;
}

describe("recoverDatabase() keeps what the source said of its rows", () => {
  test("recoverDatabase() of a v21 file keeps the extra columns' declarations and every value's storage class", async () => {
    for (
      const name of ["hermes-v21.db", "hermes-v11.db", "hermes-v6.db", "hermes-v10-external.db"]
    ) {
      const source = copyFixture(name);
      const dest = join(tempDir(), "new.db");
      await recoverDatabase(source, dest);
      for (const table of ["sessions", "messages"]) {
        const want = await columnsOf(source, table);
        const got = await columnsOf(dest, table);
        for (const [column, described] of want) {
          // Columns v11 has keep v11's declaration; the storage class of every value is kept.
          const [declaration, classes] = described.split(" | ");
          const [gotDeclaration, gotClasses] = (got.get(column) ?? "").split(" | ");
          assert.equal(gotClasses, classes, `${name} ${table}.${column}`);
          if (name === "hermes-v21.db") {
            assert.equal(
              gotDeclaration,
              declaration,
              `${table}.${column}`,
            );
          }
        }
      }
    }
  });

  test("recoverDatabase() of a cut file starts the message ids past every id known to have existed", async () => {
    const path = join(tempDir(), "state.db");
    {
      using db = await SessionDB.open({ path });
      db.createSession("s", "cli");
    }
    {
      using raw = await rawOpen(path);
      raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
      INSERT INTO messages (session_id, role, content, timestamp)
      SELECT 's', 'user', 'm' || i || ' ' || hex(randomblob(200)), i FROM n`);
      raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    truncateSync(path, Math.floor(statSync(path).size * 0.6));
    const dest = join(tempDir(), "new.db");
    const result = await recoverDatabase(path, dest);
    const lostMessages = result.lost.filter((range) => range.table === "messages");
    assert.equal(lostMessages.at(-1)?.to, 4000);
    assert.equal(result.messageSequence, 4000);
    {
      using db = await SessionDB.open({ path: dest });
      db.appendMessage("s", { role: "user", content: "after" });
      const ids = db.getMessages("s").map((m) => Number(m.id));
      assert.equal(Math.max(...ids), 4001, "a lost message's id was given again");
    }
  });

  test("recoverDatabase() renames a second session of one title and reports it", async () => {
    const source = copyFixture("hermes-v11.db");
    {
      using raw = await rawOpen(source);
      raw.exec("DROP INDEX idx_sessions_title_unique");
      raw.exec(
        "UPDATE sessions SET title = 'notes' WHERE id IN (SELECT id FROM sessions ORDER BY id LIMIT 3)",
      );
      raw.exec(
        "UPDATE sessions SET title = 'notes #2' WHERE id = (SELECT id FROM sessions ORDER BY id LIMIT 1 OFFSET 3)",
      );
      raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    const dest = join(tempDir(), "new.db");
    const result = await recoverDatabase(source, dest);
    assert.deepEqual(result.retitled.map((r) => [r.from, r.to]), [["notes", "notes #3"], [
      "notes",
      "notes #4",
    ]]);
    using db = await rawOpen(dest, true);
    const titles = db.prepare("SELECT title FROM sessions WHERE title LIKE 'notes%' ORDER BY title")
      .all();
    assert.deepEqual(titles.map((r) => r.title), ["notes", "notes #2", "notes #3", "notes #4"]);
    const run = await runCli(["recover", source, join(tempDir(), "cli.db")]);
    assert.match(
      run.out,
      /2 sessions had a title another session held; they were renamed:\n.*"notes" → "notes #3"/,
    );
  });
});

describe("recoverDatabase() beside another database's -wal", () => {
  test("recoverDatabase() reads the file alone, says the -wal was left out, and never says nothing was lost", async () => {
    const other = copyFixture("hermes-v11.db");
    liveWalOf(other, "INSERT INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)");
    const source = copyFixture("hermes-v11.db");
    {
      using raw = await rawOpen(source);
      raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
      INSERT INTO messages (session_id, role, content, timestamp)
      SELECT (SELECT id FROM sessions LIMIT 1), 'user', hex(randomblob(300)), i FROM n`);
      raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    besideWalOf(source, other);
    const before = fileAndWal(source);
    const result = await recoverDatabase(source, join(tempDir(), "new.db"));
    assert.match(result.foreignWal ?? "", /-wal\) belongs to another database/);
    assert.equal(result.messages, 197 + 3000);
    assert.equal(result.sessions, 42);
    assert.deepEqual(result.lost, []);
    assert.deepEqual(fileAndWal(source), before, "the file or its -wal changed");
    const run = await runCli(["recover", source, join(tempDir(), "cli.db")]);
    assert.equal(run.code, 1);
    assert.match(run.out, /The -wal was left out: .*belongs to another database/);
    assert.doesNotMatch(run.out, /Nothing was lost/);
  });
});

describe("a -wal that spoils a file sound alone (its headers fit: a newer schema cookie, page 1 written)", () => {
  /** A new file of `sessions` × 25 messages, and the live -wal of a migrated fixture beside it. */
  async function spoiled(sessions: number): Promise<string> {
    const source = join(tempDir(), "state.db");
    {
      using db = await SessionDB.open({ path: source });
      for (let s = 0; s < sessions; s++) {
        db.createSession(`own_${s}`, "cli");
        db.appendMessages(
          `own_${s}`,
          Array.from(
            { length: 25 },
            (_, m) => ({ role: "user", content: `own ${s} ${m} ${"o".repeat(300)}` }),
          ),
        );
      }
    }
    const other = copyFixture("hermes-v11.db");
    // Its schema was changed more often than a new file's, and this commit grows it (page 1).
    liveWalOf(
      other,
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
       INSERT INTO messages (session_id, role, content, timestamp)
       SELECT (SELECT id FROM sessions LIMIT 1), 'user', hex(randomblob(300)), i FROM n`,
    );
    besideWalOf(source, other);
    return source;
  }

  test("doctor() names the -wal, not the file, and recoverDatabase() reads the file alone: every message", async () => {
    const source = await spoiled(40);
    const before = fileAndWal(source);
    const report = await doctor(source);
    const integrity = report.checks.find((check) => check.name === "integrity")!;
    assert.equal(integrity.status, "problem");
    assert.match(integrity.summary, /-wal\) belongs to another database.*the file alone is sound/);
    assert.match(integrity.fix ?? "", /move the -wal away/);
    const result = await recoverDatabase(source, join(tempDir(), "new.db"));
    assert.match(result.foreignWal ?? "", /the file alone is sound/);
    assert.equal(result.sessions, 40);
    assert.equal(result.messages, 40 * 25);
    assert.deepEqual(fileAndWal(source), before, "the file or its -wal changed");
  });
});
