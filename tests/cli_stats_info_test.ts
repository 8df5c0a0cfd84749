import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  closeSync,
  copyFileSync,
  openSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import { fileSizes } from "../lib/cli/files.ts";
import { CommandError } from "../lib/cli/usage_error.ts";
import { buildDb, runCli, v11Copy, withDb } from "./_cli_io.ts";
import { copyFixture, rawOpen, tempDbPath, tempDir } from "./_helpers.ts";

describe("stats", () => {
  test("stats --json counts by source and model and measures the files", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "--json", "stats", "--top", "3"]);
    assert.equal(run.code, 0);
    const stats = JSON.parse(run.out);
    assert.equal(stats.sessions, 42);
    assert.equal(stats.messages, 197);
    const bySource = Object.fromEntries(
      stats.by_source.map((
        s: { source: string; session_count: number },
      ) => [s.source, s.session_count]),
    );
    assert.deepEqual(bySource, {
      cli: 19,
      discord: 6,
      telegram: 5,
      cron: 4,
      acp: 3,
      tui: 3,
      tool: 2,
    });
    const expected = await withDb(path, (db) => ({
      byModel: db.usageByModel(),
      top: db.topSessionsByTokens(3),
    }));
    const tidy = (n: number | null) => n === null ? null : Number(n.toFixed(10));
    assert.deepEqual(
      stats.by_model,
      expected.byModel.map((m) => ({ ...m, total_cost: tidy(m.total_cost) })),
    );
    assert.deepEqual(
      stats.top_sessions,
      expected.top.map((t) => ({ ...t, estimated_cost_usd: tidy(t.estimated_cost_usd) })),
    );
    assert.equal(stats.files.db, statSync(path).size);
    assert.equal(stats.files.total, stats.files.db + stats.files.wal + stats.files.shm);
    assert.equal(stats.totals.actual_cost_usd, 0.4215);
  });

  test("stats measures the files on disk, not the -shm its own read makes beside a WAL file", async () => {
    const path = v11Copy(); // a WAL file without -wal or -shm, as after the gateway's last close
    const run = await runCli(["--db", path, "--json", "stats"]);
    assert.equal(run.code, 0, run.err);
    // It said 32 KiB of -shm that no listing of the folder shows, where info said none.
    assert.deepEqual(JSON.parse(run.out).files, {
      db: statSync(path).size,
      wal: 0,
      shm: 0,
      total: statSync(path).size,
    });
  });

  test("stats and info measure a file named with the sqlite: prefix", async () => {
    const path = v11Copy();
    const size = statSync(path).size;
    const stats = await runCli(["--db", `sqlite:${path}`, "--json", "stats"]);
    assert.equal(stats.code, 0, stats.err);
    assert.equal(JSON.parse(stats.out).files.db, size);
    const info = await runCli(["--db", `sqlite:${path}`, "--json", "info", "--no-check"]);
    assert.equal(info.code, 0, info.err);
    assert.equal(JSON.parse(info.out).files.db, size);
  });

  test("stats prints totals, sources, models and the biggest sessions", async () => {
    const run = await runCli(["--db", v11Copy(), "stats"]);
    assert.equal(run.code, 0);
    assert.match(run.out, /^Total sessions: 42\nTotal messages: 197\nTokens: [\d,]+ in · /);
    assert.match(run.out, /\nDatabase size: [\d.]+ KiB \([\d.]+ KiB file, [\d.]+ K?i?B WAL, /);
    assert.match(
      run.out,
      /\nBy source\n {2}source +sessions +messages +input +output +est\. cost\n {2}cli +19 +/,
    );
    assert.match(run.out, /\nBy model\n/);
    assert.match(run.out, /\nMost tokens\n {2}\S+ +[\d,]+ +\$/);
  });

  test("stats right-aligns numbers, shows costs as $0.29 and --json has no float noise", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "stats"]);
    assert.match(run.out, /\nCost: \$3\.93 estimated · \$0\.42 actual\n/);
    const table = run.out.split("\nBy source\n")[1].split("\n\n")[0].split("\n");
    const ends = new Set(table.map((line) => line.length));
    assert.equal(ends.size, 1, `every row ends in the same column:\n${table.join("\n")}`);
    assert.match(table[1], /^ {2}cli +19 +99 +491,323 +8,848 +\$1\.77$/);
    assert.ok(!/\$\d+\.\d{3,}/.test(run.out.replace(/\$0\.00\d\d/g, "")), "two decimals");
    const json = (await runCli(["--db", path, "--json", "stats"])).out;
    assert.ok(!/\d\.\d{11,}/.test(json), "no float noise in --json");
    assert.equal(JSON.parse(json).totals.estimated_cost_usd, 3.9264852);
  });

  test("stats of an empty database prints zeros and no tables", async () => {
    const run = await runCli(["--db", await buildDb(() => {}), "stats"]);
    assert.equal(run.code, 0);
    assert.match(run.out, /^Total sessions: 0\nTotal messages: 0\n/);
    assert.doesNotMatch(run.out, /By source/);
  });

  test("stats lists no biggest sessions when no session used a token (a gateway that records none)", async () => {
    const run = await runCli(["--db", copyFixture("hermes-v21.db"), "stats"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /\nTokens: 0 in · 0 out/);
    assert.match(run.out, /\nBy model\n/);
    assert.doesNotMatch(run.out, /Most tokens/);
  });
});

describe("info", () => {
  test("info --json describes the file: schema, journal mode, counts, search tables", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "--json", "info", "--no-check"]);
    assert.equal(run.code, 0);
    const info = JSON.parse(run.out);
    assert.equal(info.path, path);
    assert.equal(info.schema_version, 11);
    assert.equal(info.schema_note, null);
    assert.equal(info.journal_mode, "wal");
    assert.equal(info.sessions, 42);
    assert.equal(info.messages, 197);
    assert.deepEqual(info.fts_tables, ["messages_fts", "messages_fts_trigram"]);
    assert.ok(info.meta_keys.includes("last_auto_prune"));
    assert.equal(info.integrity, null);
    assert.equal(info.read_only, null);
    assert.equal(info.files.db, statSync(path).size);
    const camel = Object.keys(info).filter((key) => /[A-Z]/.test(key));
    assert.deepEqual(camel, [], "every key is snake_case");
  });

  test("info checks the tables and indexes only; the search indexes' check is --full's", async () => {
    // hermes-v11.db's trigram index fails FTS5's own check (the SQLite 3.40 condition below):
    // a check of the b-trees alone does not run it, which is what keeps `info` fast.
    const path = v11Copy();
    const run = await runCli(["--db", path, "info"]);
    assert.equal(run.code, 0, run.err);
    assert.match(
      run.out,
      /\nIntegrity +ok \(tables and indexes; --full also verifies the search indexes\)\n$/,
    );
    const json = JSON.parse((await runCli(["--db", path, "info", "--json"])).out);
    assert.deepEqual(json.integrity, ["ok"]);
    assert.equal(json.search_indexes_checked, false);
    assert.deepEqual(json.known_issues, []);
    const full = JSON.parse((await runCli(["--db", path, "info", "--json", "--full"])).out);
    assert.equal(full.search_indexes_checked, true);
    assert.equal(full.known_issues.length, 1);
    const both = await runCli(["--db", path, "info", "--full", "--no-check"]);
    assert.equal(both.code, 2);
    assert.match(both.err, /give either --full or --no-check, not both/);
  });

  test("info --full reports the SQLite-3.40 trigram condition of hermes-v11.db as known, with its fix, and exits 0", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "info", "--full"]);
    assert.equal(run.code, 0, run.err);
    assert.match(
      run.out,
      /\nIntegrity +known condition: the trigram index was written by SQLite 3\.40 or older, which indexed 4 messages holding a NUL character only up to it; search is unaffected, but deleting them may fail, and other damage of that index would not show, until it is rebuilt \(fix: hermes-state doctor --fix\)\n$/,
    );
    const json = JSON.parse((await runCli(["--db", path, "info", "--json", "--full"])).out);
    assert.equal(json.ok, true);
    assert.deepEqual(json.damage, []);
    assert.equal(json.known_issues[0].code, "trigram_nul_prefix");
    assert.equal(json.known_issues[0].fix, "hermes-state doctor --fix");
  });

  test("info says a schema-21 file is newer and read as 11", async () => {
    const path = copyFixture("hermes-v21.db");
    const run = await runCli(["--db", path, "info", "--no-check"]);
    assert.equal(run.code, 0, run.err);
    assert.match(
      run.out,
      /\nSchema version +21 \(newer than 11: read as 11, extra columns kept\)\n/,
    );
  });

  test("info runs the quick check and exits 0 on a sound file", async () => {
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      db.appendMessage("s", { role: "user", content: "hello" });
    });
    const run = await runCli(["--db", path, "info"]);
    assert.equal(run.code, 0);
    assert.match(
      run.out,
      /^Path +.*state\.db\nSchema version +11\nSQLite +3\.\d+\.\d+\nJournal mode +wal\n/,
    );
    assert.match(run.out, /\nSessions +1\nMessages +1\n/);
    assert.match(run.out, /\nIntegrity +ok \(tables and indexes; .*\)\n$/);
    const full = await runCli(["--db", path, "info", "--full"]);
    assert.equal(full.code, 0);
    assert.match(full.out, /\nIntegrity +ok\n$/);
  });

  test("info says on a terminal what it checks while the check runs, then erases the line", async () => {
    const path = v11Copy();
    const size = "412.0 KiB";
    const run = await runCli(["--db", path, "info"], { stderrIsTerminal: true });
    assert.equal(run.code, 0, run.err);
    assert.equal(
      run.err,
      `\r\x1b[KChecking ${path}, ${size}: every table and index (--no-check skips it)…\r\x1b[K`,
    );
    const full = await runCli(["--db", path, "info", "--full"], { stderrIsTerminal: true });
    assert.match(full.err, /: every page and both search indexes \(--no-check skips it\)…/);
    const unchecked = await runCli(["--db", path, "info", "--no-check"], {
      stderrIsTerminal: true,
    });
    assert.equal(unchecked.err, "", "nothing to wait for without the check");
    const piped = await runCli(["--db", path, "info"]);
    assert.equal(piped.err, "", "nothing when stderr is not a terminal");
  });

  test("the status lines of info, doctor and vacuum show a path's control characters, never send them", async () => {
    const path = join(tempDir(), "a\x1b[2Jb.db");
    copyFileSync(v11Copy(), path);
    for (const command of ["info", "doctor", "vacuum"]) {
      const run = await runCli(["--db", path, command], { stderrIsTerminal: true });
      assert.equal(run.code, 0, `${command}: ${run.err}`);
      assert.ok(run.err.startsWith("\r\x1b[K"), `${command}: ${JSON.stringify(run.err)}`);
      assert.match(run.err, /a␛\[2Jb\.db/, command);
      assert.ok(
        !run.err.includes("\x1b[2J"),
        `${command} sent the path's ESC: ${JSON.stringify(run.err)}`,
      );
    }
  });

  test("info shows a meta key's control characters, never sending them to the terminal", async () => {
    const path = v11Copy();
    {
      using raw = await rawOpen(path);
      raw.exec(
        "INSERT INTO state_meta (key, value) VALUES ('k' || char(0) || char(27) || '[31mred', 'v')",
      );
    }
    const run = await runCli(["--db", path, "info"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /\nMeta keys +.*k␀␛\[31mred/);
    // deno-lint-ignore no-control-regex -- no raw control character may reach the terminal
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(run.out), "no raw control character");
  });

  /** A file of 50 messages whose b-tree `name` has 8 bytes of its root page overwritten. */
  async function damaged(name: string): Promise<string> {
    const path = await buildDb((db) => {
      db.createSession("s", "cli");
      for (let i = 0; i < 50; i++) {
        db.appendMessage("s", { role: "user", content: "hello docker ".repeat(30) });
      }
    });
    using raw = await rawOpen(path);
    const page = Number(
      raw.prepare("SELECT rootpage FROM sqlite_master WHERE name = ?").get(name)?.rootpage,
    );
    const pageSize = Number(raw.prepare("PRAGMA page_size").get()?.page_size);
    raw.close();
    assert.ok(page > 1, name);
    const fd = openSync(path, "r+");
    writeSync(fd, new Uint8Array(8).fill(0xff), 0, 8, (page - 1) * pageSize + 12);
    closeSync(fd);
    return path;
  }

  test("info reports a damaged table and exits 1", async () => {
    const path = await damaged("messages");
    const run = await runCli(["--db", path, "info"]);
    assert.equal(run.code, 1);
    assert.match(run.out, /\nIntegrity +database disk image is malformed\n$/);
    const json = await runCli(["--db", path, "info", "--json"]);
    assert.equal(JSON.parse(json.out).ok, false);
    assert.equal((await runCli(["--db", path, "info", "--full"])).code, 1);
  });

  for (
    const name of ["idx_messages_session", "messages_fts_trigram_data", "messages_fts_docsize"]
  ) {
    test(`info finds damage in ${name} (an index, FTS5's own tables) without --full`, async () => {
      const path = await damaged(name);
      const json = JSON.parse((await runCli(["--db", path, "info", "--json"])).out);
      assert.equal(json.search_indexes_checked, false);
      assert.equal(json.ok, false, JSON.stringify(json.integrity));
      assert.ok(json.damage.length > 0);
    });
  }
});

describe("fileSizes()", () => {
  test("fileSizes() counts a missing companion as 0 bytes", () => {
    const path = tempDbPath();
    writeFileSync(path, "12345");
    assert.deepEqual(fileSizes(path), { db: 5, wal: 0, shm: 0, total: 5 });
  });

  test("fileSizes() throws a CommandError when a file is there but cannot be measured", () => {
    const path = tempDbPath();
    writeFileSync(path, "12345");
    // A link to itself: stat fails with ELOOP, not ENOENT.
    symlinkSync(`${basename(path)}-wal`, `${path}-wal`);
    assert.throws(() => fileSizes(path), (error) => {
      assert.ok(error instanceof CommandError, String(error));
      assert.ok(error.message.startsWith(`Cannot measure ${path}-wal: `), error.message);
      return true;
    });
  });
});
