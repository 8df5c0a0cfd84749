import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { chooseReadAccess } from "../lib/sqlite/read_access.ts";
import { copyFixture } from "./_helpers.ts";

test("chooseReadAccess() reads a file without a -wal through a connection that removes what it creates", () => {
  const path = copyFixture("hermes-v11.db");
  assert.equal(chooseReadAccess(path), "shared");
  assert.equal(chooseReadAccess(":memory:"), "shared");
});

test("chooseReadAccess() uses SQLite's read-only mode beside a -wal (never checkpointed by a reader) or a -journal", () => {
  const path = copyFixture("hermes-v11.db");
  writeFileSync(`${path}-wal`, "");
  assert.equal(chooseReadAccess(path), "readonly");
  const other = copyFixture("hermes-v11.db");
  writeFileSync(`${other}-journal`, "");
  assert.equal(chooseReadAccess(other), "readonly");
});
