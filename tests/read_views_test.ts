import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture } from "./_helpers.ts";
import { entriesOf, label, replay, wanted } from "./_expected_calls.ts";

/** Calls whose answer does not depend on the search indexes the upgrade rebuilds. */
const READ_CALLS = [
  "getSession",
  "getMessages",
  "getMessagesAsConversation",
  "listSessionsRich",
  "sessionCount",
  "messageCount",
];

function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir).sort().map((name) => [
      name,
      createHash("sha256").update(readFileSync(join(dir, name))).digest("hex"),
    ]),
  );
}

for (
  const [file, fixture] of [
    ["migrate_v6.json", "hermes-v6.db"],
    ["migrate_v10.json", "hermes-v10-external.db"],
  ] as const
) {
  for (const entry of await entriesOf(file, READ_CALLS)) {
    test(`${label(entry)} read-only on ${fixture}, not upgraded, answers what Python answers after the upgrade (${file})`, async () => {
      const path = copyFixture(fixture);
      const before = snapshot(dirname(path));
      const db = await SessionDB.open({ path, readonly: true });
      try {
        assert.deepEqual(replay(db, entry), wanted(entry));
      } finally {
        db.close();
      }
      assert.deepEqual(snapshot(dirname(path)), before, "the file was not changed");
    });
  }
}

test("SessionDB.open({ readonly }) of a v6 file finds CJK text without a trigram index, and a v10 file's words", async () => {
  using v6 = await SessionDB.open({ path: copyFixture("hermes-v6.db"), readonly: true });
  const hits = v6.searchMessages("数据库迁移");
  assert.ok(hits.length > 0);
  assert.ok(hits.every((hit) => hit.snippet?.includes("数据库迁移")), JSON.stringify(hits));
  using v10 = await SessionDB.open({
    path: copyFixture("hermes-v10-external.db"),
    readonly: true,
  });
  assert.deepEqual(v10.searchMessages("docker").map((hit) => hit.id).sort(), [6, 7]);
  assert.deepEqual(v10.searchMessages("记忆断裂").map((hit) => hit.id), [4]);
  // As before the upgrade in Python: the old index holds content only.
  assert.deepEqual(v10.searchMessages("LEGACYTOOL"), []);
  assert.equal(v10.getSession("legacy_s1")?.model, null, "a column the file lacks reads as NULL");
  assert.equal(v10.getSession("legacy_s1")?.input_tokens, 0, "…or as its declared default");
});
