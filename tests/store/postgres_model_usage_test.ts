/**
 * `syncFile()` and a newer Hermes's per-model usage rows
 * (`session_model_usage`): they reach the server with their session, under
 * its server id, and the server's usage report then answers as the file's
 * does (a session that switched models split between them, side work
 * counted); a change to them alone ships the session again; an unchanged
 * pass writes nothing; a session deleted on the host takes its rows with it
 * on the server. Sync used to carry none of them, so the server reported
 * every token under the session's first model.
 */
import { describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { rawOpen, tempDir } from "../_helpers.ts";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { freshSchema, pgEngineSkip, schemaUrl } from "./_pg.ts";
import { LIVE, MINI, REWOUND, spentFile } from "../_model_usage_spent.ts";
import { openStore } from "../../lib/open_store.ts";
import type { SessionDB } from "../../lib/sqlite/session_db.ts";
import type { SessionModelUsage } from "../../lib/core/session_model_usage.ts";
import type { PgClient } from "../../lib/postgres/_client_types.ts";
import type { UsageGrouping } from "../../lib/core/usage.ts";
import { runCli } from "../_cli_io.ts";

const SKIP = pgEngineSkip(import.meta.url);

const GROUPINGS: readonly UsageGrouping[] = ["model", "day", "source"];

/** The file's and the server's usage reports, each grouping. */
async function reports(db: SessionDB, url: string) {
  await using server = await openStore(url, { readonly: true });
  const file = [];
  const there = [];
  for (const by of GROUPINGS) {
    // Days of a zone other than UTC: the report binds the zone's offsets too.
    const options = { by, since: 0, timeZone: "America/Los_Angeles" };
    file.push(db.usageReport(options));
    there.push(await server.usageReport(options));
  }
  return { file, there };
}

/** The spent file (`_model_usage_spent.ts`), closed, with `sql` run on it. */
async function editedSpentFile(t: TestContext, sql: string): Promise<string> {
  const { db, path } = await spentFile(t);
  db.close();
  using raw = await rawOpen(path);
  raw.exec(sql);
  return path;
}

/** Runs `body` with a sync connection to a fresh schema, closed after it. */
async function withSyncTarget(
  body: (sync: typeof import("../../lib/postgres/sync.ts"), client: PgClient) => Promise<void>,
): Promise<void> {
  const sync = await import("../../lib/postgres/sync.ts");
  const client = await sync.connectSyncTarget(schemaUrl(freshSchema()));
  try {
    await body(sync, client);
  } finally {
    await client.close();
  }
}

describe("sync of a newer Hermes's per-model usage", { skip: SKIP }, () => {
  test("reaches the server, which reports usage as the file does; changes and deletes follow", {
    timeout: 60_000,
  }, async (t) => {
    const sync = await import("../../lib/postgres/sync.ts");
    const url = schemaUrl(freshSchema());
    const client = await sync.connectSyncTarget(url);
    try {
      const { db, path } = await spentFile(t);
      const first = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.equal(first.created, 4);
      const rows = await client.query(
        `SELECT session_id, model, task, input_tokens::int AS input, output_tokens::int AS output
         FROM session_model_usage ORDER BY session_id COLLATE "C", model COLLATE "C"`,
      );
      assert.deepEqual(rows.map((row) => [row.session_id, row.model, row.input]), [
        [`A/${LIVE}`, "anthropic/claude-sonnet-4.6", 1000],
        [`A/${LIVE}`, "openai/gpt-5", 300],
        [`A/${LIVE}`, MINI, 50],
        [`A/${REWOUND}`, "anthropic/claude-sonnet-4.6", 100],
      ]);
      let { file, there } = await reports(db, url);
      assert.deepEqual(there, file);
      assert.equal(there[0].length, 3, "three models");

      const unchanged = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual([unchanged.created, unchanged.updated], [0, 0]);

      // Copied to another server with their usage rows: the host's next pass there writes nothing.
      const moved = schemaUrl(freshSchema());
      const copied = await runCli(["copy", url, moved]);
      assert.equal(copied.code, 0, copied.err);
      const there2 = await sync.connectSyncTarget(moved);
      try {
        const next = await sync.syncFile(there2, path, { host: "h", origin: "A" });
        assert.deepEqual([next.created, next.updated, next.messages], [0, 0, 0]);
      } finally {
        await there2.close();
      }
      assert.deepEqual((await reports(db, moved)).there, file);

      // The title's usage grows, the session's own row untouched (side work is in the rows only).
      {
        using raw = await rawOpen(path);
        raw.exec(
          `UPDATE session_model_usage SET input_tokens = input_tokens + 25 WHERE model = '${MINI}'`,
        );
      }
      const grown = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual([grown.updated, grown.messages], [1, 0]);
      ({ file, there } = await reports(db, url));
      assert.deepEqual(there, file);
      assert.equal(there[0].find((row) => row.key === MINI)?.input_tokens, 75);

      db.deleteSession(LIVE);
      const deleted = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.equal(deleted.deleted, 1);
      const left = await client.query("SELECT DISTINCT session_id FROM session_model_usage");
      assert.deepEqual(left.map((row) => row.session_id), [`A/${REWOUND}`]);
      ({ file, there } = await reports(db, url));
      assert.deepEqual(there, file);
    } finally {
      await client.close();
    }
  });

  test("a usage row the server cannot hold leaves its session out of the pass, named", {
    timeout: 60_000,
  }, async (t) => {
    const path = await editedSpentFile(
      t,
      `UPDATE session_model_usage SET last_seen = 'yesterday' WHERE session_id = '${REWOUND}';
       UPDATE session_model_usage SET input_tokens = 2.5 WHERE model = '${MINI}'`,
    );
    await withSyncTarget(async (sync, client) => {
      const pass = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual(pass.notShipped, [
        {
          id: LIVE,
          reason:
            "its session_model_usage.input_tokens holds 2.5, where the server keeps an integer",
        },
        {
          id: REWOUND,
          reason:
            'its session_model_usage.last_seen holds "yesterday", where the server keeps a number',
        },
      ]);
      assert.equal(pass.created, 2);
    });
  });

  test("a BLOB in a usage row (Python's sqlite3 stores bytes so) reaches the server as its text", {
    timeout: 60_000,
  }, async (t) => {
    const path = await editedSpentFile(
      t,
      `UPDATE session_model_usage SET model = CAST(model AS BLOB) WHERE model = '${MINI}'`,
    );
    await withSyncTarget(async (sync, client) => {
      const pass = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual([pass.created, pass.notShipped], [4, []]);
      const rows = await client.query(
        "SELECT model FROM session_model_usage WHERE input_tokens = 50",
      );
      assert.deepEqual(rows.map((row) => row.model), [MINI]);
      const again = await sync.syncFile(client, path, { host: "h", origin: "A" });
      assert.deepEqual([again.created, again.updated], [0, 0]);
    });
  });

  test(
    "copy carries them: file → server under the same ids, server → a new file names them dropped",
    {
      timeout: 60_000,
    },
    async (t) => {
      const { db, path } = await spentFile(t);
      const url = schemaUrl(freshSchema());
      const there = await runCli(["copy", path, url]);
      assert.equal(there.code, 0, there.err);
      assert.equal(there.err, "");
      {
        await using server = await openStore(url, { readonly: true });
        assert.deepEqual(await server.getModelUsage(LIVE), db.getModelUsage(LIVE));
        assert.deepEqual(await server.getModelUsage("no such session"), []);
        // An export carries them as the file's does (hermes_state_model_usage), on every path.
        const record = await server.exportSession(LIVE);
        assert.deepEqual(record?.hermes_state_model_usage, db.getModelUsage(LIVE));
        const all = [];
        for await (const one of server.iterateExport()) all.push(one);
        assert.deepEqual(
          all.find((one) => one.id === LIVE)?.hermes_state_model_usage,
          db.getModelUsage(LIVE),
        );
        const jsonl = join(tempDir(), "server.jsonl");
        assert.equal((await runCli(["--db", url, "export", jsonl])).code, 0);
        const fileJsonl = join(tempDir(), "file.jsonl");
        assert.equal((await runCli(["--db", path, "export", fileJsonl])).code, 0);
        const usageOf = (text: string) =>
          text.trim().split("\n").map((line) => JSON.parse(line)).map((
            one,
          ) => [one.id, one.hermes_state_model_usage ?? null]).sort();
        assert.deepEqual(
          usageOf(readFileSync(jsonl, "utf8")),
          usageOf(readFileSync(fileJsonl, "utf8")),
        );
      }
      const { file, there: reported } = await reports(db, url);
      assert.deepEqual(reported, file);
      const back = await runCli(["copy", url, join(tempDir(), "state.db")]);
      assert.equal(back.code, 0, back.err);
      assert.match(
        back.err,
        /has no column for .*session_model_usage.*: those values were not kept\n$/,
      );
    },
  );

  test(
    "importSession() with modelUsage makes the table once the record is sound, and writes the rows",
    {
      timeout: 60_000,
    },
    async () => {
      await using store = await openStore(schemaUrl(freshSchema()));
      const rows = [{ model: "m", input_tokens: 5 }] as unknown as SessionModelUsage[];
      await assert.rejects(store.importSession({ id: 5 }, { modelUsage: rows }), TypeError);
      await assert.rejects(
        store.importSession({ id: "n", source: "cli", started_at: 1, messages: [] }, {
          modelUsage: [{ model: 5 }] as unknown as SessionModelUsage[],
        }),
        /modelUsage\[0\]\.model must be a string: current value is 5/,
      );
      assert.equal(await store.sessionCount(), 0, "nothing imported");
      assert.deepEqual(await store.getModelUsage("n"), []);
      const result = await store.importSession(
        { id: "n", source: "cli", model: "own", started_at: 1, messages: [] },
        { modelUsage: rows },
      );
      assert.deepEqual([result.outcome, result.droppedColumns], ["imported", []]);
      const [row] = await store.getModelUsage("n");
      assert.deepEqual([row.model, row.input_tokens, row.task, row.first_seen], ["m", 5, "", null]);
      assert.deepEqual(
        (await store.usageReport({ by: "model", since: 0 })).map((r) => [r.key, r.input_tokens]),
        [["m", 5]],
      );
    },
  );
});
