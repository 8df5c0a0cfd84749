import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { buildDb, interruptibleIo, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { FIXTURES, tempDir } from "./_helpers.ts";
import { main } from "../lib/cli/main.ts";
import { formatBytes, formatCount } from "../lib/render/format.ts";
import { fileSizes } from "../lib/cli/files.ts";
import { stepBoundaries } from "../lib/cli/prune_steps.ts";

const OLD = 6;

/** A file with one ghost (an ended, empty, untitled tui session) and one tui session that is kept. */
function ghostAndKept(): Promise<string> {
  return buildDb((db) => {
    db.createSession("ghost", "tui");
    db.endSession("ghost", "tui_close");
    db.createSession("kept", "tui");
    db.appendMessage("kept", { role: "user", content: "hi" });
    db.endSession("kept", "tui_close");
  }, { start: 1_000_000 });
}

describe("prune", () => {
  test("prune --dry-run lists the old ended sessions and deletes nothing", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "prune", "--dry-run"]);
    assert.equal(run.code, 0);
    const lines = run.out.trimEnd().split("\n");
    assert.equal(lines.length, OLD + 1);
    assert.match(
      lines[0],
      new RegExp(`^${V11.oldCli} +cli +2025-12-2\\d +cli_close +\\d+ messages? +docker cleanup`),
    );
    assert.equal(lines[OLD], `${OLD} sessions would be deleted (dry run: nothing was).`);
    assert.equal(await withDb(path, (db) => db.sessionCount()), 42);
  });

  test("prune --dry-run --json lists what pruneCandidates returns", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "--json", "prune", "--dry-run", "--source", "cron"]);
    const report = JSON.parse(run.out);
    assert.equal(report.would_prune, 1);
    assert.equal(report.sessions[0].source, "cron");
  });

  test("prune asks, then deletes exactly the listed sessions", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "prune"], { stdin: "yes\n" });
    assert.equal(run.code, 0);
    assert.match(
      run.err,
      /^Delete 6 sessions \(\d+ messages\): all ended sessions older than 90 days\? \[y\/N\] $/,
    );
    assert.equal(run.out, "Pruned 6 sessions.\n");
    assert.equal(await withDb(path, (db) => db.sessionCount()), 42 - OLD);
  });

  test("prune is cancelled by no or end of input, and --yes skips the question", async () => {
    const path = v11Copy();
    const no = await runCli(["--db", path, "prune", "--source", "cron"]);
    assert.equal(no.code, 1);
    assert.match(no.err, /from 'cron'\? \[y\/N\] \nCancelled\.\n$/);
    const yes = await runCli(["--db", path, "prune", "--source", "cron", "-y", "--json"]);
    assert.deepEqual(JSON.parse(yes.out), { pruned: 1 });
    assert.equal(await withDb(path, (db) => db.sessionCount({ source: "cron" })), 3);
  });

  test("prune says so when nothing is old enough, without asking", async () => {
    const run = await runCli(["--db", v11Copy(), "prune", "--older-than", "1000"]);
    assert.equal(run.code, 0);
    assert.equal(run.out, "No ended sessions older than 1,000 days.\n");
    assert.equal(run.err, "");
  });

  test("prune rejects a negative or fractional age", async () => {
    for (const days of ["-1", "1.5", "x"]) {
      const run = await runCli(["--db", v11Copy(), "prune", "--older-than", days]);
      assert.equal(run.code, 2);
    }
  });

  test("prune says 1 day, not 1 days", async () => {
    const run = await runCli(["--db", v11Copy(), "prune", "--older-than", "1"], { stdin: "n\n" });
    assert.match(run.err, /older than 1 day\? \[y\/N\]/);
  });

  test("prune --ghosts --dry-run lists the ghosts and deletes nothing", async () => {
    const path = await ghostAndKept();
    const run = await runCli(["--db", path, "prune", "--ghosts", "--dry-run"], { now: 1_200_000 });
    assert.equal(run.code, 0, run.err);
    assert.match(
      run.out,
      /^ghost +tui +.+0 messages.*\n1 session would be deleted \(dry run: nothing was\)\.\n$/,
    );
    const json = await runCli(["--db", path, "--json", "prune", "--ghosts", "--dry-run"], {
      now: 1_200_000,
    });
    assert.deepEqual(JSON.parse(json.out).sessions.map((s: { id: string }) => s.id), ["ghost"]);
    assert.ok(await withDb(path, (db) => db.getSession("ghost")), "nothing was deleted");
    const none = await runCli(["--db", path, "prune", "--ghosts", "--dry-run"], { now: 1_000_001 });
    assert.equal(
      none.out,
      'No empty, untitled, ended "tui" sessions started more than a day ago.\n',
    );
  });

  test("prune --ghosts deletes the empty, untitled, ended tui sessions after asking", async () => {
    const path = await ghostAndKept();
    const no = await runCli(["--db", path, "prune", "--ghosts"], { stdin: "n\n", now: 1_200_000 });
    assert.equal(no.code, 1);
    assert.ok(await withDb(path, (db) => db.getSession("ghost")));
    const run = await runCli(["--db", path, "prune", "--ghosts", "--yes"], { now: 1_200_000 });
    assert.equal(run.code, 0, run.err);
    assert.equal(run.out, "Pruned 1 session (empty, untitled tui sessions).\n");
    assert.deepEqual(
      await withDb(path, (db) => [db.getSession("ghost"), db.getSession("kept")?.id]),
      [undefined, "kept"],
    );
    const mixed = await runCli(["--db", path, "prune", "--ghosts", "--source", "tui"]);
    assert.equal(mixed.code, 2);
  });

  test("prune --ghosts with no ghost says so without asking and leaves an older file as it was", async () => {
    // The v6 fixture's one ghost (20260410_100050_711884) is not a day old at this clock.
    const dir = tempDir();
    const path = join(dir, "state.db");
    copyFileSync(join(FIXTURES, "hermes-v6.db"), path);
    chmodSync(path, 0o600);
    // The file's bytes, and the files beside it (a write would leave a -wal there).
    const bytes = () => [readFileSync(path).toString("hex"), readdirSync(dir).sort().join(" ")];
    const before = bytes();
    const now = 1_775_822_400;
    const asked = await runCli(["--db", path, "prune", "--ghosts"], { now });
    assert.equal(asked.code, 0, asked.err);
    assert.equal(
      asked.out,
      'No empty, untitled, ended "tui" sessions started more than a day ago.\n',
    );
    assert.equal(asked.err, "", "no question");
    const yes = await runCli(["--db", path, "--json", "prune", "--ghosts", "--yes"], { now });
    assert.equal(yes.code, 0, yes.err);
    assert.deepEqual(JSON.parse(yes.out), { pruned: 0 });
    assert.deepEqual(bytes(), before, "the v6 file was upgraded or written");
  });
});

describe("vacuum", () => {
  test("vacuum rebuilds the file, keeps every session, and reports the sizes", async () => {
    const path = v11Copy();
    await runCli(["--db", path, "prune", "--yes"]);
    const json = JSON.parse((await runCli(["--db", path, "--json", "vacuum"])).out);
    assert.ok(json.bytes_after < json.bytes_before, JSON.stringify(json));
    const run = await runCli(["--db", path, "vacuum"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /^Vacuumed .+: [\d.]+ KiB → [\d.]+ KiB\.\n$/);
    assert.equal(await withDb(path, (db) => db.sessionCount()), 42 - OLD);
    const integrity = await withDb(path, (db) => db.inspect({ searchIndexes: true }).integrity);
    assert.deepEqual((integrity ?? []).filter((l) => !l.includes("trigram")), []);
  });

  test("vacuum says on a terminal what it rebuilds while the rewrite runs, then erases the line", async () => {
    const path = v11Copy();
    const size = formatBytes(fileSizes(path).total);
    const run = await runCli(["--db", path, "vacuum"], { stderrIsTerminal: true });
    assert.equal(run.code, 0, run.err);
    assert.equal(
      run.err,
      `\r\x1b[KRebuilding ${path}, ${size}: the whole file is rewritten…\r\x1b[K`,
    );
    const piped = await runCli(["--db", path, "vacuum"]);
    assert.equal(piped.err, "", "nothing when stderr is not a terminal");
  });
});

describe("vacuum beside a reader", () => {
  test("says the rebuilt pages wait in the -wal when another process was reading", async () => {
    const path = v11Copy();
    await runCli(["--db", path, "prune", "--yes"]);
    // Python's sqlite3 in the middle of a read: the final checkpoint cannot pass it.
    const reader = spawn("python3", [
      "-c",
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)",
        "c.execute('BEGIN')",
        "c.execute('SELECT count(*) FROM messages').fetchall()",
        "print('reading', flush=True)",
        "sys.stdin.read()",
      ].join("\n"),
      path,
    ], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve, reject) => {
        reader.stdout.on("data", (chunk) => String(chunk).includes("reading") && resolve());
        reader.on("exit", (code) => reject(new Error(`the reader exited (${code})`)));
      });
      const json = JSON.parse((await runCli(["--db", path, "--json", "vacuum"])).out);
      assert.ok(json.wal_bytes_after > 0, JSON.stringify(json));
      const run = await runCli(["--db", path, "vacuum"]);
      assert.equal(run.code, 0, run.err);
      assert.match(
        run.out,
        /^Vacuumed .+: [\d.]+ [KM]iB → [\d.]+ [KM]iB for now: another connection was reading the file, so the rebuilt pages wait in its -wal \([\d.]+ [KM]iB\) and the file shrinks at a later checkpoint, once that read is over \(vacuum again then to have it at once\)\.\n$/,
      );
    } finally {
      reader.stdin.end();
      await new Promise((resolve) => reader.on("close", resolve));
    }
    // The read over (its close checkpointed the rebuilt pages into the file), the next vacuum
    // leaves nothing in the -wal, and the file is no larger than it found it.
    const json = JSON.parse((await runCli(["--db", path, "--json", "vacuum"])).out);
    assert.equal(json.wal_bytes_after, 0, JSON.stringify(json));
    assert.ok(json.bytes_after <= json.bytes_before, JSON.stringify(json));
    assert.equal(json.bytes_after, statSync(path).size, "no -wal or -shm left beside it");
  });
});

/** The clock of the stopped prunes' runs. */
const now = 1_800_000_000;

/** 600 ended sessions a day apart, a message each, from 700 days before `now`: three steps or more. */
function sixHundredOldSessions(): Promise<string> {
  const day = 86400;
  return buildDb((db, clock) => {
    for (let i = 0; i < 600; i++) {
      clock.now = now - (700 - i) * day;
      db.createSession(`old_${i}`, "cli");
      db.appendMessage(`old_${i}`, { role: "user", content: `hello ${i}` });
      db.endSession(`old_${i}`, "cli_close");
    }
  }, { start: now - 800 * day });
}

describe("prune, stopped and in steps", () => {
  test("a Ctrl-C that comes as a signal does (an event of the loop, not a call made at once)", async () => {
    const path = await sixHundredOldSessions();
    // A signal's listener runs on a turn of the event loop: the steps, each one transaction
    // behind an await, never gave it one, and every session went, exit 0.
    const io = interruptibleIo({ now });
    const listen = io.onInterrupt!;
    io.onInterrupt = (listener) => {
      setTimeout(() => listener("SIGINT"), 0);
      return listen(listener);
    };
    assert.equal(await main(["--db", path, "prune", "--yes"], io), 130, io.err);
    assert.match(io.err, /stopped after pruning ([\d,]+) of 600 sessions/);
    assert.ok(await withDb(path, (db) => db.sessionCount()) > 0);
  });

  test("prune stopped by Ctrl-C says how many sessions it pruned, each whole, and exits 130", async () => {
    const path = await sixHundredOldSessions();
    // Ctrl-C as soon as the command listens: it stops at the end of the first step.
    const io = interruptibleIo({ now });
    const listen = io.onInterrupt!;
    io.onInterrupt = (listener) => {
      const stop = listen(listener);
      listener("SIGINT");
      return stop;
    };
    assert.equal(await main(["--db", path, "prune", "--yes"], io), 130, io.err);
    const stopped =
      /^hermes-state prune: interrupted by SIGINT: stopped after pruning ([\d,]+) of 600 sessions, each whole with its messages; the same prune again finishes\n$/
        .exec(io.err);
    assert.ok(stopped !== null, io.err);
    assert.equal(io.out, "", "no 'Pruned' line: the message says what was done");
    const pruned = Number(stopped[1].replaceAll(",", ""));
    assert.ok(pruned > 0 && pruned < 600, io.err);
    // Exactly what it said went, each session whole with its messages, the oldest first.
    const left = await withDb(path, (db) => ({
      sessions: db.sessionCount(),
      messages: db.messageCount(),
      oldestLeft: db.getSession(`old_${pruned}`)?.id,
      newestGone: db.getSession(`old_${pruned - 1}`)?.id ?? null,
    }));
    assert.deepEqual(left, {
      sessions: 600 - pruned,
      messages: 600 - pruned,
      oldestLeft: `old_${pruned}`,
      newestGone: null,
    });
    const again = await runCli(["--db", path, "prune", "--yes"], { now });
    assert.equal(again.out, `Pruned ${formatCount(600 - pruned)} sessions.\n`, again.err);
  });

  test("prune in steps deletes exactly the sessions one prune deletes, oldest first", async () => {
    const day = 86400;
    const now = 1_800_000_000;
    // 600 ended sessions over 600 days (some sharing a start time), one open, one young, one cron.
    const path = await buildDb((db, clock) => {
      for (let i = 0; i < 600; i++) {
        clock.now = now - (700 - Math.floor(i / 2)) * day;
        db.createSession(`old_${String(i).padStart(3, "0")}_a`, "cli");
        db.endSession(`old_${String(i).padStart(3, "0")}_a`, "cli_close");
      }
      clock.now = now - 400 * day;
      db.createSession("open_one", "cli");
      clock.now = now - 10 * day;
      db.createSession("young", "cli");
      db.endSession("young", "cli_close");
    }, { start: now - 800 * day });
    const candidates = await withDb(path, (db) => db.pruneCandidates({ olderThanDays: 90 }));
    assert.ok(stepBoundaries(candidates).length >= 2, "several steps");
    const run = await runCli(["--db", path, "--json", "prune", "--yes"], { now });
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(JSON.parse(run.out), { pruned: 600 });
    const left = await withDb(path, (db) => [
      db.sessionCount(),
      db.getSession("open_one")?.id,
      db.getSession("young")?.id,
    ]);
    assert.deepEqual(left, [2, "open_one", "young"]);
  });

  test("prune --json answers {pruned: 0} when the answer is no, as delete --json answers", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "--json", "prune"], { stdin: "n\n" });
    assert.equal(run.code, 1);
    assert.deepEqual(JSON.parse(run.out), { pruned: 0 });
    assert.match(run.err, /Cancelled\.\n$/);
    assert.equal(await withDb(path, (db) => db.sessionCount()), 42);
  });
});
