/**
 * Worker process: takes the write lock of a database (`BEGIN IMMEDIATE`),
 * writes `state_meta` key `locker`, holds the lock for `holdMs`, then commits.
 * With `exclusive`, it holds the whole file (`locking_mode = EXCLUSIVE`), as
 * a connection recovering a WAL after a crash briefly does: then nobody
 * else can even read until it closes. With `goFile`, the `holdMs` count
 * from when that file exists (or two minutes have passed): started ahead,
 * it has the lock when the test needs it, and the hold counts from the
 * test's go.
 *
 * Argument: `{ path, holdMs, exclusive?, goFile? }` as JSON. Output:
 * `locked`, then `released`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import { sleepSync } from "../../lib/sqlite/write.ts";
import { say } from "./_runtimes.ts";

const { path, holdMs, exclusive, goFile } = JSON.parse(process.argv[2]) as {
  path: string;
  holdMs: number;
  exclusive?: boolean;
  goFile?: string;
};
const db = (await loadDriver())(path);
db.exec("PRAGMA busy_timeout = 5000");
if (exclusive) db.exec("PRAGMA locking_mode = EXCLUSIVE");
db.exec(exclusive ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE");
db.prepare("INSERT OR REPLACE INTO state_meta (key, value) VALUES ('locker', 'held')").run();
say("locked");
if (goFile !== undefined) {
  // A test that failed before its go leaves no holder behind for long.
  const giveUpAt = Date.now() + 120_000;
  while (!existsSync(goFile) && Date.now() < giveUpAt) sleepSync(2);
}
sleepSync(holdMs);
db.exec("COMMIT");
db.close();
say("released");
