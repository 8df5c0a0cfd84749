/**
 * What `doctor --fix` says of its WAL checkpoint: a TRUNCATE checkpoint that
 * finishes answers 0 frames copied (SQLite counts after emptying the WAL),
 * which the report once repeated after copying every frame a writer left.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { doctor } from "../../lib/health/doctor.ts";
import { checkpointTruncate } from "../../lib/health/repairs.ts";
import { copyFixture, rawOpen } from "../_helpers.ts";
import { runCli } from "../_cli_io.ts";
import { liveWalOf, walFrames } from "./_damaged_files.ts";

/** A copy of the v11 fixture beside a live `-wal` of one commit; its frame count. */
function fileWithLiveWal(): { path: string; frames: number } {
  const path = copyFixture("hermes-v11.db");
  liveWalOf(path, "UPDATE sessions SET title = title || ' (wal)'");
  const frames = walFrames(`${path}-wal`);
  assert.ok(frames.length > 0 && frames[frames.length - 1].commit);
  return { path, frames: frames.length };
}

describe("doctor --fix on a WAL a writer left", () => {
  test("checkpointTruncate() answers the frames the WAL held, though TRUNCATE answers 0 once done", async () => {
    const { path, frames } = fileWithLiveWal();
    using db = await rawOpen(path);
    const answer = checkpointTruncate(db);
    assert.deepEqual(answer, { busy: 0, log: 0, checkpointed: 0, walFrames: frames });
    assert.equal(statSync(`${path}-wal`).size, 0);
  });

  test("checkpointTruncate() answers -1 frames for a rollback-journal file", async () => {
    const path = copyFixture("hermes-v11.db");
    using db = await rawOpen(path);
    db.exec("PRAGMA journal_mode = DELETE");
    const answer = checkpointTruncate(db);
    assert.equal(answer.log, -1);
    assert.equal(answer.walFrames, -1);
  });

  test("doctor() with fix says how many frames the WAL held, not 0 copied", async () => {
    const { path, frames } = fileWithLiveWal();
    const report = await doctor(path, { fix: true });
    const wal = report.repairs.find((repair) => repair.name === "wal");
    assert.ok(wal !== undefined, JSON.stringify(report.repairs));
    const held = wal.summary.match(
      /^wal_checkpoint\(TRUNCATE\): the WAL's (\d+) frames are in the database file, WAL truncated to 0 bytes$/,
    );
    assert.ok(held !== null, wal.summary);
    // The repairs before the checkpoint may have added frames of their own.
    assert.ok(Number(held[1]) >= frames, `${held[1]} < ${frames}`);
    assert.equal(statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0, 0);
  });

  test("doctor --fix prints the frames the WAL held", async () => {
    const { path } = fileWithLiveWal();
    const run = await runCli(["--db", path, "doctor", "--fix"]);
    assert.equal(run.code, 0, run.out + run.err);
    assert.match(run.out, /the WAL's \d+ frames are in the database file, WAL truncated/);
    assert.doesNotMatch(run.out, /0 frames copied/);
  });
});
