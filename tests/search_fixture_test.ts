/**
 * Every search recorded from the Python reference, replayed on copies of the
 * fixtures: ids, order, snippets, contexts and keys must be identical, except
 * for the documented improvements (docs/search_improvements.md), which are
 * asserted in search_improvements_test.ts.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import type { SearchOptions } from "../lib/core/search/options.ts";
import { copyFixture, expected } from "./_helpers.ts";
import { IMPROVED_QUERIES } from "./_search_cases.ts";

interface Entry {
  call: string;
  ts_call: string;
  ts_args: [string, SearchOptions?];
  result: Record<string, unknown>[];
}

interface ExpectedFile {
  fixture: string;
  entries: Entry[];
}

const KEYS = [
  "id",
  "session_id",
  "role",
  "snippet",
  "timestamp",
  "tool_name",
  "source",
  "model",
  "session_started",
  "context",
];

const FILES = [
  ["search.json", "hermes-v11.db"],
  ["migrate_v6.json", "hermes-v6.db"],
  ["migrate_v10.json", "hermes-v10-external.db"],
] as const;

for (const [file, fixture] of FILES) {
  const data = await expected<ExpectedFile>(file);
  const entries = data.entries.filter((e) => e.ts_call === "searchMessages");

  describe(`searchMessages() replays ${file} on a copy of ${fixture}`, () => {
    let db: SessionDB;
    before(async () => {
      db = await SessionDB.open({ path: copyFixture(fixture) });
    });
    after(() => db.close());

    test(`${file} has search entries`, () => assert.ok(entries.length >= 8));

    for (const entry of entries) {
      const [query, options] = entry.ts_args;
      const label = `${JSON.stringify(query)}${options ? " " + JSON.stringify(options) : ""}`;
      if (IMPROVED_QUERIES.has(query)) {
        test(`searchMessages() differs from Python only by design for ${label}`, () => {
          assert.deepEqual(entry.result, [], "Python's answer is the empty list");
        });
        continue;
      }
      test(`searchMessages() returns Python's hits for ${label}`, () => {
        const hits = db.searchMessages(query, options);
        assert.deepEqual(hits.map((h) => h.id), entry.result.map((h) => h.id), "ids and order");
        for (const [i, hit] of hits.entries()) {
          assert.deepEqual(Object.keys(hit), KEYS, "keys in Python's order");
          assert.deepEqual(hit, entry.result[i], `hit ${hit.id}`);
        }
      });
    }
  });
}
