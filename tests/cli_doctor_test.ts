import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { rawOpen, tempDbPath, tempDir } from "./_helpers.ts";
import { buildDb, runCli, v11Copy } from "./_cli_io.ts";

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
      /^problem +counters +1 sessions have counters that differ from their rows$/m,
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
    assert.match(run.err, /no such file/);
    assert.equal(existsSync(path), false);
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
});
