/**
 * Text snapshots under tests/snapshots/: `assertSnapshot(name, text)`
 * compares with the stored file; `UPDATE_SNAPSHOTS=1` rewrites the files.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import assert from "node:assert/strict";
import { ROOT } from "./_helpers.ts";

/** The snapshots folder. */
export const SNAPSHOTS = join(ROOT, "tests", "snapshots");

/** Asserts `actual` equals the stored snapshot `name` (a path under tests/snapshots/). */
export function assertSnapshot(name: string, actual: string): void {
  const file = join(SNAPSHOTS, name);
  if (process.env.UPDATE_SNAPSHOTS === "1") {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  let stored: string;
  try {
    stored = readFileSync(file, "utf8");
  } catch {
    assert.fail(`No snapshot ${name}: run the test with UPDATE_SNAPSHOTS=1 to write it`);
  }
  assert.equal(actual, stored, `Snapshot ${name} differs (UPDATE_SNAPSHOTS=1 rewrites it)`);
}
