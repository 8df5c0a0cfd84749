import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { copyFixture, rawOpen, tempDbPath, tempDir } from "./_helpers.ts";
import { interruptibleIo, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

async function exportOf(path: string): Promise<string> {
  const run = await runCli(["--db", path, "export"]);
  assert.equal(run.code, 0);
  return run.out;
}

async function ftsCount(path: string, table: string, query: string): Promise<number> {
  const db = await rawOpen(path, true);
  try {
    return Number(
      db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(query)?.n,
    );
  } finally {
    db.close();
  }
}

describe("import", () => {
  test("import of an export into a new file gives the same sessions and messages", async () => {
    const source = v11Copy();
    const text = await exportOf(source);
    const file = join(tempDir(), "all.jsonl");
    writeFileSync(file, text);
    const target = tempDbPath();
    const run = await runCli(["--db", target, "import", file]);
    assert.equal(run.code, 0, run.err);
    assert.equal(
      run.out,
      "Imported 42 sessions, skipped 0 already present " +
        "(197 messages written, 4 parent links restored).\n",
    );
    assert.equal(await exportOf(target), text);
    const parent = await withDb(
      target,
      (db) => db.getSession(V11.compressionTip)?.parent_session_id,
    );
    assert.equal(parent, V11.compressionMid);
    for (
      const [table, query] of [["messages_fts", "docker"], ["messages_fts_trigram", '"数据库"']]
    ) {
      assert.equal(await ftsCount(target, table, query), await ftsCount(source, table, query));
    }
  });

  test("import is idempotent: a second run skips every session and changes nothing", async () => {
    const text = await exportOf(v11Copy());
    const target = tempDbPath();
    await runCli(["--db", target, "import", "-"], { stdin: text });
    const again = await runCli(["--db", target, "import", "-"], { stdin: text });
    assert.equal(again.code, 0);
    assert.equal(
      again.out,
      "Imported 0 sessions, skipped 42 already present (0 messages written).\n",
    );
    assert.equal(await exportOf(target), text);
  });

  test("import --replace rewrites sessions that are present", async () => {
    const path = v11Copy();
    const line = (await runCli(["--db", path, "export", "--session-id", V11.live])).out;
    const record = JSON.parse(line);
    record.title = "Replaced title";
    record.messages = record.messages.slice(0, 1);
    const run = await runCli(["--db", path, "--json", "import", "--replace", "-"], {
      stdin: JSON.stringify(record) + "\n",
    });
    const report = JSON.parse(run.out);
    assert.equal(report.replaced, 1);
    assert.equal(report.messages, 1);
    const after = await withDb(
      path,
      (db) => [db.getSessionTitle(V11.live), db.getMessages(V11.live).length],
    );
    assert.deepEqual(after, ["Replaced title", 1]);
  });

  test("import reports each malformed line with its number and writes nothing of it", async () => {
    const records = (await exportOf(v11Copy())).trimEnd().split("\n").slice(0, 3).map((l) =>
      JSON.parse(l)
    );
    const noRole = structuredClone(records[2]);
    noRole.messages[noRole.messages.length - 1].role = 7;
    const stdin = [
      JSON.stringify(records[0]),
      "{not json",
      "",
      JSON.stringify({ id: "x", source: "cli", started_at: 1 }),
      JSON.stringify(noRole),
      JSON.stringify(records[1]),
    ].join("\n");
    const target = tempDbPath();
    const run = await runCli(["--db", target, "import", "-"], { stdin });
    assert.equal(run.code, 1);
    const errors = run.err.trimEnd().split("\n").filter((l) => l.includes(": line "));
    assert.equal(errors.length, 3);
    assert.match(errors[0], /^hermes-state: import: line 2: not valid JSON \(.+\)$/);
    assert.equal(
      errors[1],
      "hermes-state: import: line 4: Cannot import session: messages must be a list: current value is missing",
    );
    assert.match(
      errors[2],
      /^hermes-state: import: line 5: Cannot import session: messages\[\d+\]\.role must be a string: current value is 7$/,
    );
    assert.equal(
      run.out,
      "Imported 2 sessions, skipped 0 already present (" +
        (records[0].messages.length + records[1].messages.length) +
        " messages written); 3 lines failed.\n",
    );
    const present = await withDb(
      target,
      (db) =>
        [records[0].id, "x", noRole.id, records[1].id].map((id) => db.getSession(id) !== undefined),
    );
    assert.deepEqual(present, [true, false, false, true]);
  });

  test("import exits 1 with one line for a missing file, without creating the database", async () => {
    const target = tempDbPath();
    const run = await runCli(["--db", target, "import", join(tempDir(), "nope.jsonl")]);
    assert.equal(run.code, 1);
    assert.match(run.err, /^hermes-state: Cannot read .*nope\.jsonl: no such file\n$/);
  });

  test("import none of whose lines is a session record leaves an older file as it was, a new one unmade", async () => {
    // Opening the file for the first record upgraded a schema-6 file before the record failed.
    const older = copyFixture("hermes-v6.db");
    const before = readFileSync(older);
    const input = join(tempDir(), "bad.jsonl");
    writeFileSync(input, '{"id": 12345, "source": "cli", "started_at": 1, "messages": []}\n[]\n');
    const run = await runCli(["--db", older, "import", input]);
    assert.equal(run.code, 1);
    assert.match(run.err, /line 1: Cannot import session: id must be a non-empty string/);
    assert.ok(readFileSync(older).equals(before), "the file is as it was");
    const fresh = tempDbPath();
    assert.equal((await runCli(["--db", fresh, "import", input])).code, 1);
    assert.equal(existsSync(fresh), false);
  });

  test("import and copy write a session whose title is taken under the lineage's next title", async () => {
    const source = tempDbPath();
    await withDb(source, (db) => {
      db.createSession("s", "cli");
      db.setSessionTitle("s", "Dup Title");
      db.appendMessage("s", { role: "user", content: "kept" });
    });
    const target = tempDbPath();
    await withDb(target, (db) => {
      db.createSession("other", "cli");
      db.setSessionTitle("other", "Dup Title");
    });
    const imported = await runCli(["--db", target, "import", "-"], {
      stdin: await exportOf(source),
    });
    assert.equal(imported.code, 0, imported.err);
    assert.equal(
      imported.err,
      "hermes-state: import: line 1: session s took the title 'Dup Title #2' " +
        "(another session has the one it had)\n",
    );
    const copyTarget = tempDbPath();
    await withDb(copyTarget, (db) => {
      db.createSession("other", "cli");
      db.setSessionTitle("other", "Dup Title");
    });
    const copied = await runCli(["copy", source, copyTarget, "--json"]);
    assert.equal(copied.code, 0, copied.err);
    assert.deepEqual(JSON.parse(copied.out).renamed, [{ id: "s", title: "Dup Title #2" }]);
    for (const path of [target, copyTarget]) {
      const got = await withDb(path, (db) => [db.getSessionTitle("s"), db.getMessages("s").length]);
      assert.deepEqual(got, ["Dup Title #2", 1]);
    }
  });
});

describe("copy", () => {
  test("copy keeps each session's goal (its state_meta key); a run cut off before it is completed by the next", async () => {
    const source = v11Copy();
    const key = "goal:20260425_090019_d38f1d";
    const goal = await withDb(source, (db) => db.getMeta(key));
    assert.match(goal ?? "", /"status": "active"/, "the fixture's Python Hermes set a goal");
    const target = tempDbPath();
    const first = await runCli(["copy", source, target, "--json"]);
    assert.equal(first.code, 0, first.err);
    assert.equal(JSON.parse(first.out).meta_keys, 1);
    assert.equal(await withDb(target, (db) => db.getMeta(key)), goal);
    // The file-wide keys stay behind: they are the source file's own.
    assert.equal(await withDb(target, (db) => db.getMeta("last_auto_prune")), undefined);
    // As if the first run had stopped after the session, before its goal.
    const raw = await rawOpen(target);
    raw.prepare("DELETE FROM state_meta WHERE key = ?").run(key);
    raw.close();
    const again = await runCli(["copy", source, target, "--json"]);
    assert.equal(JSON.parse(again.out).skipped, 42);
    assert.equal(JSON.parse(again.out).meta_keys, 1);
    assert.equal(await withDb(target, (db) => db.getMeta(key)), goal);
    // A goal the target has of its own is not overwritten by a skipped session's.
    await withDb(target, (db) => db.setMeta(key, "{}"));
    assert.equal(JSON.parse((await runCli(["copy", source, target, "--json"])).out).meta_keys, 0);
    assert.equal(await withDb(target, (db) => db.getMeta(key)), "{}");
  });
});

describe("import progress", () => {
  test("import shows progress on a terminal once the run is past a second, then erases it", async () => {
    const text = await exportOf(v11Copy());
    let t = 1_800_000_000;
    const run = await runCli(["--db", tempDbPath(), "import", "-"], {
      stdin: text,
      now: () => (t += 0.25),
      stderrIsTerminal: true,
    });
    assert.equal(run.code, 0);
    assert.ok(run.err.startsWith("\r\x1b[KImported "), run.err);
    assert.ok(run.err.endsWith("\r\x1b[K"));
  });

  test("import after an interrupted run restores every parent link", async () => {
    const text = await exportOf(v11Copy());
    const lines = text.trimEnd().split("\n");
    const full = tempDbPath();
    await runCli(["--db", full, "import", "-"], { stdin: text });
    const links = async (path: string) =>
      await withDb(
        path,
        (db) =>
          lines.map((l) => JSON.parse(l).id as string).map((id) =>
            db.getSession(id)?.parent_session_id ?? null
          ),
      );
    const want = await links(full);
    assert.ok(want.filter((p) => p !== null).length >= 4);
    // The first run stops half way (as after Ctrl-C): children read before their parents stay roots.
    const target = tempDbPath();
    await runCli(["--db", target, "import", "-"], { stdin: lines.slice(0, 21).join("\n") });
    const second = await runCli(["--db", target, "import", "-"], { stdin: text });
    assert.equal(second.code, 0, second.err);
    assert.deepEqual(await links(target), want);
  });

  test("import of chain members one file at a time links them when the child is read again", async () => {
    const records = (await exportOf(v11Copy())).trimEnd().split("\n").map((l) => JSON.parse(l));
    const child = records.find((r) => r.id === V11.compressionTip);
    const parent = records.find((r) => r.id === V11.compressionMid);
    const target = tempDbPath();
    const first = await runCli(["--db", target, "import", "-"], { stdin: JSON.stringify(child) });
    assert.match(first.err, /1 session names a parent that is not in the database/);
    await runCli(["--db", target, "import", "-"], { stdin: JSON.stringify(parent) });
    const again = await runCli(["--db", target, "import", "-"], { stdin: JSON.stringify(child) });
    assert.match(again.out, /1 parent link restored/);
    const linked = await withDb(
      target,
      (db) => db.getSession(V11.compressionTip)?.parent_session_id,
    );
    assert.equal(linked, V11.compressionMid);
  });

  test("import refuses a SQLite file or a gzip stream with one line and writes nothing", async () => {
    const dir = tempDir();
    const gz = join(dir, "backup.jsonl.bin");
    writeFileSync(gz, gzipSync(await exportOf(v11Copy())));
    for (
      const [input, what] of [[v11Copy(), /not JSON Lines but a SQLite database/], [
        gz,
        /gzip-compressed/,
      ]] as const
    ) {
      const target = join(dir, `t${Math.random()}.db`);
      const run = await runCli(["--db", target, "import", input]);
      assert.equal(run.code, 1);
      assert.equal(run.err.trimEnd().split("\n").length, 1, run.err.slice(0, 300));
      assert.match(run.err, what);
      assert.ok(!existsSync(target), "no database was created");
    }
    const piped = await runCli(["--db", join(dir, "p.db"), "import", "-"], {
      stdin: "SQLite format 3\u0000\u0004\u0000\u0001\u0001",
    });
    assert.equal(piped.code, 1);
    assert.match(piped.err, /^hermes-state: Cannot import standard input: it is not JSON Lines/);
  });

  test("import reads a .gz file with node:zlib", async () => {
    const text = await exportOf(v11Copy());
    const file = join(tempDir(), "backup.jsonl.gz");
    writeFileSync(file, gzipSync(text));
    const target = tempDbPath();
    const run = await runCli(["--db", target, "import", file]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /^Imported 42 sessions/);
    assert.equal(await exportOf(target), text);
    const broken = join(tempDir(), "broken.jsonl.gz");
    writeFileSync(broken, "not gzip at all\n");
    const bad = await runCli(["--db", tempDbPath(), "import", broken]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.err,
      /^hermes-state: Cannot import .*broken\.jsonl\.gz: not a valid gzip file/,
    );
  });

  test("import of a .gz cut short says what went in before the damage, as text and as JSON", async () => {
    // It said only "not a valid gzip file", though every whole line before the damage was in.
    const whole = gzipSync(await exportOf(v11Copy()));
    const cut = join(tempDir(), "cut.jsonl.gz");
    writeFileSync(cut, whole.subarray(0, whole.length >> 1));
    const target = tempDbPath();
    const run = await runCli(["--db", target, "import", cut]);
    assert.equal(run.code, 1);
    const sessions = /^Imported (\d+) sessions/.exec(run.out)?.[1];
    assert.ok(Number(sessions) > 0, run.out);
    assert.match(
      run.err,
      /not a valid gzip file \(.+\) after line \d+: every session before it is in, each whole\n$/,
    );
    using raw = await rawOpen(target, true);
    assert.equal(raw.prepare("SELECT count(*) AS n FROM sessions").get()?.n, Number(sessions));
    const json = await runCli(["--db", tempDbPath(), "--json", "import", cut]);
    assert.equal(json.code, 1);
    const document = JSON.parse(json.out);
    assert.equal(document.imported, Number(sessions));
    assert.match(document.input_error, /not a valid gzip file/);
  });

  test("import stops after 20 bad lines and says so with a count", async () => {
    const stdin = Array.from({ length: 500 }, (_, i) => `garbage ${i}`).join("\n");
    const run = await runCli(["--db", tempDbPath(), "import", "-"], { stdin });
    assert.equal(run.code, 1);
    const lines = run.err.trimEnd().split("\n");
    assert.equal(lines.filter((l) => l.includes(": line ")).length, 20);
    assert.match(run.err, /stopped at line 20 after 20 bad lines/);
    assert.match(run.out, /20 lines failed/);
  });
});

describe("an interrupted import or copy", () => {
  test("an interrupted import says the same import again links the children read before their parent", async () => {
    const records = (await exportOf(v11Copy())).trimEnd().split("\n").map((l) => JSON.parse(l));
    const chain = [V11.compressionTip, V11.compressionMid, V11.compressionRoot];
    const file = join(tempDir(), "children-first.jsonl");
    writeFileSync(
      file,
      chain.map((id) => JSON.stringify(records.find((r) => r.id === id))).join("\n") + "\n",
    );
    const target = tempDbPath();
    // Ctrl-C as soon as the command listens: the first line (the child) is in, its parent not.
    const io = interruptibleIo();
    const listen = io.onInterrupt!;
    io.onInterrupt = (listener) => {
      const stop = listen(listener);
      listener("SIGINT");
      return stop;
    };
    assert.equal(await main(["--db", target, "import", file], io), 130, io.err);
    assert.match(
      io.err,
      /^hermes-state: import: 1 session names a parent that is not in the database yet \(the rest of the file may hold it\): the same import again links them\n/m,
    );
    assert.doesNotMatch(io.err, /import the parent/);
    const again = await runCli(["--db", target, "import", file]);
    assert.equal(again.code, 0, again.err);
    assert.doesNotMatch(again.err, /names a parent/);
    const parents = await withDb(
      target,
      (db) => chain.map((id) => db.getSession(id)?.parent_session_id ?? null),
    );
    assert.deepEqual(parents, [V11.compressionMid, V11.compressionRoot, null]);
  });

  test("Ctrl-C stops import and copy between two sessions, says how far, exits 130; the same command again goes on", async () => {
    const source = tempDbPath();
    {
      using db = await SessionDB.open({ path: source });
      for (let s = 0; s < 300; s++) {
        db.createSession(`s${s}`, "cli");
        db.appendMessages(`s${s}`, [{ role: "user", content: `hello ${s}` }, {
          role: "assistant",
          content: `hi ${s}`,
        }]);
      }
    }
    const file = join(tempDir(), "all.jsonl");
    writeFileSync(file, await exportOf(source));
    const sessionsIn = (path: string) => withDb(path, (db) => db.sessionCount());
    for (const command of ["import", "copy"]) {
      const target = tempDbPath();
      const args = command === "import"
        ? ["--db", target, "import", file]
        : ["copy", source, target];
      // Ctrl-C as soon as the command listens (a run of this size ends before a timer could).
      const io = interruptibleIo();
      const listen = io.onInterrupt!;
      io.onInterrupt = (listener) => {
        const stop = listen(listener);
        listener("SIGINT");
        return stop;
      };
      assert.equal(await main(args, io), 130, io.err);
      assert.match(
        io.err,
        new RegExp(`hermes-state ${command}: interrupted by SIGINT: stopped after .*each .*whole`),
      );
      const part = await sessionsIn(target);
      assert.ok(part < 300, `${command} went on to ${part} sessions`);
      const again = await runCli(args);
      assert.equal(again.code, 0, again.err);
      assert.equal(await sessionsIn(target), 300, command);
    }
  });
});
