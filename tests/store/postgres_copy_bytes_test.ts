/**
 * A copy through PostgreSQL (file → PostgreSQL → file, as `copy` does it:
 * `iterateExport`, then `importSession`) writes the stored text of
 * `content` and `tool_calls` again, byte for byte, and renumbers messages
 * whose ids are taken in the order of their original ids.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";
import { openPgStore, PG_SKIP } from "./_pg.ts";

/** Rows as Python (or a compact writer) stored them: role, content, tool_calls, timestamp. */
const STORED: [string, string, string | null, number][] = [
  ["user", '\u0000json:[{"type":"text","text":"compact", "score": 1.0}]', null, 10],
  ["user", "\u0000json:5", null, 10.5],
  ["assistant", "x", '[{"id": "c", "score": 1.0, "big": 1152921504606846977}]', 11],
  ["assistant", "y", '"raw string tc"', 10.75],
];

describe("PostgreSQL copy keeps the stored text", { skip: PG_SKIP }, () => {
  test("file → PostgreSQL → file: content and tool_calls byte for byte, ids in their order", async () => {
    const sourcePath = tempDbPath();
    {
      using source = await SessionDB.open({ path: sourcePath });
      source.createSession("py", "cli");
    }
    {
      using raw = await rawOpen(sourcePath);
      const insert = raw.prepare(
        "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('py', ?, ?, ?, ?)",
      );
      for (const row of STORED) insert.run(...row);
    }
    await using server = await openPgStore();
    {
      using source = await SessionDB.open({ path: sourcePath, readonly: true });
      for (const record of source.iterateExport()) await server.importSession(record);
    }
    const targetPath = tempDbPath();
    {
      using target = await SessionDB.open({ path: targetPath });
      // Ids 1–4 taken: the copied messages are renumbered.
      target.createSession("other", "cli");
      for (let i = 0; i < 4; i++) target.appendMessage("other", { role: "user", content: "o" });
      for await (const record of server.iterateExport()) target.importSession(record);
    }
    using raw = await rawOpen(targetPath, true);
    const rows = raw.prepare(
      "SELECT role, content, tool_calls, timestamp FROM messages WHERE session_id = 'py' ORDER BY id",
    ).all();
    assert.deepEqual(
      rows.map((row) => [row.role, row.content, row.tool_calls, row.timestamp]),
      STORED,
    );
  });
});
