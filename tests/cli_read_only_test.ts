/**
 * The CLI never harms the file it inspects: every read command (and the
 * checks and copies of doctor, backup, recover, copy and export to a file),
 * run on a copy of each fixture (v6, v10, v11 with its -wal and -shm, v21),
 * another application's SQLite file and a 0-byte file, leaves the file and
 * its sidecars byte for byte, and their modification times, as they were; a
 * file without the Hermes tables is refused by every command; reads answer
 * while another connection holds the write lock, and a write that gives up
 * says so.
 */
import { describe, test } from "node:test";
import { spawn } from "node:child_process";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { runCli } from "./_cli_io.ts";
import { FIXTURES, rawOpen, tempDir, waitedAnyTime } from "./_helpers.ts";
import { hotJournalOf, liveWalOf } from "./health/_damaged_files.ts";

/**
 * sha256 and modification time of every file in `dir` (the database and
 * whatever sidecars exist): a read that rewrote a page with the same bytes
 * still moved the time, which `make`, rsync and backup tools go by.
 */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir).sort().map((name) => [
      name,
      `${createHash("sha256").update(readFileSync(join(dir, name))).digest("hex")} ${
        statSync(join(dir, name)).mtimeMs
      }`,
    ]),
  );
}

/** A copy of fixture `name` with the sidecars it has, in a folder of its own. */
function fixtureCopy(name: string): string {
  const dir = tempDir();
  const path = join(dir, "state.db");
  for (const suffix of ["", "-wal", "-shm"]) {
    if (!existsSync(join(FIXTURES, name + suffix))) continue;
    copyFileSync(join(FIXTURES, name + suffix), path + suffix);
    chmodSync(path + suffix, 0o600);
  }
  return path;
}

/** A session of each fixture (see the fixtures README and `expected/aliases.json`). */
const SESSION_OF: Record<string, string> = {
  "hermes-v11.db": "20251221_090000_9738df",
  "hermes-v6.db": "20251211_090000_9738df",
  "hermes-v10-external.db": "legacy_s1",
  "hermes-v21.db": "20260501_090000_live01",
};

/** Every read command, with arguments that make it read a lot. */
function readCommands(id: string): string[][] {
  return [
    ["list"],
    ["list", "--all"],
    ["list", "--json"],
    ["show", id],
    ["show", "--json", id],
    ["show", "--last", "2", "--all", "--system", "--reasoning", "--full", id],
    ["search", "docker"],
    ["search", "--json", "--role", "user", "--sort", "newest", "--since", "1y", "docker"],
    ["search", "数据库迁移"],
    ["search", "数据"],
    ["export", "-"],
    ["export", "--format", "md", "-"],
    ["lineage", id],
    ["lineage", "--json", id],
    ["stats"],
    ["stats", "--json", "--top", "100"],
    ["usage"],
    ["usage", "--since", "all", "--by", "model", "--json"],
    ["usage", "--since", "all", "--by", "week", "--csv"],
    ["completions", "session-ids"],
    ["info"],
    ["info", "--json"],
    ["info", "--full"],
    ["prune", "--dry-run", "--older-than", "0"],
    ["prune", "--ghosts", "--dry-run", "--json"],
  ];
}

const FIXTURE_FILES = [
  "hermes-v11.db",
  "hermes-v6.db",
  "hermes-v10-external.db",
  "hermes-v21.db",
];

describe("read commands leave every file as it was", () => {
  for (const name of FIXTURE_FILES) {
    test(`every read command leaves a copy of ${name} (and its sidecars) byte for byte as it was`, async () => {
      const path = fixtureCopy(name);
      const dir = join(path, "..");
      const before = snapshot(dir);
      const id = SESSION_OF[name];
      for (const argv of readCommands(id)) {
        const run = await runCli(["--db", path, ...argv]);
        assert.equal(run.code, 0, `${argv.join(" ")} on ${name}: ${run.err}`);
        assert.deepEqual(snapshot(dir), before, `hermes-state ${argv.join(" ")} changed a file`);
      }
    });
  }

  test("commands that read the file to check it or copy it elsewhere leave it and its folder as they were", async () => {
    for (const name of FIXTURE_FILES) {
      const path = fixtureCopy(name);
      const dir = join(path, "..");
      const before = snapshot(dir);
      const out = tempDir();
      const commands = [
        ["doctor"],
        ["doctor", "--full"],
        ["export", join(out, "export.jsonl")],
        ["backup", join(out, "backup.db")],
        ["recover", path, join(out, "recovered.db")],
        ["copy", path, join(out, "copied.db")],
      ];
      for (const argv of commands) {
        const run = await runCli(["--db", path, ...argv]);
        // doctor says 1 of an older schema; the others must succeed.
        if (argv[0] === "doctor") assert.ok(run.code <= 1, `doctor on ${name}: ${run.err}`);
        else assert.equal(run.code, 0, `${argv[0]} on ${name}: ${run.err}`);
        assert.deepEqual(snapshot(dir), before, `hermes-state ${argv[0]} changed ${name}'s folder`);
      }
    }
  });

  test("through a symbolic link, read commands leave the file and its live -wal as they were, and no output may land on its sidecars", async () => {
    // SQLite keeps the sidecars beside the file a link leads to: the checks must look there.
    const path = fixtureCopy("hermes-v11.db");
    // A writer that stopped without closing leaves its last commit in the -wal alone.
    liveWalOf(
      path,
      "UPDATE sessions SET title = 'only in the wal' WHERE id = '20251221_090000_9738df'",
    );
    const dir = join(path, "..");
    const link = join(tempDir(), "link.db");
    symlinkSync(path, link);
    // The first reader after a crash rebuilds the -shm from the -wal (SQLite's own index, no data).
    const dataFiles = () => {
      const { "state.db-shm": _shm, ...files } = snapshot(dir);
      return files;
    };
    const before = dataFiles();
    for (const argv of readCommands(SESSION_OF["hermes-v11.db"])) {
      const run = await runCli(["--db", link, ...argv]);
      assert.equal(run.code, 0, `${argv.join(" ")} through a link: ${run.err}`);
      assert.deepEqual(
        dataFiles(),
        before,
        `hermes-state ${argv.join(" ")} through a link changed a file`,
      );
    }
    for (const sidecar of ["-wal", "-shm"]) {
      const run = await runCli(["--db", link, "export", "--force", path + sidecar]);
      assert.notEqual(run.code, 0, `export over ${sidecar} through a link was allowed`);
      assert.match(run.err, /database/);
    }
    assert.deepEqual(dataFiles(), before);
  });

  test("read commands on v11 answer as before (list, search, show succeed)", async () => {
    const path = fixtureCopy("hermes-v11.db");
    for (const argv of [["list"], ["search", "docker"], ["show", "20251221_090000_9738df"]]) {
      const run = await runCli(["--db", path, ...argv]);
      assert.equal(run.code, 0, `${argv.join(" ")}: ${run.err}`);
    }
  });

  test("search on a v6 file works without the upgrade: a trigram query falls back to substrings", async () => {
    const path = fixtureCopy("hermes-v6.db");
    const before = snapshot(join(path, ".."));
    const run = await runCli(["--db", path, "--json", "search", "数据库迁移"]);
    assert.equal(run.code, 0, run.err);
    const hits = JSON.parse(run.out) as { snippet: string }[];
    assert.ok(hits.length > 0);
    assert.ok(hits.every((hit) => JSON.stringify(hit).includes("数据库迁移")));
    assert.deepEqual(snapshot(join(path, "..")), before);
    const info = await runCli(["--db", path, "info", "--no-check"]);
    assert.match(info.out, /\nSchema version +6 \(older than 11: read as it is;/);
  });
});

/** Another application's SQLite file, and a 0-byte file. */
async function foreignFiles(): Promise<string[]> {
  const other = join(tempDir(), "notes.db");
  using raw = await rawOpen(other);
  raw.exec("PRAGMA journal_mode = DELETE; CREATE TABLE notes (body TEXT)");
  raw.exec("INSERT INTO notes VALUES ('not a Hermes file')");
  raw.close();
  const empty = join(tempDir(), "empty.db");
  writeFileSync(empty, "");
  return [other, empty];
}

describe("a file that is not a Hermes store", () => {
  test("every command refuses another application's SQLite file and a 0-byte file, changing nothing", async () => {
    for (const path of await foreignFiles()) {
      const dir = join(path, "..");
      const before = snapshot(dir);
      const commands = [
        ...readCommands("x"),
        ["delete", "--yes", "x"],
        ["rename", "x", "title"],
        ["prune", "--yes"],
        ["migrate"],
      ];
      for (const argv of commands) {
        const run = await runCli(["--db", path, ...argv]);
        assert.equal(run.code, 1, argv.join(" "));
        assert.equal(
          run.err,
          `hermes-state: not a Hermes state.db (no sessions table): ${path}\n`,
          argv.join(" "),
        );
        assert.deepEqual(snapshot(dir), before, `hermes-state ${argv.join(" ")} changed a file`);
      }
    }
  });

  test("import into a 0-byte file makes it a Hermes store; into another application's file it is refused", async () => {
    const [other, empty] = await foreignFiles();
    const line = JSON.stringify({ id: "s1", source: "cli", started_at: 1, messages: [] }) + "\n";
    const refused = await runCli(["--db", other, "import", "-"], { stdin: line });
    assert.equal(refused.code, 1);
    assert.equal(
      refused.err,
      `hermes-state: not a Hermes state.db (no sessions table): ${other}\n`,
    );
    const run = await runCli(["--db", empty, "import", "-"], { stdin: line });
    assert.equal(run.code, 0, run.err);
    assert.equal((await runCli(["--db", empty, "--json", "list"])).code, 0);
  });
});

describe("older files and migrate", () => {
  test("migrate upgrades a v6 file and says so on stderr; a second run has nothing to do", async () => {
    const path = fixtureCopy("hermes-v6.db");
    const run = await runCli(["--db", path, "migrate"]);
    assert.equal(run.code, 0, run.err);
    assert.equal(run.err, "upgraded schema 6 → 11\n");
    const again = await runCli(["--db", path, "migrate"]);
    assert.equal(again.err, "schema 11: nothing to upgrade\n");
    using raw = await rawOpen(path, true);
    assert.ok(raw.prepare("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts_trigram'").get());
  });

  test("migrate says on a terminal what it upgrades while the search indexes are built", async () => {
    const path = fixtureCopy("hermes-v6.db");
    const run = await runCli(["--db", path, "migrate"], { stderrIsTerminal: true });
    assert.equal(run.code, 0, run.err);
    assert.equal(
      run.err,
      `\r\x1b[KUpgrading ${path}, 76.0 KiB: schema 6 → 11, both search indexes built from every ` +
        "message…\r\x1b[Kupgraded schema 6 → 11\n",
    );
    const again = await runCli(["--db", path, "migrate"], { stderrIsTerminal: true });
    assert.equal(again.err, "schema 11: nothing to upgrade\n", "no line when nothing is built");
  });

  test("migrate leaves a schema-21 file as it is", async () => {
    const path = fixtureCopy("hermes-v21.db");
    const run = await runCli(["--db", path, "--json", "migrate"]);
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(JSON.parse(run.out).after, 21);
    assert.equal(run.err, "schema 21 is newer than 11: left as it is\n");
  });

  test("a write command that fails or is cancelled leaves an older file as it was", async () => {
    const path = fixtureCopy("hermes-v6.db");
    const id = SESSION_OF["hermes-v6.db"];
    const before = snapshot(join(path, ".."));
    const runs: [string[], string, number][] = [
      [["rename", "no-such-session", "t"], "", 1],
      [["rename", "", "t"], "", 2],
      [["delete", id], "n\n", 1],
      [["delete", "no-such-session"], "", 1],
      [["prune", "--older-than", "0"], "n\n", 1],
      [["prune", "--older-than", "100000"], "", 0],
      [["prune", "--ghosts"], "n\n", 1],
    ];
    for (const [argv, stdin, code] of runs) {
      const run = await runCli(["--db", path, ...argv], { stdin });
      assert.equal(run.code, code, `${argv.join(" ")}: ${run.err}`);
      assert.deepEqual(snapshot(join(path, "..")), before, `${argv.join(" ")} changed the file`);
    }
  });

  test("a write command upgrades an older file as the agent does", async () => {
    const path = fixtureCopy("hermes-v10-external.db");
    const run = await runCli(["--db", path, "rename", "legacy_s1", "renamed"]);
    assert.equal(run.code, 0, run.err);
    using raw = await rawOpen(path, true);
    assert.equal(raw.prepare("SELECT version FROM schema_version").get()!.version, 11);
  });
});

describe("locks", () => {
  test("read commands answer at once while another connection holds the write lock; a write gives up with the cause", async () => {
    const path = fixtureCopy("hermes-v11.db");
    const holder = await rawOpen(path);
    holder.exec("PRAGMA journal_mode = WAL");
    holder.exec("BEGIN IMMEDIATE");
    holder.exec("INSERT INTO state_meta (key, value) VALUES ('held', 'yes')");
    try {
      const env = { HERMES_STATE_LOCK_TIMEOUT: "0.3" };
      for (const argv of [["list"], ["search", "docker"], ["stats"], ["info", "--no-check"]]) {
        const started = performance.now();
        const run = await runCli(["--db", path, ...argv], { env });
        assert.equal(run.code, 0, `${argv.join(" ")}: ${run.err}`);
        assert.ok(performance.now() - started < 2000, `${argv.join(" ")} waited for the writer`);
      }
      const write = await runCli(["--db", path, "rename", "20251221_090000_9738df", "x"], { env });
      assert.equal(write.code, 1);
      assert.equal(
        waitedAnyTime(write.err),
        `hermes-state: database is locked by another process (waited 0 s): ${path}\n`,
      );
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
  });

  test("read commands answer while Python's sqlite3 in another process holds the write lock", {
    timeout: 60_000,
  }, async () => {
    const path = fixtureCopy("hermes-v11.db");
    const script = [
      "import sqlite3, sys, time",
      "c = sqlite3.connect(sys.argv[1], isolation_level=None)",
      "c.execute('PRAGMA journal_mode=WAL')",
      "c.execute('BEGIN IMMEDIATE')",
      "c.execute(\"INSERT INTO state_meta (key, value) VALUES ('held', 'yes')\")",
      "print('locked', flush=True)",
      "time.sleep(30)",
    ].join("\n");
    const python = spawn("python3", ["-c", script, path], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve, reject) => {
        python.stdout.once("data", () => resolve());
        python.once("exit", (code) => reject(new Error(`python3 exited ${code}`)));
      });
      const env = { HERMES_STATE_LOCK_TIMEOUT: "1" };
      const started = performance.now();
      const list = await runCli(["--db", path, "--json", "list"], { env });
      assert.equal(list.code, 0, list.err);
      assert.equal(JSON.parse(list.out).length, 20);
      const meta = await runCli(["--db", path, "info", "--json", "--no-check"], { env });
      assert.equal(meta.code, 0, meta.err);
      assert.ok(
        !JSON.parse(meta.out).meta_keys.includes("held"),
        "the uncommitted row is not seen",
      );
      assert.ok(performance.now() - started < 3000, "the reads waited for the writer");
      const write = await runCli(["--db", path, "rename", "20251221_090000_9738df", "x"], { env });
      assert.equal(
        write.err,
        `hermes-state: database is locked by another process (waited 1 s): ${path}\n`,
      );
    } finally {
      python.kill();
    }
  });
});

describe("a writer's leftover rollback journal", () => {
  test("a read names the journal and the way to finish it, changing nothing", async () => {
    const path = fixtureCopy("hermes-v11.db");
    hotJournalOf(path);
    const before = snapshot(join(path, ".."));
    const run = await runCli(["--db", path, "list"]);
    assert.equal(run.code, 1);
    assert.match(run.err, /left its rollback journal \(.*state\.db-journal\)/);
    assert.match(run.err, /doctor --fix/);
    assert.deepEqual(snapshot(join(path, "..")), before);
  });
});
