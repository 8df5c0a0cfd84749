/**
 * Worker process: a reader that lives on, as `serve` does, polling one
 * session's message count through one read-only `SessionDB`, so a test can
 * run it as another user while the file's owner writes.
 *
 * Argument: `{ path, session, until }` as JSON. Output, one line each:
 * `count <n> <dataVersion>` when the count is first read and whenever it
 * changes; then `done` once it reaches `until`, `error <name> <message>` when
 * a read throws, or `timeout` after 30 s.
 *
 * @module
 */
import process from "node:process";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { delay, say } from "./_runtimes.ts";

const { path, session, until } = JSON.parse(process.argv[2]) as {
  path: string;
  session: string;
  until: number;
};

const db = await SessionDB.open({ path, readonly: true });
try {
  let last = -1;
  const deadline = Date.now() + 30_000;
  for (;;) {
    let count: number;
    try {
      count = db.messageCount(session);
      if (count !== last) say(`count ${count} ${db.dataVersion()}`);
    } catch (error) {
      const { name, message } = error as Error;
      say(`error ${name} ${message}`);
      break;
    }
    last = count;
    if (count >= until) {
      say("done");
      break;
    }
    if (Date.now() > deadline) {
      say("timeout");
      break;
    }
    await delay(20);
  }
} finally {
  db.close();
}
