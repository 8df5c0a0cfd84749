/**
 * Worker process: searches while writers write, until `stopFile` exists.
 *
 * Each round reads, in one read transaction, the number of messages and the
 * number of hits for `hello` (which every test message contains) in both FTS
 * tables: the three must be equal, and never smaller than in the round
 * before. It also calls `searchMessages` (when that is implemented), which
 * must never throw.
 *
 * Argument: `{ path, stopFile }` as JSON. Output: `ready` once open, then
 * `reads <rounds> <last count> <searches>`, or `mismatch …` and exit code 2.
 *
 * @module
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { loadDriver } from "../../lib/sqlite/driver/load.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { sleepSync } from "../../lib/sqlite/write.ts";
import { say } from "./_runtimes.ts";

const { path, stopFile } = JSON.parse(process.argv[2]) as { path: string; stopFile: string };

const open = await loadDriver();
const raw = open(path, { readonly: true });
raw.exec("PRAGMA busy_timeout = 1000");
const countMessages = raw.prepare("SELECT count(*) AS n FROM messages");
const countFts = raw.prepare(
  "SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'hello'",
);
const countTrigram = raw.prepare(
  "SELECT count(*) AS n FROM messages_fts_trigram WHERE messages_fts_trigram MATCH 'hello'",
);
const db = await SessionDB.open({ path, readonly: true });
let searchable = true;

let rounds = 0;
let searches = 0;
let last = 0;
// Told before the first round, so a test can have the writers start after it (on a busy
// machine the writers were done before this process had read once).
say("ready");
while (!existsSync(stopFile)) {
  raw.exec("BEGIN");
  const n = Number(countMessages.get()!.n);
  const fts = Number(countFts.get()!.n);
  const trigram = Number(countTrigram.get()!.n);
  raw.exec("COMMIT");
  if (fts !== n || trigram !== n || n < last) {
    say(`mismatch messages=${n} fts=${fts} trigram=${trigram} before=${last}`);
    process.exit(2);
  }
  last = n;
  rounds++;
  if (searchable) {
    try {
      db.searchMessages("hello OR from", { limit: 5 });
      searches++;
    } catch (error) {
      if (!String(error).includes("not implemented yet")) throw error;
      searchable = false;
    }
  }
  sleepSync(1);
}
db.close();
raw.close();
say(`reads ${rounds} ${last} ${searches}`);
