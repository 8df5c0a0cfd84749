import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { basename, join } from "node:path";
import { cliArgv, copyFixture, rawOpen, tempDbPath, tempDir, waitUntil } from "./_helpers.ts";
import { buildDb, interruptibleIo, runCli, v11Copy } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";
import { hotJournalOf, indexOutOfStep } from "./health/_damaged_files.ts";
import { copiesOf } from "./_built_once.ts";

describe("doctor", () => {
  test("doctor on the v11 fixture names the trigram condition as a warning and exits 0", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "doctor"]);
    assert.equal(run.code, 0, run.err);
    assert.match(
      run.out,
      /^warning +fts:messages_fts_trigram +the trigram index was written by SQLite 3.40 or older, which indexed 4 messages/m,
    );
    assert.match(run.out, /^ +fix: hermes-state doctor --fix/m);
    assert.match(run.out, /^ok +integrity +quick_check: ok$/m);
    assert.match(run.out, /\nhealthy\n$/);
  });

  test("doctor says on a terminal what it is checking while it runs, then erases the line", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "doctor"], { stderrIsTerminal: true });
    assert.equal(run.code, 0, run.err);
    assert.equal(
      run.err,
      `\r\x1b[KChecking ${path}, 412.0 KiB: every page and both search indexes…\r\x1b[K`,
    );
    const quiet = await runCli(["--db", path, "doctor"]);
    assert.equal(quiet.err, "", "nothing when stderr is not a terminal");
  });

  test("doctor exits 1 on a problem, and doctor --fix --json repairs it and exits 0", async () => {
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      db.appendMessage("s", { role: "user", content: "hello" });
    });
    using db = await rawOpen(path);
    db.exec("UPDATE sessions SET message_count = 5");
    db.close();
    const broken = await runCli(["--db", path, "doctor"]);
    assert.equal(broken.code, 1);
    assert.match(
      broken.out,
      /^problem +counters +1 session has counters that differ from their rows$/m,
    );
    assert.match(broken.out, /\nproblems found\n$/);
    const fixed = await runCli(["--db", path, "--json", "doctor", "--fix"]);
    assert.equal(fixed.code, 0, fixed.err);
    const report = JSON.parse(fixed.out);
    assert.equal(report.healthy, true);
    assert.match(report.sqlite_version, /^3\./); // snake_case keys, as every --json
    assert.equal(typeof report.longest_lock_ms, "number");
    assert.deepEqual(report.repairs.map((r: { name: string }) => r.name), ["counters", "wal"]);
    assert.ok(report.after.every((c: { status: string }) => c.status === "ok"));
  });

  test("doctor --vacuum without --fix is a usage error (exit 2)", async () => {
    const run = await runCli(["--db", v11Copy(), "doctor", "--vacuum"]);
    assert.equal(run.code, 2);
    assert.match(run.err, /--vacuum needs --fix/);
  });

  test("doctor --fix --vacuum reclaims the free pages", async () => {
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      for (let i = 0; i < 300; i++) {
        db.appendMessage("s", { role: "user", content: "x".repeat(2000) });
      }
      db.clearMessages("s");
    });
    const warned = await runCli(["--db", path, "doctor"]);
    assert.match(warned.out, /^warning +free_pages/m);
    const run = await runCli(["--db", path, "--json", "doctor", "--fix", "--vacuum"]);
    assert.equal(run.code, 0, run.err);
    const report = JSON.parse(run.out);
    assert.equal(report.after.find((c: { name: string }) => c.name === "free_pages").status, "ok");
  });

  test("doctor on a missing file says so and exits 1", async () => {
    const path = tempDbPath();
    const run = await runCli(["--db", path, "doctor"]);
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      `hermes-state: No database at ${path} (give --db PATH, or set HERMES_STATE_DB or HERMES_HOME)\n`,
    );
    assert.equal(existsSync(path), false);
  });

  test("doctor on a folder or a named pipe says what it is, as the other commands do", async () => {
    const dir = tempDir();
    for (const args of [["doctor"], ["doctor", "--fix"]]) {
      const run = await runCli(["--db", dir, ...args]);
      assert.equal(run.code, 1);
      assert.equal(run.err, `hermes-state: Cannot open database "${dir}": it is a folder\n`);
    }
    const fifo = join(tempDir(), "state.db");
    execFileSync("mkfifo", [fifo]);
    const run = await runCli(["--db", fifo, "doctor"]);
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      `hermes-state: Cannot open database "${fifo}": it is not a file but a named pipe\n`,
    );
  });

  test("doctor and doctor --fix refuse another application's database, unchanged", async () => {
    const other = tempDbPath();
    const raw = await rawOpen(other);
    raw.exec("CREATE TABLE notes (x)");
    raw.close();
    const before = readFileSync(other);
    for (const args of [["doctor"], ["doctor", "--fix"]]) {
      const run = await runCli(["--db", other, ...args]);
      assert.equal(run.code, 1, run.out);
      assert.equal(run.out, "");
      assert.equal(run.err, `hermes-state: not a Hermes state.db (no sessions table): ${other}\n`);
    }
    assert.deepEqual(readFileSync(other), before);
    assert.equal(existsSync(`${other}-wal`), false);
  });

  test("doctor and doctor --fix on a 0-byte file say it is empty and leave it as it was", async () => {
    const empty = tempDbPath();
    writeFileSync(empty, "");
    const past = new Date("2024-01-02T03:04:05Z");
    utimesSync(empty, past, past);
    for (const args of [["doctor"], ["doctor", "--fix"], ["--json", "doctor"]]) {
      const run = await runCli(["--db", empty, ...args]);
      assert.equal(run.code, 1, run.out);
      assert.equal(run.out, "");
      assert.equal(
        run.err,
        `hermes-state: Cannot open database "${empty}": the file is empty (0 bytes), ` +
          "not a Hermes database; there is nothing to check or repair (it was left as it was)\n",
      );
    }
    const after = statSync(empty);
    assert.equal(after.size, 0);
    assert.equal(after.mtimeMs, past.getTime());
    for (const suffix of ["-wal", "-shm", "-journal"]) {
      assert.equal(existsSync(`${empty}${suffix}`), false, suffix);
    }
  });
});

describe("doctor --fix that stops after its checks", () => {
  /** A file of `messages` messages whose words index is marked stale (so --fix rebuilds it). */
  async function staleFile(messages: number): Promise<string> {
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      db.appendMessages(
        "s",
        Array.from({ length: messages }, (_, i) => ({ role: "user", content: `word${i} docker` })),
      );
    });
    using db = await rawOpen(path);
    db.exec("INSERT INTO state_meta (key, value) VALUES ('fts_stale:messages_fts', 'test')");
    return path;
  }

  test("doctor --fix honours HERMES_STATE_LOCK_TIMEOUT, prints the check report, and says how long it waited", async () => {
    const path = await staleFile(3);
    using holder = await rawOpen(path);
    holder.exec("BEGIN IMMEDIATE");
    const started = performance.now();
    const run = await runCli(["--db", path, "doctor", "--fix"], {
      env: { HERMES_STATE_LOCK_TIMEOUT: "1" },
    });
    const took = performance.now() - started;
    holder.exec("ROLLBACK");
    assert.equal(run.code, 1);
    assert.ok(took < 5000, `${took} ms`);
    assert.match(run.out, /^problem +fts:messages_fts +messages_fts: marked stale/m);
    assert.match(run.out, /Repairs\n {2}none\n/);
    assert.equal(
      run.err,
      `hermes-state: database is locked by another process (waited 1 s): ${path}\n`,
    );
  });

  test("doctor --fix interrupted by Ctrl-C says what was done and left, exits 130, and leaves the index kept current", async () => {
    const path = await staleFile(4000);
    const io = interruptibleIo();
    const run = main(["--db", path, "doctor", "--fix"], io);
    let ended = false;
    run.then(() => ended = true, () => ended = true);
    await waitUntil(() => io.listening || ended, "doctor --fix to listen for Ctrl-C", {
      everyMs: 5,
    });
    assert.ok(io.listening, `doctor --fix ended before it listened for Ctrl-C: ${io.err}`);
    await new Promise((r) => setTimeout(r, 250));
    io.interrupt();
    assert.equal(await run, 130);
    assert.match(io.out, /^problem +fts:messages_fts/m);
    assert.match(
      io.err,
      /^hermes-state doctor: interrupted by SIGINT.*: \d+ repairs finished, the rest left; what is written is consistent: run "hermes-state --db .* doctor --fix" again to finish\n$/,
    );
    {
      using db = await SessionDB.open({ path });
      db.appendMessage("s", { role: "user", content: "after the interruption" });
      assert.equal(db.searchMessages("interruption").length, 1);
    }
    using raw = await rawOpen(path, true);
    assert.equal(
      Number(
        raw.prepare(
          "SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'interruption'",
        ).get()!.n,
      ),
      1,
    );
    const fixed = await runCli(["--db", path, "doctor", "--fix"]);
    assert.equal(fixed.code, 0, fixed.out);
  });
});

describe("backup", () => {
  test("backup DEST writes a verified copy and refuses to overwrite it without --force", async () => {
    const path = v11Copy();
    const dest = join(tempDir(), "copy.db");
    const run = await runCli(["--db", path, "backup", dest]);
    assert.equal(run.code, 0, run.err);
    assert.match(
      run.out,
      /^Backed up .* to .*copy\.db: 42 sessions, 197 messages, .* \(copy, verified\)\.$/m,
    );
    assert.equal(statSync(dest).mode & 0o777, 0o600);
    const again = await runCli(["--db", path, "backup", dest]);
    assert.equal(again.code, 1);
    assert.match(again.err, /already exists \(give --force/);
    const forced = await runCli(["--db", path, "--json", "backup", "--force", "--compress", dest]);
    assert.equal(forced.code, 0, forced.err);
    assert.equal(JSON.parse(forced.out).compressed, true);
    assert.equal(JSON.parse(forced.out).search_indexes_checked, false);
  });

  test("backup --full also runs the search indexes' own checks, and names what they found", async () => {
    const run = await runCli(["--db", v11Copy(), "backup", "--full", join(tempDir(), "copy.db")]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /\(copy, verified with its search indexes\)\.\n/);
    assert.match(
      run.out,
      /\nnote: .*messages_fts_trigram.* \(hermes-state doctor explains it\)\n$/,
    );
  });

  test("backup of a PostgreSQL store names the two ways to copy one, and writes nothing", async () => {
    const dest = join(tempDir(), "copy.db");
    const run = await runCli(["--db", "postgres://nobody:secret@127.0.0.1:1/x", "backup", dest]);
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      "hermes-state: backup copies a SQLite state.db file; for a PostgreSQL store use pg_dump, " +
        "or hermes-state copy URL FILE to write its sessions into a new state.db\n",
    );
    assert.equal(existsSync(dest), false);
  });

  test("backup without DEST is a usage error (exit 2)", async () => {
    const run = await runCli(["--db", v11Copy(), "backup"]);
    assert.equal(run.code, 2);
  });
});

describe("recover", () => {
  test("recover SRC DEST reports what it saved and exits 0 when nothing was lost", async () => {
    const source = v11Copy();
    const dest = join(tempDir(), "new.db");
    const run = await runCli(["recover", source, dest]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /^Recovered 42 sessions and 197 messages \(3 meta keys\) into /);
    assert.match(run.out, /Nothing was lost\./);
    const json = await runCli(["--json", "recover", "--force", source, dest]);
    assert.deepEqual(JSON.parse(json.out).lost, []);
    assert.deepEqual(JSON.parse(json.out).from_pages, { sessions: 0, messages: 0, state_meta: 0 });
    const refused = await runCli(["recover", source, source]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /it is the damaged file itself/);
  });

  test("recover says on a terminal what it recovers while it runs, then erases the line", async () => {
    const source = v11Copy();
    const dest = join(tempDir(), "new.db");
    const run = await runCli(["recover", source, dest], { stderrIsTerminal: true });
    assert.equal(run.code, 0, run.err);
    const recovering = `\r\x1b[KRecovering ${source}, 412.0 KiB`;
    const stages = [
      "reading pages",
      "reading rows",
      "writing the new file",
      "building the search indexes",
    ];
    assert.equal(
      run.err,
      `${recovering}…` + stages.map((stage) => `${recovering}: ${stage}…`).join("") + "\r\x1b[K",
    );
    const refused = await runCli(["recover", source, dest], { stderrIsTerminal: true });
    assert.equal(refused.code, 1);
    const [line, rest] = refused.err.split("\r\x1b[K").slice(1);
    assert.match(line, /^Recovering .*…$/, refused.err);
    assert.match(rest, /^hermes-state: Cannot recover into .*: it exists/, refused.err);
  });

  test('recover of a file that is not SQLite says so and exits 1, never "Nothing was lost"', async () => {
    const dir = tempDir();
    const source = join(dir, "state.db");
    writeFileSync(source, "hello, not sqlite\n".repeat(1000));
    const run = await runCli(["recover", source, join(dir, "new.db")]);
    assert.equal(run.code, 1);
    assert.equal(run.out, "");
    assert.match(run.err, /Cannot recover .*state\.db: it is not a SQLite database/);
    assert.equal(existsSync(join(dir, "new.db")), false);
  });

  test("recover of a file whose header page is gone and whose loss cannot be counted exits 1 and says so", async () => {
    const source = copyFixture("hermes-v10-external.db");
    const fd = openSync(source, "r+");
    writeSync(fd, new Uint8Array(4096), 0, 4096, 0);
    // The sessions page (3) overwritten too: what it held leaves no trace.
    writeSync(fd, new Uint8Array(4096).fill(0xab), 0, 4096, 2 * 4096);
    closeSync(fd);
    const run = await runCli(["recover", source, join(tempDir(), "new.db")]);
    assert.equal(run.code, 1, run.err);
    assert.match(run.out, /^Recovered \d+ sessions and \d+ messages /);
    assert.match(run.out, /Some rows may be lost: how many sessions, messages and meta keys /);
    assert.doesNotMatch(run.out, /Nothing was lost/);
  });

  test("recover of a folder, or --force into a folder, is a clear error", async () => {
    const dir = tempDir();
    const run = await runCli(["recover", dir, join(dir, "new.db")]);
    assert.equal(run.code, 1);
    assert.match(run.err, /Cannot recover .*: it is a folder\n/);
    const into = await runCli(["recover", "--force", v11Copy(), dir]);
    assert.equal(into.code, 1);
    assert.match(into.err, /Cannot recover into .*: it is a folder, not a file/);
  });
});

describe("doctor on a damaged file", () => {
  test("doctor on a file that is not SQLite names it and points at recover", async () => {
    const path = tempDbPath();
    writeFileSync(path, "hello, not sqlite\n".repeat(1000));
    const run = await runCli(["--db", path, "doctor"]);
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      new RegExp(
        `"${path}": file is not a database; .*run hermes-state recover ${path} ${
          path.replace(/\.db$/, "-recovered.db")
        } to salvage`,
      ),
    );
  });
});

describe("doctor on damage only in an index", () => {
  test("doctor names REINDEX as the fix, and doctor --fix rebuilds the index and exits 0", async () => {
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      db.appendMessage("s", { role: "user", content: "hello" });
    });
    indexOutOfStep(
      path,
      "idx_messages_session",
      "CREATE INDEX idx_messages_session ON messages(session_id, timestamp) WHERE 0",
      `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'x', 9);
       UPDATE sessions SET message_count = 2 WHERE id = 's';`,
    );
    const check = await runCli(["--db", path, "doctor"]);
    assert.equal(check.code, 1, check.err);
    assert.match(
      check.out,
      /^problem +integrity +1 index no longer matches its table \(idx_messages_session\); the table data is whole\n +fix: hermes-state doctor --fix \(rebuilds exactly those indexes from their tables: REINDEX\)$/m,
    );
    const fix = await runCli(["--db", path, "doctor", "--fix"]);
    assert.equal(fix.code, 0, fix.out + fix.err);
    assert.doesNotMatch(fix.out, /Nothing repaired/);
    assert.match(
      fix.out,
      /^ {2}integrity: rebuilt idx_messages_session \(REINDEX, one transaction\); integrity_check of their tables: ok/m,
    );
    assert.match(fix.out, /\nhealthy\n$/);
  });
});

describe("doctor's fix line for a damaged file", () => {
  test("names the file itself and a new file beside it, quoted for the shell", async () => {
    const folder = join(tempDir(), "my files");
    mkdirSync(folder);
    const path = join(folder, "state.db");
    copyFileSync(v11Copy(), path);
    let root: number;
    let pageSize: number;
    {
      using raw = await rawOpen(path);
      root = Number(
        raw.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").get()!.rootpage,
      );
      pageSize = Number(raw.prepare("PRAGMA page_size").get()!.page_size);
    }
    // Garbage over the header of the messages table's root page: the file opens, its check fails.
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(40, 0xff), 0, 40, (root - 1) * pageSize + 8);
    closeSync(fd);
    const run = await runCli(["--db", path, "doctor"]);
    assert.equal(run.code, 1, run.err);
    const fixes = run.out.split("\n").filter((line) => line.trim().startsWith("fix:"));
    assert.ok(fixes.length > 0, run.out);
    const dest = join(folder, "state-recovered.db");
    assert.ok(
      fixes[0].includes(
        `hermes-state recover '${path}' '${dest}', then put '${dest}' in its place`,
      ),
      fixes[0],
    );
    assert.ok(fixes.every((line) => !line.includes("state.db new.db")), run.out);
  });
});

/** A file of 3,000 long messages at `path`: its copy and check take long enough to be interrupted. */
async function largeDb(path: string): Promise<void> {
  using db = await SessionDB.open({ path, synchronous: "normal" });
  const text = "docker compose logs and a long answer about volumes ".repeat(40);
  for (let i = 0; i < 1500; i++) {
    db.importSession({
      id: `s${i}`,
      source: "cli",
      started_at: 1000 + i,
      messages: [
        { role: "user", content: text, timestamp: 1000 + i },
        { role: "assistant", content: text, timestamp: 1001 + i },
      ],
    });
  }
}

/** Copies of one {@linkcode largeDb}: each interrupted job gets its own. */
const largeDbCopy = copiesOf(largeDb);

/** Runs the CLI in its own process and sends `signal` once a temporary file appears in `folder`. */
async function interrupt(
  argv: string[],
  folder: string,
  temp: RegExp,
  signal: "SIGINT" | "SIGTERM",
): Promise<{ code: number | string | null; err: string }> {
  const [command, ...args] = cliArgv(argv);
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (chunk) => err += chunk);
  const exited = new Promise<number | string | null>((resolve) =>
    child.on("close", (code, killed) => resolve(code ?? killed))
  );
  const started = Date.now();
  while (!readdirSync(folder).some((name) => temp.test(name))) {
    assert.ok(Date.now() - started < 30_000, `no temporary file appeared: ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  child.kill(signal);
  return { code: await exited, err };
}

/** Runs of an interrupted job, at most: a run that completes first is tried again. */
const ATTEMPTS = 6;

/**
 * Runs `argv` and stops it with `signal` once its temporary file shows, up to
 * six times: on a loaded machine the signal may reach the process only
 * after its last stage, and the job then completes, which is fine too. Every
 * run must leave either nothing or the whole DEST, never a temporary file;
 * one run at least must have been stopped.
 */
async function interruptOnce(
  argvFor: (dest: string) => string[],
  name: string,
  temp: RegExp,
  signal: "SIGINT" | "SIGTERM",
): Promise<void> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const folder = tempDir();
    const dest = join(folder, name);
    const run = await interrupt(argvFor(dest), folder, temp, signal);
    const left = readdirSync(folder);
    if (!run.err.includes(`interrupted by ${signal}`)) {
      assert.deepEqual(
        left,
        [basename(dest)],
        `a run that completed leaves DEST alone: ${run.err}`,
      );
      continue;
    }
    // Deno's node:child_process reports a child it sent a signal to as killed by it.
    if (runtimeName() !== "deno") {
      assert.equal(run.code, signal === "SIGINT" ? 130 : 143, run.err);
    }
    assert.deepEqual(left, [], "neither DEST nor a temporary file is left");
    return;
  }
  assert.fail(`${ATTEMPTS} runs completed before ${signal} reached them`);
}

describe("an interrupted backup or recover", () => {
  const jobs = [
    {
      command: "backup",
      name: "backup.db",
      temp: /\.copy$/,
      argv: (db: string, dest: string) => ["--db", db, "backup", "--full", dest],
    },
    {
      command: "recover",
      name: "new.db",
      temp: /\.recover$/,
      argv: (db: string, dest: string) => ["recover", db, dest],
    },
  ];
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    for (const job of jobs) {
      test(`${job.command} stopped by ${signal} removes its temporary files and writes no DEST`, {
        timeout: 120_000,
      }, async () => {
        const path = await largeDbCopy();
        await interruptOnce((dest) => job.argv(path, dest), job.name, job.temp, signal);
      });
    }
  }
});

describe("a crashed writer's rollback journal", () => {
  test("doctor names it and the way to finish it; doctor --fix plays it back and the file is whole", async () => {
    // The remedy the read commands name must work: the checks' read-only open cannot play it back.
    const path = v11Copy();
    hotJournalOf(path);
    const check = await runCli(["--db", path, "doctor"]);
    assert.equal(check.code, 1);
    assert.match(check.err, /left its rollback journal .*doctor --fix/);
    // backup and recover would copy half a transaction: they say the same (they said only
    // "attempt to write a readonly database", recover without the file's name).
    for (
      const args of [
        ["--db", path, "backup", join(tempDir(), "b.db")],
        ["recover", path, join(tempDir(), "r.db")],
      ]
    ) {
      const refused = await runCli(args);
      assert.equal(refused.code, 1, args[2]);
      assert.match(
        refused.err,
        new RegExp(`Cannot open database "${path}": .*left its rollback journal .*doctor --fix`),
      );
    }
    const fix = await runCli(["--db", path, "doctor", "--fix"]);
    assert.equal(fix.code, 0, fix.out + fix.err);
    assert.match(fix.out, /played back a crashed writer's rollback journal/);
    assert.ok(!existsSync(`${path}-journal`));
    const list = await runCli(["--db", path, "--json", "search", "docker", "--limit", "1"]);
    assert.equal(list.code, 0, list.err);
    assert.doesNotMatch(list.out, /x"/, "the unfinished change is gone");
  });
});
