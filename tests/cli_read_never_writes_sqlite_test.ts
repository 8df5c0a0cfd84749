/**
 * A command that only reads never changes a file, in the states a file is
 * found in: a live `-wal` left by a writer that died, a rollback journal
 * left by one, a writer that dies while a long read (`serve`) is open, a
 * long read (`serve`, `show --follow`) that opens the file again beside the
 * `-wal` and `-shm` its first connection made, and paths that are no file
 * (a pipe, a device). Each compares the bytes of the file and its sidecars
 * before and after.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { main } from "../lib/cli/main.ts";
import { interruptibleIo, runCli } from "./_cli_io.ts";
import { copyFixture, rawOpen, tempDir } from "./_helpers.ts";
import { hotJournalOf, liveWalOf } from "./health/_damaged_files.ts";

const SESSION = "20251221_090000_9738df";

/** sha256 of every file in the folder of `path`, but SQLite's own index of the -wal (`-shm`). */
function dataFiles(path: string): Record<string, string> {
  const dir = join(path, "..");
  return Object.fromEntries(
    readdirSync(dir).filter((name) => !name.endsWith("-shm")).sort().map((name) => [
      name,
      createHash("sha256").update(readFileSync(join(dir, name))).digest("hex"),
    ]),
  );
}

/** Runs `serve` on `path` in-process until `during` is done, then stops it with Ctrl-C. */
async function whileServing(
  path: string,
  during: (get: (route: string) => Promise<{ status: number; body: string }>) => Promise<void>,
): Promise<void> {
  const io = interruptibleIo();
  const running = main(["--db", path, "serve", "--port", "0"], io);
  let url: string | undefined;
  // Counted in time, not tries: on a loaded machine 200 tries of 25 ms ended before serve started.
  const deadline = Date.now() + 30_000;
  while (url === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    url = /Open (http:\S+)/.exec(io.out)?.[1];
  }
  assert.ok(url !== undefined, `serve did not start in 30 s: ${io.err}`);
  const get = async (route: string) => {
    const response = await fetch(new URL(route, url));
    return { status: response.status, body: await response.text() };
  };
  try {
    await during(get);
  } finally {
    io.interrupt();
    assert.equal(await running, 0, io.err);
  }
}

describe("a read that outlives a writer", () => {
  test("serve, stopped after a writer died with commits in the -wal, leaves the file and that -wal as they were", async () => {
    const path = copyFixture("hermes-v11.db");
    let before: Record<string, string> = {};
    await whileServing(path, async (get) => {
      assert.equal((await get("/api/sessions")).status, 200);
      liveWalOf(path, `UPDATE sessions SET title = 'only in the wal' WHERE id = '${SESSION}'`);
      before = dataFiles(path);
      const page = await get("/api/sessions?limit=100");
      assert.equal(page.status, 200);
      assert.match(page.body, /only in the wal/, "the -wal's commit is read");
      assert.deepEqual(dataFiles(path), before);
    });
    assert.deepEqual(dataFiles(path), before, "stopping serve checkpointed the writer's -wal");
    assert.ok(existsSync(`${path}-wal`));
  });

  test("serve on a rollback-journal file never plays back the journal a writer left when it died", async () => {
    const path = copyFixture("hermes-v11.db");
    {
      using raw = await rawOpen(path);
      raw.exec("PRAGMA journal_mode = DELETE");
    }
    let before: Record<string, string> = {};
    await whileServing(path, async (get) => {
      assert.equal((await get("/api/sessions")).status, 200);
      hotJournalOf(path);
      before = dataFiles(path);
      for (let i = 0; i < 3; i++) {
        assert.notEqual((await get("/api/sessions")).status, 200, "a torn file was served");
        assert.deepEqual(dataFiles(path), before, "a read played the writer's journal back");
      }
    });
    assert.deepEqual(dataFiles(path), before);
    assert.ok(existsSync(`${path}-journal`));
  });
});

describe("a read that outlives its first connection", () => {
  test("serve on a WAL file without sidecars, searched on its workers and opened again after the file was touched, leaves only the file", async () => {
    const path = copyFixture("hermes-v11.db");
    const before = dataFiles(path);
    await whileServing(path, async (get) => {
      assert.equal((await get("/api/sessions")).status, 200);
      assert.equal((await get("/api/search?q=docker")).status, 200);
      // A tool that restored the file's time: the store opens the file again beside the
      // -wal and -shm its first connection made, then closes that one.
      const later = new Date(Date.now() + 60_000);
      utimesSync(path, later, later);
      await new Promise((resolve) => setTimeout(resolve, 250));
      assert.equal((await get("/api/sessions")).status, 200);
      assert.equal((await get("/api/search?q=docker")).status, 200);
    });
    // Before the fix the store's second connection was SQLite's read-only mode: closed
    // last, it left both sidecars behind.
    assert.deepEqual(readdirSync(join(path, "..")), ["state.db"]);
    assert.deepEqual(dataFiles(path), before);
  });

  test("show --follow on a WAL file without sidecars, opened again after the file was touched, leaves only the file", async () => {
    const path = copyFixture("hermes-v11.db");
    const before = dataFiles(path);
    const io = interruptibleIo();
    const running = main(["--db", path, "show", "--follow=0.05", SESSION], io);
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const deadline = Date.now() + 30_000;
    while (!io.listening && Date.now() < deadline) await pause(25);
    assert.ok(io.listening, `show --follow did not start in 30 s: ${io.err}`);
    await pause(200);
    const later = new Date(Date.now() + 60_000);
    utimesSync(path, later, later);
    await pause(400);
    io.interrupt();
    assert.equal(await running, 0, io.err);
    assert.deepEqual(readdirSync(join(path, "..")), ["state.db"]);
    assert.deepEqual(dataFiles(path), before);
  });
});

describe("a path that is no file", () => {
  test("a named pipe as --db is refused at once, naming it, and nothing is made beside it", async (t) => {
    const dir = tempDir();
    const fifo = join(dir, "state.db");
    if (spawnSync("mkfifo", [fifo]).status !== 0) return t.skip("no mkfifo here");
    for (const argv of [["list"], ["search", "docker"], ["info"], ["export", "-"], ["stats"]]) {
      const run = await runCli(["--db", fifo, ...argv]);
      assert.equal(run.code, 1, argv.join(" "));
      assert.equal(
        run.err,
        `hermes-state: Cannot open database "${fifo}": it is not a file but a named pipe\n`,
      );
      assert.deepEqual(readdirSync(dir), ["state.db"]);
    }
  });

  test("/dev/null as --db is refused as a device, and no -journal, -wal or -shm is made beside it", async () => {
    const before = ["-journal", "-wal", "-shm"].map((suffix) => existsSync(`/dev/null${suffix}`));
    for (const argv of [["list"], ["show", SESSION], ["usage"], ["completions", "session-ids"]]) {
      const run = await runCli(["--db", "/dev/null", ...argv]);
      assert.equal(run.code, 1, argv.join(" "));
      assert.equal(
        run.err,
        'hermes-state: Cannot open database "/dev/null": it is not a file but a device\n',
      );
    }
    const now = ["-journal", "-wal", "-shm"].map((suffix) => existsSync(`/dev/null${suffix}`));
    assert.deepEqual(now, before);
  });
});

describe("every read command on a file a writer left", () => {
  const commands = [
    ["list", "--all"],
    ["show", SESSION],
    ["search", "walonlyzebra"],
    ["stats"],
    ["info", "--full"],
    ["lineage", SESSION],
    ["usage", "--since", "all"],
    ["export", "-"],
    ["doctor", "--full"],
    ["completions", "session-ids", "2025"],
  ];

  test("with commits only in its -wal: they are read, and the file and -wal are left as they were", async () => {
    const path = copyFixture("hermes-v11.db");
    liveWalOf(
      path,
      `UPDATE messages SET content = content || ' walonlyzebra' WHERE session_id = '${SESSION}'`,
    );
    const before = dataFiles(path);
    for (const argv of commands) {
      const run = await runCli(["--db", path, ...argv]);
      assert.ok(run.code === 0 || argv[0] === "doctor", `${argv.join(" ")}: ${run.err}`);
      assert.deepEqual(dataFiles(path), before, `${argv.join(" ")} changed a file`);
    }
    const search = await runCli(["--db", path, "--json", "search", "walonlyzebra"]);
    assert.ok(JSON.parse(search.out).length > 0, "the -wal's commit is searched");
  });

  test("in an older schema (v6): no command upgrades it", async () => {
    const path = copyFixture("hermes-v6.db");
    const before = dataFiles(path);
    for (const argv of commands) {
      await runCli(["--db", path, ...argv.map((word) => word === SESSION ? "x" : word)]);
      assert.deepEqual(dataFiles(path), before, `${argv.join(" ")} changed a file`);
    }
    using raw = await rawOpen(path, true);
    assert.equal(raw.prepare("SELECT max(version) AS v FROM schema_version").get()?.v, 6);
  });
});
