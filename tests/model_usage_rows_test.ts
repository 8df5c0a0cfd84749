// A session's per-model usage rows read whole (`getModelUsage`) and written with an import
// (`importSession`'s `modelUsage`), on a newer Hermes's file and a v11 one; `copy` between
// files carries them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { copyFixture, openClocked, rawOpen, tempDbPath } from "./_helpers.ts";
import { GPT, LIVE, MINI, SONNET, spentFile } from "./_model_usage_spent.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import type { SessionModelUsage } from "../lib/core/session_model_usage.ts";
import { runCli } from "./_cli_io.ts";

/** A row as `getModelUsage` gives it, from the columns that differ from their defaults. */
function usageRow(given: Partial<SessionModelUsage> & { model: string }): SessionModelUsage {
  return {
    billing_provider: "",
    billing_base_url: "",
    billing_mode: "",
    task: "",
    api_call_count: 0,
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    estimated_cost_usd: 0,
    actual_cost_usd: 0,
    cost_status: null,
    cost_source: null,
    first_seen: null,
    last_seen: null,
    ...given,
  };
}

test("getModelUsage() reads a session's rows in key order; [] without rows or table", async (t) => {
  const { db } = await spentFile(t);
  const rows = db.getModelUsage(LIVE);
  assert.deepEqual(rows.map((row) => [row.model, row.input_tokens, row.task]), [
    [SONNET, 1000, ""],
    [GPT, 300, ""],
    [MINI, 50, ""],
  ]);
  assert.equal(rows[0].first_seen, 1_777_000_100);
  assert.deepEqual(db.getModelUsage("no such session"), []);
  using fresh = await SessionDB.open({ path: tempDbPath() });
  fresh.createSession("s", "cli");
  assert.deepEqual(fresh.getModelUsage("s"), []);
});

test("importSession() writes modelUsage with the session into a newer Hermes's file, or names it dropped in a v11 one", async (t) => {
  const { db } = await spentFile(t);
  const record = db.exportSession(LIVE)!;
  const usage = db.getModelUsage(LIVE);
  // A newer file without that session: the rows come with it (the schema-21 table has no task).
  const { db: newer } = await openClocked(t, 1_800_000_000, copyFixture("hermes-v21.db"));
  newer.deleteSession(LIVE);
  const imported = newer.importSession(record, { modelUsage: usage });
  assert.deepEqual([imported.outcome, imported.droppedColumns], ["imported", []]);
  assert.deepEqual(newer.getModelUsage(LIVE), usage);
  // Replaced with other rows, then with none: the rows are the given ones.
  const other = [usageRow({ model: "x", input_tokens: 7 })];
  newer.importSession(record, { replace: true, modelUsage: other });
  assert.deepEqual(newer.getModelUsage(LIVE), other);
  newer.importSession(record, { replace: true, modelUsage: [] });
  assert.deepEqual(newer.getModelUsage(LIVE), []);
  // Without modelUsage, the rows the record carries (an export's); a record without, as they are.
  newer.importSession(record, { replace: true, modelUsage: other });
  newer.importSession(record, { replace: true });
  assert.deepEqual(newer.getModelUsage(LIVE), usage);
  const bare: Record<string, unknown> = { ...record };
  delete bare.hermes_state_model_usage;
  newer.importSession(record, { replace: true, modelUsage: other });
  newer.importSession(bare, { replace: true });
  assert.deepEqual(newer.getModelUsage(LIVE), other);

  using v11 = await SessionDB.open({ path: tempDbPath() });
  const into = v11.importSession(record, { modelUsage: usage });
  assert.equal(into.outcome, "imported");
  assert.ok(into.droppedColumns.includes("session_model_usage"), into.droppedColumns.join());
  assert.ok(
    !v11.importSession({ ...record, id: "b", title: null }, { modelUsage: [] })
      .droppedColumns.includes("session_model_usage"),
  );
});

test("importSession() merges rows a schema-21 table cannot tell apart (no task)", async (t) => {
  const { db, path } = await openClocked(t, 1_800_000_000, copyFixture("hermes-v21.db"));
  const record = { id: "n", source: "cli", started_at: 1_800_000_000, messages: [] };
  db.importSession(record, {
    modelUsage: [
      usageRow({ model: "m", input_tokens: 10, first_seen: 5, last_seen: 6, cost_status: "a" }),
      usageRow({ model: "m", task: "title", input_tokens: 2, first_seen: 4, last_seen: 9 }),
    ],
  });
  using raw = await rawOpen(path, true);
  assert.deepEqual(
    raw.prepare(
      "SELECT model, input_tokens, first_seen, last_seen, cost_status FROM session_model_usage WHERE session_id = 'n'",
    ).all().map((row) => ({ ...row })),
    [{ model: "m", input_tokens: 12, first_seen: 4, last_seen: 9, cost_status: "a" }],
  );
});

test("importSession() refuses bad modelUsage, naming the value, and writes nothing", async (t) => {
  const { db } = await openClocked(t, 1_800_000_000, copyFixture("hermes-v21.db"));
  const record = { id: "n", source: "cli", started_at: 1_800_000_000, messages: [] };
  const cases: [unknown, RegExp][] = [
    [5, /Cannot import session: modelUsage must be an array: current value is 5$/],
    [[null], /modelUsage\[0\] must be an object: current value is null/],
    [[{ input_tokens: 1 }], /modelUsage\[0\]\.model must be a string: current value is undefined/],
    [
      [{ model: "m", input_tokens: 1.5 }],
      /modelUsage\[0\]\.input_tokens must be an integer: current value is 1\.5/,
    ],
    [[{ model: "m", estimated_cost_usd: Infinity }], /estimated_cost_usd must be a finite number/],
    [[{ model: "m", cost_status: 3 }], /modelUsage\[0\]\.cost_status must be a string or null/],
    [[{ model: "m" }, { model: "m" }], /modelUsage\[1\] repeats the key of an earlier row/],
  ];
  for (const [modelUsage, message] of cases) {
    assert.throws(
      () => db.importSession(record, { modelUsage: modelUsage as SessionModelUsage[] }),
      message,
    );
  }
  assert.equal(db.getSession("n"), undefined);
});

test("copy between two newer Hermes's files carries the rows; into a new file, names them dropped", async (t) => {
  const { db, path } = await spentFile(t);
  db.close();
  const dest = copyFixture("hermes-v21.db");
  {
    using raw = await rawOpen(dest);
    raw.exec("DELETE FROM messages; DELETE FROM sessions");
  }
  const run = await runCli(["copy", path, dest]);
  assert.equal(run.code, 0, run.err);
  assert.equal(run.err, "");
  using there = await SessionDB.open({ path: dest, readonly: true });
  using here = await SessionDB.open({ path, readonly: true });
  assert.deepEqual(there.getModelUsage(LIVE), here.getModelUsage(LIVE));
  assert.deepEqual(
    there.usageReport({ by: "model", since: 0 }),
    here.usageReport({ by: "model", since: 0 }),
  );

  const v11 = tempDbPath();
  const lost = await runCli(["copy", path, v11]);
  assert.equal(lost.code, 0, lost.err);
  assert.match(
    lost.err,
    /has no column for .*session_model_usage.*: those values were not kept\n$/,
  );
});

test("export → import carries the rows (hermes_state_model_usage); into a v11 file, names them dropped", async (t) => {
  // A JSON Lines backup lost them: usage by model changed after the import.
  const { db, path } = await spentFile(t);
  db.close();
  const file = `${tempDbPath()}.jsonl`;
  const exported = await runCli(["--db", path, "export", file]);
  assert.equal(exported.code, 0, exported.err);
  const records = readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  const live = records.find((record) => record.id === LIVE);
  using here = await SessionDB.open({ path, readonly: true });
  assert.deepEqual(live.hermes_state_model_usage, here.getModelUsage(LIVE));
  const without = records.find((record) => here.getModelUsage(record.id).length === 0);
  assert.equal("hermes_state_model_usage" in without, false, "a session without rows: as before");

  const dest = copyFixture("hermes-v21.db");
  {
    using raw = await rawOpen(dest);
    raw.exec("DELETE FROM messages; DELETE FROM sessions");
  }
  const imported = await runCli(["--db", dest, "import", file]);
  assert.equal(imported.code, 0, imported.err);
  assert.equal(imported.err, "");
  using there = await SessionDB.open({ path: dest, readonly: true });
  assert.deepEqual(there.getModelUsage(LIVE), here.getModelUsage(LIVE));
  assert.deepEqual(
    there.usageReport({ by: "model", since: 0 }),
    here.usageReport({ by: "model", since: 0 }),
  );
  // The same export again: the same bytes.
  const again = `${tempDbPath()}.jsonl`;
  assert.equal((await runCli(["--db", dest, "export", again])).code, 0);
  assert.equal(readFileSync(again, "utf8"), readFileSync(file, "utf8"));

  const v11 = tempDbPath();
  const lost = await runCli(["--db", v11, "import", file]);
  assert.equal(lost.code, 0, lost.err);
  assert.match(
    lost.err,
    /has no column for .*session_model_usage.*: those values were not kept\n$/,
  );
});

test("importSession() refuses bad rows under hermes_state_model_usage, naming them, and writes nothing", async (t) => {
  const { db } = await openClocked(t, 1_777_000_100, copyFixture("hermes-v21.db"));
  const record = {
    id: "bad_usage",
    source: "cli",
    started_at: 1_777_000_000,
    messages: [],
    hermes_state_model_usage: [{ model: 5 }],
  };
  assert.throws(
    () => db.importSession(record),
    /^TypeError: Cannot import session: hermes_state_model_usage\[0\]\.model must be /,
  );
  assert.equal(db.getSession("bad_usage"), undefined);
});
