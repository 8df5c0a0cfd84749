/**
 * Child of `huge_session_search_test.ts`, run under a small V8 heap: builds
 * a store at its first argument (unless it exists) holding one tool output
 * of as many lines as its second says, the searched word on each; searches
 * the word, and prints the hits as JSON.
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { say } from "./reliability/_runtimes.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";

const [path, lines] = process.argv.slice(2);
const fresh = !existsSync(path);
const db = await SessionDB.open({ path });
try {
  if (fresh) {
    db.createSession("huge", "gateway");
    db.appendMessages("huge", [
      { role: "user", content: "tail the log" },
      { role: "tool", toolName: "terminal", content: "zebra crossing. ".repeat(Number(lines)) },
      { role: "assistant", content: "the log is long" },
    ]);
  }
  const hits = db.searchMessages("zebra");
  say(JSON.stringify(hits.map((hit) => ({ id: hit.id, snippet: hit.snippet }))));
} finally {
  db.close();
}
