/**
 * The CLI on PostgreSQL: `--db postgres://…` (and HERMES_STATE_DB) for the
 * read commands, and `copy` between a file and a server, both ways.
 */
import { describe } from "node:test";
import { copyFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";
import { openStore } from "../lib/open_store.ts";
import { main } from "../lib/cli/main.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { interruptibleIo, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { copyFixture, rawOpen, tempDbPath, tempDir, waitUntil } from "./_helpers.ts";
import { adminSql, freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";
import { sideBySideTests } from "./_side_by_side.ts";

async function exportOf(target: string): Promise<string> {
  const run = await runCli(["--db", target, "export"]);
  assert.equal(run.code, 0, run.err);
  return run.out;
}

describe("CLI on PostgreSQL", { skip: PG_SKIP }, () => {
  /**
   * Every test of the file, side by side: each works on a schema and files of its own, and most
   * of a test's time is the server's (migrating its schema, taking the rows) or a `--follow`
   * pause, which the others' work fills.
   */
  const sideBySide = sideBySideTests({ skip: PG_SKIP, timeout: 120_000 });
  const test = (name: string, _options: { timeout: number }, body: () => Promise<void>) =>
    sideBySide(name, body);

  test("copy file → PostgreSQL copies every session; a second run copies nothing", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    const url = schemaUrl(freshSchema());
    const first = await runCli(["copy", file, url]);
    assert.equal(first.code, 0, first.err);
    assert.equal(
      first.out,
      "Copied 42 sessions, skipped 0 already present (197 messages written).\n",
    );
    const again = await runCli(["copy", file, url]);
    assert.equal(
      again.out,
      "Copied 0 sessions, skipped 42 already present (0 messages written).\n",
    );
    assert.equal(await exportOf(url), await exportOf(file));
    await using store = await openStore(url);
    assert.equal(
      (await store.getSession(V11.compressionTip))?.parent_session_id,
      V11.compressionMid,
    );
  });

  test("copy into a server that takes no writes stops at the first session, in one line", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    const url = schemaUrl(freshSchema());
    // The store is made; then the server takes no writes (a standby, a read-only role).
    await (await openStore(url)).close();
    const run = await runCli(["copy", file, `${url}&default_transaction_read_only=on`]);
    assert.equal(run.code, 1);
    const lines = run.err.trimEnd().split("\n");
    assert.equal(lines.length, 1, run.err);
    assert.match(
      lines[0],
      /^hermes-state: Cannot copy \S+: PostgreSQL: cannot execute .* in a read-only transaction \(SQLSTATE 25006\) \(nothing of it was written; 0 sessions before it were; run the copy again to go on\)$/,
    );
    assert.equal(await exportOf(url), "");
  });

  test("copy PostgreSQL → file gives back the same export; --json reports counts", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", file, url])).code, 0);
    const back = tempDbPath();
    const run = await runCli(["--json", "copy", url, back]);
    assert.equal(run.code, 0, run.err);
    const report = JSON.parse(run.out);
    assert.equal(report.copied, 42);
    assert.equal(report.messages, 197);
    assert.deepEqual(report.failures, []);
    assert.equal(await exportOf(back), await exportOf(file));
    // The session's goal (a state_meta key of Python Hermes) went there and back.
    const key = "goal:20260425_090019_d38f1d";
    assert.equal(report.meta_keys, 1);
    assert.equal(
      await withDb(back, (db) => db.getMeta(key)),
      await withDb(file, (db) => db.getMeta(key)),
    );
    // And from one schema (or server) to another.
    const other = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", url, other])).code, 0);
    assert.equal(await exportOf(other), await exportOf(file));
  });

  test(
    "copy resumes: sessions already copied are skipped, the rest arrive",
    { timeout: 60_000 },
    async () => {
      const file = v11Copy();
      const url = schemaUrl(freshSchema());
      assert.equal((await runCli(["copy", file, url, "--source", "telegram"])).code, 0);
      const rest = await runCli(["--json", "copy", file, url]);
      const report = JSON.parse(rest.out);
      assert.equal(report.skipped, 5);
      assert.equal(report.copied, 37);
      assert.equal(await exportOf(url), await exportOf(file));
    },
  );

  test(
    "copy refuses a file onto itself and a missing source, writing nothing",
    { timeout: 60_000 },
    async () => {
      const file = v11Copy();
      const self = await runCli(["copy", file, file]);
      assert.equal(self.code, 1);
      assert.match(self.err, /onto itself/);
      const missing = await runCli(["copy", `${file}.nope`, schemaUrl(freshSchema())]);
      assert.equal(missing.code, 1);
      assert.match(missing.err, /No database at/);
    },
  );

  test(
    "list, show, search, stats, lineage and info read a PostgreSQL store as they read the file",
    { timeout: 60_000 },
    async () => {
      const file = v11Copy();
      const url = schemaUrl(freshSchema());
      assert.equal((await runCli(["copy", file, url])).code, 0);
      for (
        const argv of [
          ["list", "--limit", "100"],
          ["show", V11.compressionTip],
          ["lineage", V11.compressionTip],
          ["stats"],
          ["search", "--json", "数据库"],
        ]
      ) {
        const onFile = await runCli(["--db", file, "--json", ...argv]);
        const onServer = await runCli(["--db", url, "--json", ...argv]);
        assert.equal(onServer.code, 0, `${argv.join(" ")}: ${onServer.err}`);
        if (argv[0] === "search") {
          const ids = (out: string) =>
            (JSON.parse(out) as { id: number }[]).map((h) => h.id).sort();
          assert.deepEqual(ids(onServer.out), ids(onFile.out), argv.join(" "));
        } else if (argv[0] === "stats") {
          // Where the data lives differs (a path and file sizes, a URL and its tables' size).
          const counts = (out: string) => {
            const { path: _p, files: _f, bytes: _b, ...rest } = JSON.parse(out);
            return rest;
          };
          assert.deepEqual(counts(onServer.out), counts(onFile.out));
        } else {
          assert.equal(onServer.out, onFile.out, argv.join(" "));
        }
      }
      const env = await runCli(["list", "--json"], { env: { HERMES_STATE_DB: url } });
      assert.equal(env.code, 0, env.err);
      const info = await runCli(["--db", url, "info", "--json"]);
      assert.equal(info.code, 0, info.err);
      assert.equal(JSON.parse(info.out).sessions, 42);
    },
  );

  test("sync FILE --to URL ships the file; a second pass writes nothing; search sees it", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    const url = schemaUrl(freshSchema());
    const first = await runCli(["sync", file, "--to", url, "--origin", "web-1"]);
    assert.equal(first.code, 0, first.err);
    assert.equal(
      first.out,
      `${file} → web-1: 42 new, 0 updated, 0 deleted sessions; 197 messages, 1 goal written.\n`,
    );
    const again = await runCli(["--json", "sync", file, "--to", url]);
    assert.equal(again.code, 0, again.err);
    const report = JSON.parse(again.out);
    assert.equal(report.origin, "web-1");
    assert.equal(report.messages, 0);
    const hits = await runCli(["--db", url, "--json", "search", "数据库"]);
    const ids = (JSON.parse(hits.out) as { session_id: string }[]).map((h) => h.session_id);
    assert.ok(ids.length > 0 && ids.every((id) => id.startsWith("web-1/")));
  });

  test(
    "sync refuses another file under a taken origin (exit 1, server unchanged); --force ships it",
    {
      timeout: 60_000,
    },
    async () => {
      const url = schemaUrl(freshSchema());
      assert.equal((await runCli(["sync", v11Copy(), "--to", url, "--origin", "web"])).code, 0);
      const other = tempDbPath();
      const db = await SessionDB.open({ path: other });
      db.createSession("elsewhere", "cli");
      db.close();
      const refused = await runCli(["sync", other, "--to", url, "--origin", "web"]);
      assert.equal(refused.code, 1);
      assert.match(
        refused.err,
        /^hermes-state: sync: .*: the file holds none of the 42 sessions origin "web" has on the server .*--force/,
      );
      const info = await runCli(["--db", url, "--json", "info"]);
      assert.equal(JSON.parse(info.out).sessions, 42);
      const forced = await runCli(["sync", other, "--to", url, "--origin", "web", "--force"]);
      assert.equal(forced.code, 0, forced.err);
      assert.equal(
        forced.out,
        `${other} → web: 1 new, 0 updated, 42 deleted sessions; 0 messages written.\n`,
      );
    },
  );

  test(
    "sync --follow names a refused file once, looks at it again at each pass, and goes on with the others",
    {
      timeout: 60_000,
    },
    async () => {
      const url = schemaUrl(freshSchema());
      const replaced = v11Copy();
      assert.equal((await runCli(["sync", replaced, "--to", url])).code, 0);
      // Another file in its place: its origin's 42 sessions are not in it.
      const other = tempDbPath();
      const db = await SessionDB.open({ path: other });
      db.createSession("elsewhere", "cli");
      db.close();
      for (const suffix of ["-wal", "-shm"]) rmSync(replaced + suffix, { force: true });
      copyFileSync(other, replaced);
      const aloneIo = interruptibleIo();
      const alone = main(["sync", replaced, "--to", url, "--follow=0.1"], aloneIo);
      await waitUntil(() => aloneIo.err.includes("holds none of"), "the refusal", { everyMs: 50 });
      // A few passes more: each refuses it again, silently.
      await new Promise((r) => setTimeout(r, 500));
      aloneIo.interrupt();
      assert.equal(await alone, 1);
      // Named once; the Ctrl-C may come while a pass looks at it again, which is said too.
      assert.match(
        aloneIo.err,
        /^[^\n]*holds none of the 42 sessions .*\(looked at again at each pass\)\n(hermes-state: sync: stopping after the pass under way…\n)?$/,
      );
      assert.equal(aloneIo.err.match(/holds none of/g)?.length, 1);

      const io = interruptibleIo();
      const good = v11Copy();
      const run = main(["--json", "sync", replaced, good, "--to", url, "--follow=0.1"], io);
      while (io.out.split("\n").filter((l) => l !== "").length < 3) {
        await new Promise((r) => setTimeout(r, 50));
      }
      io.interrupt();
      assert.equal(await run, 1);
      assert.equal(io.err.match(/holds none of/g)?.length, 1);
      const passes = io.out.trimEnd().split("\n").map((line) => JSON.parse(line));
      assert.ok(passes.length >= 3 && passes.every((pass) => pass.file === good));
    },
  );

  test("origins lists the synced files; --remove deletes one with its sessions after asking", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const file = v11Copy();
    assert.equal((await runCli(["sync", file, "--to", url, "--origin", "web-1"])).code, 0);
    const other = tempDbPath();
    const db = await SessionDB.open({ path: other });
    db.createSession("elsewhere", "cli");
    db.close();
    assert.equal((await runCli(["sync", other, "--to", url, "--origin", "web-2"])).code, 0);
    const listed = await runCli(["--db", url, "origins"]);
    assert.equal(listed.code, 0, listed.err);
    const lines = listed.out.trimEnd().split("\n");
    assert.match(lines[0], /^Origin +Host +File +Sessions +Last pass$/);
    assert.match(lines[1], new RegExp(`^web-1 +\\S+ +${file} +42 +\\d{4}-`));
    assert.match(lines[2], new RegExp(`^web-2 +\\S+ +${other} +1 +\\d{4}-`));
    const json = JSON.parse((await runCli(["--db", url, "--json", "origins"])).out);
    assert.deepEqual(
      json.map((o: Record<string, unknown>) => [o.origin, o.path, o.sessions]),
      [["web-1", file, 42], ["web-2", other, 1]],
    );
    assert.equal(typeof json[0].last_pass_at, "number");

    const no = await runCli(["--db", url, "origins", "--remove", "web-1"], { stdin: "n\n" });
    assert.equal(no.code, 1);
    assert.match(
      no.err,
      new RegExp(`Remove origin 'web-1' \\(${file} on .*\\) and its 42 sessions\\?`),
    );
    const yes = await runCli(["--db", url, "origins", "--remove", "web-1"], { stdin: "y\n" });
    assert.equal(yes.code, 0, yes.err);
    assert.equal(yes.out, "Removed origin 'web-1' and 42 sessions.\n");
    const info = await runCli(["--db", url, "--json", "info"]);
    assert.equal(JSON.parse(info.out).sessions, 1);
    const gone = await runCli(["--db", url, "origins", "--remove", "web-1", "--yes"]);
    assert.equal(gone.code, 1);
    assert.match(gone.err, /No origin 'web-1'/);
    const onFile = await runCli(["--db", file, "origins"]);
    assert.equal(onFile.code, 1);
    assert.match(onFile.err, /origins needs a PostgreSQL store/);
  });

  test("origins shows a synced file's path with a line break as a mark, on its one row", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    const folder = join(tempDir(), "two\nlines");
    mkdirSync(folder);
    const file = join(folder, "state.db");
    copyFileSync(v11Copy(), file);
    assert.equal((await runCli(["sync", file, "--to", url, "--origin", "odd"])).code, 0);
    const listed = await runCli(["--db", url, "origins"]);
    assert.equal(listed.code, 0, listed.err);
    const lines = listed.out.trimEnd().split("\n");
    assert.equal(lines.length, 2, listed.out);
    assert.ok(lines[1].includes("two␊lines/state.db"), lines[1]);
    const no = await runCli(["--db", url, "origins", "--remove", "odd"], { stdin: "n\n" });
    assert.ok(no.err.includes("(" + file.replace("\n", "␊") + " on "), no.err);
  });

  test(
    "sync --follow --every SECONDS is the same pause; a bad or doubled pause is refused (exit 2)",
    {
      timeout: 60_000,
    },
    async () => {
      const file = v11Copy();
      const url = schemaUrl(freshSchema());
      for (
        const [argv, message] of [
          [["--follow=0"], /--follow must be a positive number of seconds, got "0"/],
          [
            ["--follow=soon"],
            /--follow must be a positive number of seconds, got "soon"/,
          ],
          [["--follow", "--every", "-1"], /--every must be a positive number/],
          [["--follow=2", "--every", "2"], /give the pause once/],
        ] as const
      ) {
        const run = await runCli(["sync", file, "--to", url, ...argv]);
        assert.equal(run.code, 2, argv.join(" "));
        assert.match(run.err, message);
      }
      // The older spelling still follows: two passes, then Ctrl-C.
      const io = interruptibleIo();
      const run = main(["--json", "sync", file, "--to", url, "--follow", "--every", "0.1"], io);
      while (io.out.split("\n").filter((l) => l !== "").length < 2) {
        await new Promise((r) => setTimeout(r, 50));
      }
      io.interrupt();
      assert.equal(await run, 0);
      assert.equal(JSON.parse(io.out.split("\n")[1]).messages, 0);
    },
  );

  test(
    "sync --follow reports a file's first pass, then only passes that change something, and an error once; --json every pass, one object a line",
    { timeout: 60_000 },
    async () => {
      const file = v11Copy();
      const schema = freshSchema();
      const url = schemaUrl(schema);
      const io = interruptibleIo();
      const lines = () => io.out.split("\n").filter((l) => l !== "");
      const until = (done: () => boolean | Promise<boolean>) =>
        waitUntil(done, "the pass", { everyMs: 50 });
      const run = main(["sync", file, "--to", url, "--follow=0.1", "--origin", "web-1"], io);
      await until(() => lines().length >= 1);
      assert.equal(
        lines()[0],
        `${file} → web-1: 42 new, 0 updated, 0 deleted sessions; 197 messages, 1 goal written.`,
      );
      // Passes that find nothing new go on, without a line: once the recorded pass is a
      // minute old, the next one records itself.
      const lastPass = async () =>
        JSON.parse((await runCli(["--db", url, "--json", "origins"])).out)[0].last_pass_at;
      // The time it was set to, not read after: a pass may record itself in between.
      const [aged] = await adminSql(
        `UPDATE "${schema}".sync_origins SET last_pass_at = last_pass_at - 61
         RETURNING last_pass_at`,
      );
      const first = Number(aged.last_pass_at);
      await until(async () => await lastPass() > first);
      assert.equal(lines().length, 1);
      // A message written to the file: the next pass says so.
      const db = await SessionDB.open({ path: file });
      db.appendMessage(V11.compressionTip, { role: "user", content: "one more" });
      db.close();
      await until(() => lines().length >= 2);
      assert.match(lines()[1], /: 0 new, 1 updated, 0 deleted sessions; 1 message written\.$/);
      // A pass that fails, then one that works: reported, though it changes nothing.
      renameSync(file, `${file}.away`);
      await until(() => io.err.includes("hermes-state: sync: "));
      // The same error pass after pass (one every 0.1 s) is named once.
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(io.err.split("hermes-state: sync: ").length, 2, io.err);
      // Said as a FILE missing at the start is, and that it is looked for again.
      assert.ok(
        io.err.endsWith(
          `hermes-state: sync: No database at ${file} (looked for again at each pass)\n`,
        ),
        io.err,
      );
      renameSync(`${file}.away`, file);
      await until(() => lines().length >= 3);
      assert.match(lines()[2], /: 0 new, 0 updated, 0 deleted sessions; 0 messages written\.$/);
      io.interrupt();
      // A pass failed, but the file was shipped again before the stop: the run did its job.
      assert.equal(await run, 0);
      assert.equal(lines().length, 3);

      // --json: every pass, each a JSON object on one line.
      const json = interruptibleIo();
      const jsonRun = main(["--json", "sync", file, "--to", url, "--follow=0.1"], json);
      await until(() => json.out.split("\n").length > 3);
      json.interrupt();
      assert.equal(await jsonRun, 0);
      const reports = json.out.trimEnd().split("\n").map((line) => JSON.parse(line));
      assert.ok(reports.length >= 3);
      assert.deepEqual(reports[0], {
        file,
        origin: "web-1",
        created: 0,
        updated: 0,
        deleted: 0,
        appended: 0,
        rewritten: 0,
        messages: 0,
        goals: 0,
        not_shipped: [],
      });
    },
  );

  test(
    "delete, prune and rename say what a synced session's file brings back; others get no note",
    {
      timeout: 60_000,
    },
    async () => {
      const file = v11Copy();
      const schema = freshSchema();
      const url = schemaUrl(schema);
      assert.equal((await runCli(["sync", file, "--to", url, "--origin", "web-1"])).code, 0);
      {
        await using store = await openStore(url);
        await store.createSession("local", "cli");
        await store.endSession("local", "done");
      }
      // Started long ago, as the synced ones were: prune's candidate too.
      await adminSql(`UPDATE "${schema}".sessions SET started_at = 1 WHERE id = 'local'`);
      const dry = await runCli(["--db", url, "prune", "--older-than", "0", "--dry-run"]);
      assert.equal(dry.code, 0, dry.err);
      assert.match(dry.out, /\blocal\b/);
      const pruned = Number(/(\d+) sessions would be deleted/.exec(dry.out)![1]);
      assert.equal(
        dry.err,
        `Note: ${
          pruned - 1
        } of these sessions came from a synced file (origin web-1): while the file holds them, ` +
          "each sync pass ships them back. Prune them on its host (hermes-state prune there) " +
          "and the next pass removes them here too.\n",
      );
      // prune --ghosts too (the fixture's empty, untitled tui sessions).
      const ghosts = await runCli(["--db", url, "prune", "--ghosts", "--dry-run"]);
      assert.equal(ghosts.code, 0, ghosts.err);
      assert.match(
        ghosts.err,
        /^Note: \d+ of these sessions came from a synced file \(origin web-1\)/,
      );
      // Named by the id its host's file has: the note names the store's id.
      const deleted = await runCli(["--db", url, "delete", V11.compressionTip, "--yes"]);
      assert.equal(deleted.code, 0, deleted.err);
      assert.match(
        deleted.err,
        new RegExp(`^Note: web-1/${V11.compressionTip} came from a synced file \\(origin web-1\\)`),
      );
      const renamed = await runCli(["--db", url, "rename", `web-1/${V11.compressionMid}`, "here"]);
      assert.equal(renamed.code, 0, renamed.err);
      assert.equal(
        renamed.err,
        `Note: web-1/${V11.compressionMid} came from a synced file (origin web-1): its next ` +
          "change on its host brings back the title its file has. Rename it on its host " +
          "(hermes-state rename there) and the next pass brings the title here too.\n",
      );
      assert.equal((await runCli(["--db", url, "rename", "local", "mine"])).err, "");
      const local = await runCli(["--db", url, "delete", "local", "--yes"]);
      assert.equal(local.code, 0, local.err);
      assert.equal(local.err, "");
      // A file records no origins: no note there.
      const onFile = await runCli(["--db", file, "prune", "--older-than", "0", "--dry-run"]);
      assert.equal(onFile.err, "");
      // The deleted session comes back with the next pass, as the note says.
      assert.equal((await runCli(["sync", file, "--to", url])).code, 0);
      await using store = await openStore(url);
      assert.ok(await store.getSession(`web-1/${V11.compressionTip}`));
    },
  );

  test(
    "usage --by origin and stats sum each synced file's sessions; --origin keeps one; a file refuses both",
    {
      timeout: 60_000,
    },
    async () => {
      const url = schemaUrl(freshSchema());
      assert.equal((await runCli(["sync", v11Copy(), "--to", url, "--origin", "web-1"])).code, 0);
      const other = copyFixture("hermes-v6.db");
      assert.equal((await runCli(["sync", other, "--to", url, "--origin", "web-2"])).code, 0);
      {
        await using store = await openStore(url);
        await store.createSession("local", "cli");
        await store.updateTokenCounts("local", { inputTokens: 7 });
      }
      const expected = async (origin: string | null) => {
        await using store = await openStore(url);
        const sessions = (await store.searchSessions({ limit: 10_000 }))
          .filter((s) => origin === null ? !s.id.includes("/") : s.id.startsWith(`${origin}/`));
        return {
          sessions: sessions.length,
          input: sessions.reduce((sum, s) => sum + (s.input_tokens ?? 0), 0),
        };
      };
      const run = await runCli([
        "--db",
        url,
        "--json",
        "usage",
        "--by",
        "origin",
        "--since",
        "all",
      ]);
      assert.equal(run.code, 0, run.err);
      const rows = JSON.parse(run.out).rows as {
        key: string | null;
        sessions: number;
        input_tokens: number;
      }[];
      assert.deepEqual(rows.map((r) => r.key).sort(), [null, "web-1", "web-2"].sort());
      for (const row of rows) {
        assert.deepEqual(
          { sessions: row.sessions, input: row.input_tokens },
          await expected(row.key),
          String(row.key),
        );
      }
      // stats shows the same table, by origin.
      const stats = await runCli(["--db", url, "--json", "stats"]);
      assert.deepEqual(
        JSON.parse(stats.out).by_origin.map((r: { key: string }) => r.key),
        rows.map((r) => r.key),
      );
      assert.match((await runCli(["--db", url, "stats"])).out, /\nBy origin\n +origin +sessions/);
      assert.equal(
        "by_origin" in JSON.parse((await runCli(["--db", other, "--json", "stats"])).out),
        false,
      );
      const table = await runCli(["--db", url, "usage", "--by", "origin", "--since", "all"]);
      assert.match(table.out, /^\(not synced\) +1 +7 /m);
      const one = await runCli([
        "--db",
        url,
        "--json",
        "usage",
        "--by",
        "source",
        "--since",
        "all",
        "--origin",
        "web-2",
      ]);
      const report = JSON.parse(one.out);
      assert.equal(report.origin, "web-2");
      assert.equal(
        report.rows.reduce((sum: number, r: { sessions: number }) => sum + r.sessions, 0),
        (await expected("web-2")).sessions,
      );
      for (const argv of [["--by", "origin"], ["--origin", "web-1"]]) {
        const onFile = await runCli(["--db", other, "usage", ...argv]);
        assert.equal(onFile.code, 1, argv.join(" "));
        assert.match(
          onFile.err,
          /needs a PostgreSQL store \(origins are recorded by "hermes-state sync"\)/,
        );
      }
    },
  );

  test(
    "copy between PostgreSQL stores keeps the sync records: each host's next pass goes on incrementally",
    {
      timeout: 60_000,
    },
    async () => {
      const first = v11Copy();
      const second = copyFixture("hermes-v6.db");
      const from = schemaUrl(freshSchema());
      assert.equal((await runCli(["sync", first, "--to", from, "--origin", "web-1"])).code, 0);
      assert.equal((await runCli(["sync", second, "--to", from, "--origin", "web-2"])).code, 0);
      const to = schemaUrl(freshSchema());
      const copied = await runCli(["--json", "copy", from, to]);
      assert.equal(copied.code, 0, copied.err);
      assert.deepEqual(JSON.parse(copied.out).sync, { origins: 2, sessions: 55, conflicting: [] });
      const origins = async (url: string) =>
        JSON.parse((await runCli(["--db", url, "--json", "origins"])).out).map(
          (o: Record<string, unknown>) => [o.origin, o.host, o.path, o.sessions, o.last_pass_at],
        );
      assert.deepEqual(await origins(to), await origins(from));
      // The hosts' next passes into the new store: nothing new, then only what is new.
      const pass = await runCli(["sync", first, "--to", to]);
      assert.equal(
        pass.out,
        `${first} → web-1: 0 new, 0 updated, 0 deleted sessions; 0 messages written.\n`,
      );
      const db = await SessionDB.open({ path: second });
      const [anyId] = db.listSessionsRich({ limit: 1 }).map((s) => s.id);
      db.appendMessage(anyId, { role: "user", content: "after the move" });
      db.close();
      const next = await runCli(["sync", second, "--to", to]);
      assert.match(
        next.out,
        / → web-2: 0 new, 1 updated, 0 deleted sessions; 1 message written\.\n$/,
      );
      const count = async (url: string) =>
        JSON.parse((await runCli(["--db", url, "--json", "info"])).out).sessions;
      assert.equal(await count(to), await count(from));
      // Again: nothing to add.
      const again = await runCli(["--json", "copy", from, to]);
      assert.deepEqual(JSON.parse(again.out).sync, { origins: 0, sessions: 0, conflicting: [] });

      // A store with its own origin of that name, for another file: left out, and said.
      const other = schemaUrl(freshSchema());
      assert.equal(
        (await runCli(["sync", copyFixture("hermes-v11.db"), "--to", other, "--origin", "web-1"]))
          .code,
        0,
      );
      const clash = await runCli(["copy", from, other]);
      assert.equal(clash.code, 0, clash.err);
      assert.match(
        clash.err,
        /has an origin 'web-1' of another host or file: the sync records of its sessions were not kept/,
      );
      assert.match(clash.out, /; sync records: 1 origin and 13 synced sessions added\.\n$/);
      // Into a file: no origins there, and said.
      const file = await runCli(["copy", from, tempDbPath()]);
      assert.equal(file.code, 0, file.err);
      assert.match(
        file.err,
        /is a file, which records no origins: the 2 origins of the synced sessions stay behind/,
      );
    },
  );

  test("sync refuses a missing --to, a file URL and --origin with two files (exit 2)", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    assert.equal((await runCli(["sync", file])).code, 2);
    assert.equal((await runCli(["sync", file, "--to", file])).code, 2);
    assert.equal(
      (await runCli(["sync", file, file, "--to", schemaUrl(freshSchema()), "--origin", "x"])).code,
      2,
    );
    const missing = await runCli(["sync", `${file}.nope`, "--to", schemaUrl(freshSchema())]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /No database at/);
    // --every without --follow did one pass and said nothing of its pause.
    const every = await runCli(["sync", file, "--to", schemaUrl(freshSchema()), "--every", "3"]);
    assert.equal(every.code, 2);
    assert.match(
      every.err,
      /^hermes-state sync: --every is the pause of --follow: give --follow too\n/,
    );
    // --follow 10 read 10 as a file.
    const spaced = await runCli(["sync", file, "--to", schemaUrl(freshSchema()), "--follow", "10"]);
    assert.equal(spaced.code, 1);
    assert.equal(
      spaced.err,
      "hermes-state: No database at 10; for a pause of 10 s, write --follow=10\n",
    );
  });

  test("list and search --origin show only the sessions synced from that origin", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["sync", v11Copy(), "--to", url, "--origin", "web-1"])).code, 0);
    assert.equal((await runCli(["sync", v11Copy(), "--to", url, "--origin", "web-2"])).code, 0);
    const listed = await runCli([
      "--db",
      url,
      "--json",
      "list",
      "--limit",
      "100",
      "--origin",
      "web-2",
    ]);
    assert.equal(listed.code, 0, listed.err);
    const rows = JSON.parse(listed.out) as { id: string }[];
    assert.ok(rows.length > 0 && rows.every((r) => r.id.startsWith("web-2/")));
    const hits = await runCli(["--db", url, "--json", "search", "docker", "--origin", "web-1"]);
    const found = JSON.parse(hits.out) as { session_id: string }[];
    assert.ok(found.length > 0 && found.every((h) => h.session_id.startsWith("web-1/")));
    // An origin the store does not record is an error, not an empty answer.
    const none = await runCli(["--db", url, "--json", "search", "docker", "--origin", "nope"]);
    assert.equal(none.code, 1);
    assert.match(none.err, /No origin "nope" in .*: known origins are web-1, web-2/);
    const onFile = await runCli(["--db", v11Copy(), "list", "--origin", "web-1"]);
    assert.equal(onFile.code, 1);
    assert.match(onFile.err, /--origin needs a PostgreSQL store/);
    const searchOnFile = await runCli(["--db", v11Copy(), "search", "docker", "--origin", "web-1"]);
    assert.equal(searchOnFile.code, 1);
    assert.match(searchOnFile.err, /--origin needs a PostgreSQL store/);
  });

  test(
    "show, lineage and export find a synced session by the id its host's file has, and list the origins when several have it; export --origin takes one origin's sessions",
    {
      timeout: 60_000,
    },
    async () => {
      const url = schemaUrl(freshSchema());
      const file = v11Copy();
      assert.equal((await runCli(["sync", file, "--to", url, "--origin", "web-1"])).code, 0);
      const tip = V11.compressionTip;
      const shown = await runCli(["--db", url, "--json", "show", tip]);
      assert.equal(shown.code, 0, shown.err);
      assert.equal(JSON.parse(shown.out).id, `web-1/${tip}`);
      const byPrefix = await runCli(["--db", url, "--json", "show", tip.slice(0, -2)]);
      assert.equal(byPrefix.code, 0, byPrefix.err);
      assert.equal(JSON.parse(byPrefix.out).id, `web-1/${tip}`);
      const lineage = await runCli(["--db", url, "lineage", V11.compressionMid]);
      assert.equal(lineage.code, 0, lineage.err);
      assert.match(lineage.out, new RegExp(`web-1/${V11.compressionRoot}`));
      const exported = await runCli(["--db", url, "export", "-", "--session-id", tip]);
      assert.equal(exported.code, 0, exported.err);
      assert.equal(JSON.parse(exported.out.split("\n")[0]).id, `web-1/${tip}`);

      assert.equal((await runCli(["sync", v11Copy(), "--to", url, "--origin", "web-2"])).code, 0);
      const both = await runCli(["--db", url, "show", tip]);
      assert.equal(both.code, 1);
      assert.equal(
        both.err,
        `hermes-state: Session '${tip}' is ambiguous: matches 2 sessions (give ORIGIN/ID, or more ` +
          `of the id):\n  web-1/${tip}\n  web-2/${tip}\n`,
      );
      assert.equal((await runCli(["--db", url, "show", `web-2/${tip}`])).code, 0);
      const only = await runCli(["--db", url, "export", "-", "--origin", "web-2"]);
      assert.equal(only.code, 0, only.err);
      const exportedIds = only.out.trim().split("\n").map((line) => JSON.parse(line).id as string);
      assert.equal(exportedIds.length, 42);
      assert.ok(exportedIds.every((id) => id.startsWith("web-2/")));
      const doubled = await runCli([
        "--db",
        url,
        "export",
        "-",
        "--origin",
        "web-2",
        "--session-id",
        tip,
      ]);
      assert.equal(doubled.code, 2);
      assert.match(doubled.err, /give either --session-id or --origin, not both/);
      const onFile = await runCli(["--db", file, "export", "-", "--origin", "web-2"]);
      assert.equal(onFile.code, 1);
      assert.match(onFile.err, /--origin needs a PostgreSQL store/);
      const unknown = await runCli(["--db", url, "show", "19990101_nothing"]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.err, /not found/);
    },
  );

  test("sync --follow=SECONDS ships new messages on the next pass and stops after Ctrl-C", {
    timeout: 60_000,
  }, async () => {
    const file = v11Copy();
    const url = schemaUrl(freshSchema());
    const io = interruptibleIo();
    const run = main(
      ["sync", file, "--to", url, "--origin", "f", "--follow=0.2"],
      io,
    );
    const lines = () => io.out.split("\n").filter((l) => l !== "");
    await waitUntil(() => lines().length >= 1, "the first pass", { everyMs: 50 });
    const db = await SessionDB.open({ path: file });
    db.appendMessage(V11.compressionTip, { role: "user", content: "one more, while following" });
    db.close();
    await waitUntil(() => lines().some((l) => l.endsWith("1 message written.")), "the next pass", {
      everyMs: 50,
    });
    assert.ok(io.listening, "sync --follow listens for Ctrl-C");
    io.interrupt();
    assert.equal(await run, 0);
    assert.ok(!io.listening, "it stopped listening");
    await using store = await openStore(url);
    assert.equal((await store.searchMessages("while following")).length, 1);
  });

  test("show --follow prints a message another client appends to the server, until Ctrl-C", {
    timeout: 60_000,
  }, async () => {
    const url = schemaUrl(freshSchema());
    assert.equal((await runCli(["copy", v11Copy(), url])).code, 0);
    const io = interruptibleIo();
    const run = main(["--db", url, "show", V11.live, "--follow=0.05"], io);
    const printed = (text: string) => waitUntil(() => io.out.includes(text), JSON.stringify(text));
    await printed("Run B is faster");
    {
      await using store = await openStore(url);
      await store.appendMessage(V11.live, { role: "user", content: "written on the server" });
      await printed("written on the server");
      await store.endSession(V11.live, "user_exit");
      await printed("· user_exit ──");
    }
    assert.ok(io.listening, "show --follow listens for Ctrl-C");
    io.interrupt();
    assert.equal(await run, 0);
    assert.equal(io.out.split("written on the server").length, 2, "printed once");
  });

  test("copy and sync keep a REAL that SQLite's type affinity let into an INTEGER column", {
    timeout: 60_000,
  }, async () => {
    // As an older Hermes wrote them: fractional token counts in INTEGER columns.
    const file = v11Copy();
    {
      using conn = await rawOpen(file);
      conn.exec(`UPDATE sessions SET input_tokens = 12.5, api_call_count = 2.25
        WHERE id = '${V11.compressionTip}'`);
      conn.exec(`UPDATE messages SET token_count = 3.75
        WHERE id = (SELECT min(id) FROM messages WHERE session_id = '${V11.compressionTip}')`);
      const [row] = conn.prepare(
        "SELECT typeof(input_tokens) AS t FROM sessions WHERE id = ?",
      ).all(V11.compressionTip);
      assert.equal(row.t, "real");
    }
    const copied = schemaUrl(freshSchema());
    const copy = await runCli(["copy", file, copied]);
    assert.equal(copy.code, 0, copy.err);
    const synced = schemaUrl(freshSchema());
    const sync = await runCli(["sync", file, "--to", synced, "--origin", "old"]);
    assert.equal(sync.code, 0, sync.err);
    for (const [url, id] of [[copied, V11.compressionTip], [synced, `old/${V11.compressionTip}`]]) {
      await using store = await openStore(url);
      const session = await store.getSession(id);
      assert.equal(session?.input_tokens, 12.5, url);
      assert.equal(session?.api_call_count, 2.25, url);
      assert.equal((await store.getMessages(id))[0].token_count, 3.75, url);
      // Counters still add up exactly on the server.
      await store.updateTokenCounts(id, { inputTokens: 1.5 });
      assert.equal((await store.getSession(id))?.input_tokens, 14, url);
    }
  });

  test("a read command on a schema with no store says so; migrate creates it, once", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const url = schemaUrl(schema);
    const list = await runCli(["--db", url, "list"]);
    assert.equal(list.code, 1);
    assert.match(
      list.err,
      new RegExp(`^hermes-state: .*schema "${schema}" holds no hermes-state store yet`),
    );
    assert.equal(list.err.trimEnd().split("\n").length, 1, list.err);
    const created = await runCli(["--db", url, "migrate"]);
    assert.equal(created.code, 0, created.err);
    assert.match(created.err, /^created the store \(migration \d+\)\n$/);
    const again = await runCli(["--db", url, "--json", "migrate"]);
    assert.equal(again.code, 0, again.err);
    const report = JSON.parse(again.out);
    assert.equal(report.upgraded, false);
    assert.equal(report.before, report.after);
    assert.match(again.err, /^migration \d+: nothing to upgrade\n$/);
    const empty = await runCli(["--db", url, "list"]);
    assert.equal(empty.code, 0, empty.err);
  });

  test("info, stats and vacuum on a URL report the server's size, not a file's", {
    timeout: 60_000,
  }, async () => {
    const schema = freshSchema();
    const url = schemaUrl(schema);
    assert.equal((await runCli(["copy", v11Copy(), url])).code, 0);
    const info = await runCli(["--db", url, "info"]);
    assert.equal(info.code, 0, info.err);
    assert.match(info.out, /\nServer +PostgreSQL \d+/);
    assert.match(info.out, /\nSize +[\d.]+ [KM]iB \(tables and indexes on the server\)\n/);
    assert.doesNotMatch(info.out, /SQLite|Journal mode|WAL|SHM/);
    const json = JSON.parse((await runCli(["--db", url, "--json", "info"])).out);
    assert.equal(json.files, null);
    assert.ok(json.bytes > 100_000, `the copied store's tables take room: ${json.bytes}`);
    const stats = await runCli(["--db", url, "stats"]);
    assert.match(
      stats.out,
      /\nDatabase size: [\d.]+ [KM]iB \(tables and indexes on the server\)\n/,
    );
    const vacuum = await runCli(["--db", url, "--json", "vacuum"]);
    assert.equal(vacuum.code, 0, vacuum.err);
    const sizes = JSON.parse(vacuum.out);
    assert.ok(sizes.bytes_before > 100_000 && sizes.bytes_after > 100_000, vacuum.out);
    const missed = await adminSql(
      `SELECT relname FROM pg_stat_user_tables WHERE schemaname = '${schema}'
         AND last_vacuum IS NULL AND relname NOT IN ('hermes_migrations', 'schema_version')
       ORDER BY relname`,
    );
    assert.deepEqual(missed, [], "every table deletes leave dead rows in is vacuumed");
  });
  test(
    "copy of a newer Hermes's file → PostgreSQL → file: the server keeps every column, a v11 file names what it cannot",
    {
      timeout: 60_000,
    },
    async () => {
      const file = copyFixture("hermes-v21.db");
      const url = schemaUrl(freshSchema());
      const there = await runCli(["copy", file, url]);
      assert.equal(there.code, 0, there.err);
      assert.equal(there.err, "", "nothing dropped on the way to the server");
      const lines = (text: string) => text.trimEnd().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(lines(await exportOf(url)), lines(await exportOf(file)));
      const back = tempDbPath();
      const run = await runCli(["--json", "copy", url, back]);
      assert.equal(run.code, 0, run.err);
      const dropped = JSON.parse(run.out).dropped_columns as string[];
      assert.ok(dropped.includes("archived") && dropped.includes("messages.active"), run.out);
      const plain = await runCli(["copy", url, tempDbPath()]);
      assert.match(
        plain.err,
        /^hermes-state: copy: .+ has no column for .*messages\.compacted.*: those values were not kept\n$/,
      );
    },
  );
});
