/**
 * The CLI on a file or folder the user may not write: read commands work
 * and change nothing; write commands say which of the two is read-only.
 * The CLI runs as a user file modes apply to (see `_unprivileged.ts`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { folderWithFixture, tempDir } from "../_helpers.ts";
import { snapshot } from "./_checks.ts";
import { cliAs, isRoot, unprivilegedSetup } from "./_unprivileged.ts";
import { liveWalOf } from "../health/_damaged_files.ts";

const asRoot = isRoot() ? " (root runs it without its file privileges)" : "";

/** A fresh folder of the test's own, and how to run as an unprivileged user (found once). */
const setup = unprivilegedSetup(tempDir);

test(
  `the CLI and the kit say a file this user may not read is not readable by it, naming it${asRoot}`,
  {
    timeout: 120_000,
  },
  async (t) => {
    const { dir, as } = await setup();
    if (typeof as === "string") return t.skip(as);
    const path = folderWithFixture(dir, "unreadable", 0o777, 0o000);
    const said = `hermes-state: Cannot open database "${path}": permission denied ` +
      "(this user may not read the file: run as its owner or root)\n";
    for (
      const args of [
        ["--db", path, "list"],
        ["--db", path, "doctor"],
        ["--db", path, "backup", join(dir, "unreadable", "b.db")],
        ["recover", path, join(dir, "unreadable", "r.db")],
      ]
    ) {
      const run = await cliAs(as, args);
      assert.equal(run.code, 1, `${args.join(" ")}: ${run.err}`);
      // (Deno fetching the PostgreSQL client into the user's fresh cache may come first.)
      assert.ok(run.err.endsWith(said), `${args.join(" ")}: ${run.err}`);
    }
  },
);

test(
  `the CLI reads a database in a read-only folder without changing it, and a write says the folder is read-only${asRoot}`,
  {
    timeout: 120_000,
  },
  async (t) => {
    const { dir, as } = await setup();
    if (typeof as === "string") return t.skip(as);
    const path = folderWithFixture(dir, "closed", 0o555, 0o666);
    const before = snapshot(join(dir, "closed"));
    try {
      for (const args of [["list"], ["search", "docker"], ["show", "20251221_090000_9738df"]]) {
        const run = await cliAs(as, ["--db", path, ...args]);
        assert.equal(run.code, 0, `${args.join(" ")}: ${run.err}`);
      }
      const info = await cliAs(as, ["--db", path, "info", "--no-check"]);
      assert.equal(info.code, 0, info.err);
      assert.match(info.out, /^Path +\S+state\.db \(read-only folder\)\n/);
      const write = await cliAs(as, ["--db", path, "rename", "20251221_090000_9738df", "x"]);
      assert.equal(write.code, 1);
      assert.equal(
        write.err,
        `hermes-state: Cannot write ${path}: the folder is read-only (SQLite keeps the -wal and -shm files beside the database)\n`,
      );
      const fix = await cliAs(as, ["--db", path, "doctor", "--fix"]);
      assert.equal(fix.code, 1, fix.err);
      assert.equal(fix.err, write.err);
      assert.deepEqual(snapshot(join(dir, "closed")), before, "nothing created or changed");
    } finally {
      chmodSync(join(dir, "closed"), 0o755); // so that the temporary folder can be removed
    }
  },
);

test(
  `the CLI reads a read-only file without changing it, and a write says the file is read-only${asRoot}`,
  {
    timeout: 120_000,
  },
  async (t) => {
    const { dir, as } = await setup();
    if (typeof as === "string") return t.skip(as);
    const path = folderWithFixture(dir, "open", 0o777, 0o444);
    const before = snapshot(join(dir, "open"))["state.db"];
    const list = await cliAs(as, ["--db", path, "list"]);
    assert.equal(list.code, 0, list.err);
    const info = await cliAs(as, ["--db", path, "--json", "info", "--no-check"]);
    assert.equal(info.code, 0, info.err);
    assert.equal(JSON.parse(info.out).read_only, "file");
    const write = await cliAs(as, ["--db", path, "rename", "20251221_090000_9738df", "x"]);
    assert.equal(write.code, 1);
    assert.equal(write.err, `hermes-state: Cannot write ${path}: the file is read-only\n`);
    // doctor --fix: the check report, then the same words (was "attempt to write a readonly
    // database", without the path).
    const fix = await cliAs(as, ["--db", path, "doctor", "--fix"]);
    assert.equal(fix.code, 1, fix.err);
    assert.match(fix.out, /integrity/);
    assert.equal(fix.err, `hermes-state: Cannot write ${path}: the file is read-only\n`);
    assert.equal(snapshot(join(dir, "open"))["state.db"], before);
  },
);

test(`the CLI words damage met reading another user's file without locks as a read the owner may have torn, with doctor if it stays${asRoot}`, async (t) => {
  const { dir, as } = await setup();
  if (typeof as === "string") return t.skip(as);
  const path = folderWithFixture(dir, "theirs", 0o777, 0o444);
  // Four pages zeroed in the middle, where the messages' rows are (here real damage).
  chmodSync(path, 0o644);
  const bytes = readFileSync(path);
  const pages = bytes.length / 4096;
  bytes.fill(0, Math.floor(pages / 2) * 4096, (Math.floor(pages / 2) + 4) * 4096);
  writeFileSync(path, bytes);
  chmodSync(path, 0o444);
  const run = await cliAs(as, ["--db", path, "export"]);
  assert.equal(run.code, 1);
  assert.equal(
    // The last line: a first run of Deno in the worker's fresh home says what it downloads.
    run.err.split(/(?<=\n)(?=.)/).at(-1),
    `hermes-state: database disk image is malformed: ${path} is read without locks (this user may ` +
      `not write it or its -shm), so its owner's Hermes may have written it during the read; run ` +
      `it again (as the owner or root it is read with locks), and "hermes-state --db ${path} ` +
      'doctor" if it stays\n',
  );
});

test(
  `a read-only folder holding a -wal but no -shm: every read command and doctor say the -shm is missing${asRoot}`,
  { timeout: 120_000 },
  async (t) => {
    const { dir, as } = await setup();
    if (typeof as === "string") return t.skip(as);
    const path = folderWithFixture(dir, "walonly", 0o777, 0o666);
    liveWalOf(path, "UPDATE sessions SET title = 'live' WHERE rowid = 1");
    rmSync(`${path}-shm`, { force: true });
    chmodSync(join(dir, "walonly"), 0o555);
    const before = snapshot(join(dir, "walonly"));
    const said = `hermes-state: Cannot open database "${path}": the folder is read-only and ` +
      "reading a WAL database needs its -shm file there\n";
    for (const args of [["list"], ["info"], ["doctor"]]) {
      const run = await cliAs(as, ["--db", path, ...args]);
      assert.equal(run.code, 1, `${args.join(" ")}: ${run.err}`);
      assert.ok(run.err.endsWith(said), `${args.join(" ")}: ${run.err}`);
    }
    assert.deepEqual(snapshot(join(dir, "walonly")), before);
  },
);
