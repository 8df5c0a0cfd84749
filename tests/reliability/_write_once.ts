/**
 * Worker process: opens a database with a plain connection, writes one
 * `state_meta` row, and closes (the last connection to close checkpoints
 * and deletes `-wal`/`-shm` when it sees no other process's lock).
 *
 * Argument: `{ path, key }` as JSON. Output: `wrote`.
 *
 * @module
 */
import process from "node:process";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import { say } from "./_runtimes.ts";

const { path, key } = JSON.parse(process.argv[2]) as { path: string; key: string };
const db = (await loadDriver())(path);
db.exec("PRAGMA busy_timeout = 5000");
db.prepare("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, 'other')").run(key);
db.close();
say("wrote");
