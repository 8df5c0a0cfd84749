/**
 * The batched ghost prune checks each ghost again inside its transaction:
 * a ghost that got a message, a title or was resumed between two
 * transactions is kept, with its children; the others go whole.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB, storeOf } from "../lib/sqlite/session_db.ts";
import { pruneEmptyGhostSessions } from "../lib/sqlite/prune.ts";
import { tempDbPath } from "./_helpers.ts";

const DAY = 86_400;

test("pruneEmptyGhostSessions() keeps a ghost that got a message, a title or was resumed mid-prune", async () => {
  let now = 1_000_000;
  using db = await SessionDB.open({ path: tempDbPath(), clock: () => now });
  const ghosts = ["g0", "g1", "g2", "g3", "g4", "g5"];
  for (const id of ghosts) {
    db.createSession(id, "tui");
    db.endSession(id, "tui_close");
  }
  db.createSession("kid", "cli", { parentSessionId: "g4" });
  now += 2 * DAY;
  let pauses = 0;
  const pruned = pruneEmptyGhostSessions(storeOf(db), {}, {
    batch: {
      holdMs: 0,
      sleep: () => {
        if (++pauses !== 1) return;
        // Another process, between the first and the second transaction:
        db.appendMessage("g2", { role: "user", content: "late words" });
        db.setSessionTitle("g3", "named late");
        db.reopenSession("g5");
      },
    },
  });
  assert.equal(pruned, 3);
  const left = db.searchSessions({ limit: 10 }).map((s) => s.id).sort();
  assert.deepEqual(left, ["g2", "g3", "g5", "kid"]);
  assert.equal(db.getSession("kid")?.parent_session_id, null);
  assert.equal(db.getMessages("g2").length, 1);
  assert.equal(db.searchMessages("late").length, 1);
});
