/**
 * Python parity: every session, message, conversation, count and export call
 * recorded in the fixtures' `expected/` files, replayed on a copy of the
 * fixture and compared with Python's answer (same rows, same order, same
 * values; key order aside).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { copyFixture, expected } from "./_helpers.ts";

interface Entry {
  call: string;
  ts_call: string;
  ts_args: unknown[];
  result?: unknown;
  error?: { type: string; message: string };
}

interface ExpectedFile {
  fixture: string;
  entries: Entry[];
}

/** The calls this suite covers (the others belong to other suites). */
const CALLS = new Set([
  "getSession",
  "getMessages",
  "getMessagesAsConversation",
  "messageCount",
  "sessionCount",
  "getMeta",
  "exportSession",
  "exportAll",
]);

/** Calls whose Python `None` means "not found", `undefined` in the TypeScript API. */
const NOT_FOUND_IS_UNDEFINED = new Set(["getSession", "getMeta", "exportSession"]);

const FILES: Array<[file: string, fixture: string]> = [
  ["sessions.json", "hermes-v11.db"],
  ["export.json", "hermes-v11.db"],
  ["counts.json", "hermes-v11.db"],
  ["migrate_v6.json", "hermes-v6.db"],
  ["migrate_v10.json", "hermes-v10-external.db"],
];

function label(entry: Entry): string {
  const args = JSON.stringify(entry.ts_args);
  return `${entry.ts_call}(${args.length > 70 ? args.slice(1, 68) + "…" : args.slice(1, -1)})`;
}

for (const [file, fixture] of FILES) {
  const data = await expected<ExpectedFile>(file);
  const entries = data.entries.filter((entry) => CALLS.has(entry.ts_call));

  describe(`${file} on a copy of ${fixture}`, () => {
    test(`${file} has entries for this suite`, () => {
      assert.equal(data.fixture, fixture);
      assert.ok(entries.length > 0);
    });

    for (const entry of entries) {
      test(`${label(entry)} matches Python`, async (t) => {
        const db = await SessionDB.open({ path: copyFixture(fixture) });
        t.after(() => db.close());
        const method = (db as unknown as Record<string, (...args: unknown[]) => unknown>)[
          entry.ts_call
        ];
        assert.equal(typeof method, "function", `SessionDB.${entry.ts_call} is missing`);
        const actual: unknown = method.apply(db, entry.ts_args);
        assert.equal(entry.error, undefined, "Python raised; the fixture expects an error");
        const want = entry.result === null && NOT_FOUND_IS_UNDEFINED.has(entry.ts_call)
          ? undefined
          : entry.result;
        assert.deepStrictEqual(actual, want);
      });
    }
  });
}
