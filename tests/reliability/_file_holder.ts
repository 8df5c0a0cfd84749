/**
 * Worker process: holds the whole file of a database, as a connection
 * recovering a WAL after a crash briefly does (`locking_mode = EXCLUSIVE`,
 * then `BEGIN EXCLUSIVE`: nobody else can even read), writes `state_meta`
 * key `locker`, and once the file `goFile` exists (or two minutes have
 * passed) holds it `holdMs` more, then commits and closes. Started ahead,
 * it has the file when the test needs it, and the hold counts from when
 * the test says go.
 *
 * Argument: `{ path, goFile, holdMs }` as JSON. Output: `locked`, then
 * `released`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import { sleepSync } from "../../lib/sqlite/write.ts";
import { say } from "./_runtimes.ts";

const { path, goFile, holdMs } = JSON.parse(process.argv[2]) as {
  path: string;
  goFile: string;
  holdMs: number;
};
const db = (await loadDriver())(path);
db.exec("PRAGMA busy_timeout = 5000");
db.exec("PRAGMA locking_mode = EXCLUSIVE");
db.exec("BEGIN EXCLUSIVE");
db.prepare("INSERT OR REPLACE INTO state_meta (key, value) VALUES ('locker', 'held')").run();
say("locked");
// A test that failed before its go leaves no holder behind for long.
const giveUpAt = Date.now() + 120_000;
while (!existsSync(goFile) && Date.now() < giveUpAt) sleepSync(2);
sleepSync(holdMs);
db.exec("COMMIT");
db.close();
say("released");
