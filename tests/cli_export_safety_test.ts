/**
 * `export` never harms a file: it refuses to write over the database (by
 * any name, or its sidecars) or another SQLite file, and an interrupted
 * export leaves neither its output nor its temporary file behind.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { runCli, v11Copy } from "./_cli_io.ts";
import { cliArgv, rawOpen, tempDir } from "./_helpers.ts";

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

describe("export refuses an output that is a database", () => {
  test("export refuses the database itself, its sidecars and another name of it, and leaves it as it was", async () => {
    const path = v11Copy();
    const before = sha256(path);
    const link = join(dirname(path), "alias.db");
    symlinkSync(path, link);
    for (const output of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, link]) {
      const run = await runCli(["--db", path, "export", output]);
      assert.equal(run.code, 1, output);
      assert.equal(
        run.err,
        `hermes-state: Refusing to write the export over the database itself: ${output} (choose another OUTPUT)\n`,
      );
      const forced = await runCli(["--db", path, "export", "--force", output]);
      assert.equal(forced.code, 1, "--force never writes over the database");
    }
    assert.equal(sha256(path), before);
    assert.deepEqual(readdirSync(dirname(path)).sort(), ["alias.db", "state.db"]);
  });

  test("export refuses another SQLite file unless --force, and writes over a plain file", async () => {
    const path = v11Copy();
    const other = join(tempDir(), "notes.db");
    using raw = await rawOpen(other);
    raw.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
    raw.close();
    const before = sha256(other);
    const run = await runCli(["--db", path, "export", other]);
    assert.equal(run.code, 1);
    assert.equal(
      run.err,
      `hermes-state: Refusing to write the export over an SQLite database: ${other} (give --force to replace it)\n`,
    );
    assert.equal(sha256(other), before);
    const forced = await runCli(["--db", path, "export", "--force", other]);
    assert.equal(forced.code, 0, forced.err);
    assert.equal(readFileSync(other, "utf8").split("\n").length, 43);
    const plain = join(tempDir(), "old.jsonl");
    writeFileSync(plain, "old\n");
    assert.equal((await runCli(["--db", path, "export", plain])).code, 0);
    assert.notEqual(readFileSync(plain, "utf8"), "old\n");
  });
});

describe("export and backup name what is in the way of their output", () => {
  test("export and backup refuse a folder, a missing folder, a file as folder and a name ending in / in one line, before reading, and leave nothing behind", async () => {
    const path = v11Copy();
    const dir = tempDir();
    writeFileSync(join(dir, "plain.txt"), "keep me");
    const cases: [string, string][] = [
      [dir, "it is a folder"],
      [join(dir, "missing", "out"), `the folder ${join(dir, "missing")} does not exist`],
      [join(dir, "plain.txt", "out"), `${join(dir, "plain.txt")} is not a folder`],
      // Once all was done, the copy's last step failed with "unexpected error: ENOENT … link".
      [`${join(dir, "new")}/`, 'a file name cannot end in "/" (that names a folder)'],
    ];
    for (const [output, reason] of cases) {
      const exported = await runCli(["--db", path, "export", output]);
      assert.equal(exported.code, 1, output);
      assert.equal(exported.err, `hermes-state: Cannot write ${output}: ${reason}\n`);
      const backedUp = await runCli(["--db", path, "backup", "--force", output]);
      assert.equal(backedUp.code, 1, output);
      assert.equal(backedUp.err, `hermes-state: Cannot back up to ${output}: ${reason}\n`);
    }
    const recovered = await runCli(["recover", path, `${join(dir, "new")}/`]);
    assert.equal(recovered.code, 1);
    assert.equal(
      recovered.err,
      `hermes-state: Cannot recover into ${
        join(dir, "new")
      }/: a file name cannot end in "/" (that names a folder)\n`,
    );
    assert.deepEqual(readdirSync(dir), ["plain.txt"]);
    assert.equal(readFileSync(join(dir, "plain.txt"), "utf8"), "keep me");
  });
});

/** A database with enough sessions that exporting it takes a while. */
async function largeDb(): Promise<string> {
  const path = join(tempDir(), "state.db");
  using db = await SessionDB.open({ path, synchronous: "normal" });
  const text = "docker compose logs and a long answer about volumes ".repeat(40);
  db.importSession({ id: "seed", source: "cli", started_at: 1, messages: [] });
  for (let i = 0; i < 1500; i++) {
    db.importSession({
      id: `s${i}`,
      source: "cli",
      started_at: 1000 + i,
      messages: [{ role: "user", content: text, timestamp: 1000 + i }, {
        role: "assistant",
        content: text,
        timestamp: 1001 + i,
      }],
    });
  }
  db.close();
  return path;
}

describe("export writes where a shell's > would", () => {
  test("export through a link replaces the file it leads to and keeps the link; a link to nothing makes its file", async () => {
    const db = v11Copy();
    const dir = tempDir();
    const target = join(dir, "target.jsonl");
    writeFileSync(target, "old\n");
    const link = join(dir, "link.jsonl");
    symlinkSync(target, link);
    const run = await runCli(["--db", db, "export", link]);
    assert.equal(run.code, 0, run.err);
    assert.ok(lstatSync(link).isSymbolicLink(), "the link stays a link");
    assert.equal(readFileSync(target, "utf8").split("\n").length - 1, 42);
    const dangling = join(dir, "dangling.jsonl");
    const made = join(dir, "made.jsonl");
    symlinkSync(made, dangling);
    assert.equal((await runCli(["--db", db, "export", dangling])).code, 0);
    assert.ok(lstatSync(dangling).isSymbolicLink());
    assert.equal(readFileSync(made, "utf8").split("\n").length - 1, 42);
  });

  test("export over a file keeps its mode, owner and group; a new file is private (0600)", async () => {
    const db = v11Copy();
    const dir = tempDir();
    const fresh = join(dir, "fresh.jsonl");
    assert.equal((await runCli(["--db", db, "export", fresh])).code, 0);
    assert.equal(statSync(fresh).mode & 0o777, 0o600, "a new export is readable by its owner only");
    for (const [name, mode] of [["shared.jsonl", 0o644], ["notes.md", 0o640]] as const) {
      const target = join(dir, name);
      writeFileSync(target, "old\n");
      chmodSync(target, mode);
      // Owned by another user, where this process may give it (root): as the shell's > keeps it.
      const owner = process.getuid?.() === 0 ? 4242 : statSync(target).uid;
      if (process.getuid?.() === 0) chownSync(target, owner, 4343);
      const group = statSync(target).gid;
      for (const output of [target, `${target}.gz`]) {
        if (output.endsWith(".gz")) {
          writeFileSync(output, "old");
          chmodSync(output, mode);
          if (process.getuid?.() === 0) chownSync(output, owner, group);
        }
        const run = await runCli(["--db", db, "export", "--format", "jsonl", output]);
        assert.equal(run.code, 0, run.err);
        const now = statSync(output);
        assert.equal((now.mode & 0o777).toString(8), mode.toString(8), `${name}: mode kept`);
        assert.equal(now.uid, owner, `${output}: owner kept`);
        assert.equal(now.gid, group, `${output}: group kept`);
        assert.ok(readFileSync(output).length > 4, "the export was written");
      }
    }
  });

  test("export into a named pipe writes through it, and into a device in place (a device stays a device)", async () => {
    const db = v11Copy();
    const dir = tempDir();
    const fifo = join(dir, "pipe");
    if (spawnSync("mkfifo", [fifo]).status !== 0) return; // no mkfifo here
    let read = "";
    const reader = spawn("cat", [fifo]);
    reader.stdout.setEncoding("utf8").on("data", (chunk: string) => void (read += chunk));
    const closed = new Promise((resolve) => reader.on("close", resolve));
    const run = await runCli(["--db", db, "export", fifo]);
    await closed;
    assert.equal(run.code, 0, run.err);
    assert.equal(read.split("\n").length - 1, 42);
    assert.ok(lstatSync(fifo).isFIFO(), "the pipe stays a pipe");
    // Devices of our own (mknod needs root): a null device, and a full one (1, 7).
    const devNull = join(dir, "null");
    const devFull = join(dir, "full");
    if (spawnSync("mknod", [devNull, "c", "1", "3"]).status !== 0) return;
    spawnSync("mknod", [devFull, "c", "1", "7"]);
    assert.equal((await runCli(["--db", db, "export", devNull])).code, 0);
    assert.ok(lstatSync(devNull).isCharacterDevice(), "the device was replaced by a file");
    const full = await runCli(["--db", db, "export", devFull]);
    assert.equal(full.code, 1);
    assert.match(full.err, /Cannot write .*full: the disk is full/);
    assert.ok(lstatSync(devFull).isCharacterDevice());
    const backup = await runCli(["--db", db, "backup", "--force", devNull]);
    assert.equal(backup.code, 1);
    assert.match(backup.err, /it is not a regular file \(a device or a pipe\)/);
    assert.ok(lstatSync(devNull).isCharacterDevice());
    assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith(".")), [], "no file left");
  });
});

describe("an interrupted export", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    test(`export stopped by ${signal} removes its temporary file and writes no output`, {
      timeout: 60_000,
    }, async () => {
      const path = await largeDb();
      const out = join(tempDir(), "backup.jsonl");
      const [command, ...args] = cliArgv(["--db", path, "export", out]);
      const child = spawn(command, args, {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr.on("data", (chunk) => err += chunk);
      const exited = new Promise<number | string | null>((resolve) =>
        child.on("close", (code, killed) => resolve(code ?? killed))
      );
      const folder = dirname(out);
      const started = Date.now();
      while (!readdirSync(folder).some((name) => name.endsWith(".tmp"))) {
        assert.ok(Date.now() - started < 30_000, `no temporary file appeared: ${err}`);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      child.kill(signal);
      const code = await exited;
      // Deno's node:child_process reports any child it sent a signal to as
      // killed by it, whatever its exit code; Node and Bun report the code.
      if (runtimeName() !== "deno") assert.equal(code, signal === "SIGINT" ? 130 : 143, err);
      assert.equal(
        err,
        `hermes-state export: interrupted by ${signal}: the partial output was removed\n`,
      );
      assert.deepEqual(readdirSync(folder), [], "neither the output nor a temporary file is left");
      assert.ok(!existsSync(out));
    });
  }
});
