/**
 * Commits past a broken `-wal` frame: salvaged into the new file `recover`
 * writes when a later commit wrote the broken frame's page again (the image
 * is then the database as the last commit left it, byte for byte), never
 * when the commits after it need that frame; the damaged file and its
 * `-wal` are only read.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { recoverDatabase } from "../../lib/health/recover.ts";
import { salvageWalImage, writeWalImage } from "../../lib/health/wal_salvage.ts";
import { rawOpen, runPython } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import {
  crashedWithThreeWalCommits,
  fileAndWal,
  flipFrameByte,
  frameOfSecondCommit,
} from "./_damaged_files.ts";

/** What a sound checkpoint of `path` and its `-wal` gives: the truth, from copies. */
function checkpointed(path: string): Uint8Array {
  const copy = join(dirname(path), "truth.db");
  copyFileSync(path, copy);
  copyFileSync(`${path}-wal`, `${copy}-wal`);
  runPython([
    "import sqlite3, sys",
    "c = sqlite3.connect(sys.argv[1])",
    "c.execute('PRAGMA wal_checkpoint(TRUNCATE)')",
    "c.close()",
  ], copy);
  return readFileSync(copy);
}

/** The new file's counts and checks. */
async function inspect(path: string): Promise<{
  messages: number;
  walMessages: number;
  integrity: string[];
  foreignKeys: number;
}> {
  using db = await rawOpen(path);
  for (const table of ["messages_fts", "messages_fts_trigram"]) {
    db.exec(`INSERT INTO ${table}(${table}) VALUES('integrity-check')`); // throws when unsound
  }
  return {
    messages: Number(db.prepare("SELECT count(*) AS n FROM messages").get()?.n),
    walMessages: Number(
      db.prepare("SELECT count(*) AS n FROM messages WHERE content LIKE 'wal %'").get()?.n,
    ),
    integrity: db.prepare("PRAGMA integrity_check").all().map((r) => String(Object.values(r)[0])),
    foreignKeys: db.prepare("PRAGMA foreign_key_check").all().length,
  };
}

describe("salvageWalImage()", () => {
  test("salvageWalImage() gives the last commit's database byte for byte when a later commit wrote the broken frame's page again", () => {
    const path = crashedWithThreeWalCommits();
    const truth = checkpointed(path);
    const wal = `${path}-wal`;
    flipFrameByte(wal, frameOfSecondCommit(wal, true));
    const bytes = readFileSync(wal);
    const made = salvageWalImage(bytes);
    assert.ok("salvaged" in made, "reason" in made ? made.reason : "");
    assert.equal(made.commits, 2);
    const image = join(dirname(path), "image.db");
    writeWalImage(path, bytes, made, made.salvaged, image);
    assert.ok(readFileSync(image).equals(truth), "the image is the checkpointed file");
  });

  test("salvageWalImage() refuses when the commits after the broken frame need it", () => {
    const path = crashedWithThreeWalCommits();
    const wal = `${path}-wal`;
    const frame = frameOfSecondCommit(wal, false);
    flipFrameByte(wal, frame);
    const made = salvageWalImage(readFileSync(wal));
    assert.ok("reason" in made);
    assert.match(made.reason, new RegExp(`^frame ${frame} \\(page \\d+\\) is the last version`));
  });

  test("salvageWalImage() finds nothing to salvage in a sound -wal", () => {
    const path = crashedWithThreeWalCommits();
    const made = salvageWalImage(readFileSync(`${path}-wal`));
    assert.deepEqual(made, { reason: "no commit follows a broken frame" });
  });
});

describe("recoverDatabase() past a broken -wal frame", () => {
  test("recoverDatabase() salvages the commits past it into the new file, verified, and leaves the file and its -wal as they were", async () => {
    const path = crashedWithThreeWalCommits();
    const wal = `${path}-wal`;
    const frame = frameOfSecondCommit(wal, true);
    flipFrameByte(wal, frame);
    const before = fileAndWal(path);
    const dest = join(dirname(path), "recovered.db");
    const result = await recoverDatabase(path, dest);
    assert.deepEqual(result.walCommitsIgnored, { frame, commits: 2 });
    assert.equal(result.walCommitsSalvaged, 2);
    assert.equal(result.walSalvageRefused, null);
    assert.equal(result.source, path);
    assert.deepEqual(result.lost, []);
    assert.deepEqual(await inspect(dest), {
      messages: 197 + 15,
      walMessages: 15,
      integrity: ["ok"],
      foreignKeys: 0,
    });
    assert.deepEqual(
      fileAndWal(path),
      before,
      "the file and its -wal are byte for byte as they were",
    );
    assert.deepEqual(
      readdirSync(dirname(path)).filter((name) => name.startsWith(".")),
      [],
      "no temporary file is left",
    );
  });

  test("recover says what it salvaged and exits 0; when it cannot, it names the commits left out and why", async () => {
    const salvaged = crashedWithThreeWalCommits();
    flipFrameByte(`${salvaged}-wal`, frameOfSecondCommit(`${salvaged}-wal`, true));
    const ok = await runCli(["recover", salvaged, join(dirname(salvaged), "r.db")]);
    assert.equal(ok.code, 0, ok.out + ok.err);
    assert.match(ok.out, /ignores the 2 commits after it; a later commit wrote that frame's page/);
    assert.match(ok.out, /Nothing was lost/);

    const refused = crashedWithThreeWalCommits();
    const frame = frameOfSecondCommit(`${refused}-wal`, false);
    flipFrameByte(`${refused}-wal`, frame);
    const dest = join(dirname(refused), "r.db");
    const left = await runCli(["recover", refused, dest]);
    assert.equal(left.code, 1, left.out + left.err);
    assert.match(
      left.out,
      new RegExp(
        `Commits left out: the -wal's frame ${frame} fails its checksum.*They cannot be salvaged: frame ${frame} \\(page \\d+\\) is the last version`,
      ),
    );
    const found = await inspect(dest);
    assert.equal(found.walMessages, 5, "the first commit, which SQLite honours, is kept");
  });
});
