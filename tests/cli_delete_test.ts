import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { recordingIo, runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { main } from "../lib/cli/main.ts";

describe("delete", () => {
  test("delete asks on stderr and deletes after y", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "delete", V11.live], { stdin: "y\n" });
    assert.equal(run.code, 0);
    assert.match(
      run.err,
      new RegExp(`^Delete session '${V11.live}' and its \\d+ messages\\? \\[y/N\\] $`),
    );
    assert.equal(run.out, `Deleted session '${V11.live}'.\n`);
    assert.equal(await withDb(path, (db) => db.getSession(V11.live)), undefined);
  });

  test("delete keeps the session and exits 1 for no, any other answer, or end of input", async () => {
    const path = v11Copy();
    for (const stdin of ["n\n", "maybe\n", ""]) {
      const run = await runCli(["--db", path, "delete", V11.live], { stdin });
      assert.equal(run.code, 1);
      assert.match(run.err, /Cancelled\.\n$/);
      assert.equal(run.out, "");
    }
    assert.ok(await withDb(path, (db) => db.getSession(V11.live)));
  });

  test("delete takes an exact title, never its newest continuation (each run would take another)", async () => {
    const path = v11Copy();
    const count = () => withDb(path, (db) => db.listSessionsRich({ limit: 1000 }).length);
    const before = await count();
    for (const title of ["MY PROJECT", "My Project"]) {
      const run = await runCli(["--db", path, "delete", "--yes", title]);
      assert.equal(run.code, 1);
      assert.equal(
        run.err,
        `hermes-state: Session '${title}' not found (delete takes an id, a unique id prefix or ` +
          "an exact title; 'my project #3' continues it: name that one)\n",
      );
    }
    assert.equal(await count(), before);
    // `show` still finds the continuation; the exact title deletes.
    assert.equal((await runCli(["--db", path, "show", "MY PROJECT"])).code, 0);
    const exact = await runCli(["--db", path, "delete", "--yes", "my project #3"]);
    assert.equal(exact.code, 0, exact.err);
    assert.equal(await withDb(path, (db) => db.getSession(V11.compressionTip)), undefined);
  });

  test("delete --yes does not ask; children are kept as roots", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "delete", "--yes", V11.compressionRoot]);
    assert.equal(run.code, 0);
    assert.equal(run.err, "");
    const child = await withDb(path, (db) => db.getSession(V11.delegateChild));
    assert.equal(child?.parent_session_id, null);
  });

  test("delete names the title and the children it keeps when it asks", async () => {
    const run = await runCli(["--db", v11Copy(), "delete", V11.compressionRoot], { stdin: "Y\n" });
    assert.equal(run.code, 0);
    assert.match(
      run.err,
      /\("my project"\) and its 13 messages \(its 2 child sessions are kept\)\? \[y\/N\]/,
    );
  });

  test("delete removes the transcript files in the sessions folder beside the database", async () => {
    const path = v11Copy();
    const sessions = join(dirname(path), "sessions");
    mkdirSync(sessions);
    const file = join(sessions, `${V11.live}.jsonl`);
    writeFileSync(file, "{}\n");
    const run = await runCli(["--db", path, "delete", "-y", V11.live]);
    assert.equal(run.code, 0);
    assert.equal(existsSync(file), false);
  });

  test("delete exits 1 with one line when the sessions folder cannot be looked at", async () => {
    const path = v11Copy();
    const sessions = join(dirname(path), "sessions");
    symlinkSync("sessions", sessions); // a link to itself: stat fails with ELOOP, not ENOENT
    const run = await runCli(["--db", path, "delete", "-y", V11.live]);
    assert.equal(run.code, 1);
    assert.ok(run.err.startsWith(`hermes-state: Cannot look into ${sessions}: `), run.err);
    assert.equal(run.err.split("\n").length, 2, run.err);
    assert.equal(run.out, "");
    assert.ok(await withDb(path, (db) => db.getSession(V11.live)));
  });

  test("delete exits 1 for an unknown session without asking", async () => {
    const run = await runCli(["--db", v11Copy(), "delete", "nope"], { stdin: "y\n" });
    assert.equal(run.code, 1);
    assert.doesNotMatch(run.err, /\[y\/N\]/);
  });

  test("delete takes several sessions, asks once, and deletes none when one is unknown", async () => {
    const path = v11Copy();
    const unknown = await runCli(["--db", path, "delete", "-y", V11.live, "nope"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /Session 'nope' not found/);
    assert.ok(await withDb(path, (db) => db.getSession(V11.live)), "nothing was deleted");
    const run = await runCli(["--db", path, "delete", V11.live, V11.oldCli], { stdin: "y\n" });
    assert.equal(run.code, 0, run.err);
    assert.match(run.err, /^Delete 2 sessions:\n {2}session '/);
    assert.equal(run.out, `Deleted 2 sessions: ${V11.live}, ${V11.oldCli}.\n`);
    const left = await withDb(path, (db) => [db.getSession(V11.live), db.getSession(V11.oldCli)]);
    assert.deepEqual(left, [undefined, undefined]);
  });

  test("delete still reads several unquoted words as one title", async () => {
    const path = v11Copy();
    const run = await runCli(["--db", path, "delete", "-y", "my", "project", "#2"]);
    assert.equal(run.code, 0, run.err);
    assert.equal(run.out, `Deleted session '${V11.compressionMid}'.\n`);
  });

  test("delete --json prints one shape, {deleted, not_found}, whatever happens", async () => {
    const path = v11Copy();
    const shape = async (argv: string[], stdin = "") => {
      const run = await runCli(["--db", path, "--json", "delete", ...argv], { stdin });
      return { code: run.code, json: JSON.parse(run.out), err: run.err };
    };
    // One id: an array too (it was a bare string), several ids, and a prefix.
    assert.deepEqual(await shape(["-y", V11.live]), {
      code: 0,
      json: { deleted: [V11.live], not_found: [], ambiguous: [] },
      err: "",
    });
    assert.deepEqual((await shape(["-y", V11.oldCli, V11.kitchenSink.slice(0, 15)])).json, {
      deleted: [V11.oldCli, V11.kitchenSink],
      not_found: [],
      ambiguous: [],
    });
    // Arguments that name nothing: all of them listed, nothing deleted, exit 1 (it printed nothing).
    const missing = await shape(["-y", "nope", V11.telegramZh, "nada"]);
    assert.deepEqual(missing.json, { deleted: [], not_found: ["nope", "nada"], ambiguous: [] });
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^hermes-state: Sessions not found: 'nope', 'nada' \(/);
    assert.ok(await withDb(path, (db) => db.getSession(V11.telegramZh)), "nothing was deleted");
    // The answer no: nothing deleted, exit 1 (it printed nothing).
    const refused = await shape([V11.telegramZh], "n\n");
    assert.deepEqual(refused.json, { deleted: [], not_found: [], ambiguous: [] });
    assert.equal(refused.code, 1);
    assert.match(refused.err, /Cancelled\.\n$/);
  });

  test("delete --json reports an ambiguous prefix too, deletes nothing and exits 1", async () => {
    const path = v11Copy();
    const one = await runCli(["--db", path, "--json", "delete", "-y", "20260423_090"]);
    assert.equal(one.code, 1);
    assert.deepEqual(JSON.parse(one.out), {
      deleted: [],
      not_found: [],
      ambiguous: [{
        argument: "20260423_090",
        count: 3,
        ids: ["20260423_090716_ebc94a0a", V11.branchChild, V11.branchParent],
      }],
    });
    assert.match(one.err, /^hermes-state: Session '20260423_090' is ambiguous: matches 3 sessions/);
    // Mixed with a session found and one not found: all reported, nothing deleted.
    const mixed = await runCli(["--db", path, "--json", "delete", "-y", V11.live, "2026", "nope"]);
    assert.equal(mixed.code, 1);
    const json = JSON.parse(mixed.out);
    assert.deepEqual(json.deleted, []);
    assert.deepEqual(json.not_found, ["nope"]);
    assert.equal(json.ambiguous.length, 1);
    assert.equal(json.ambiguous[0].argument, "2026");
    assert.equal(json.ambiguous[0].ids.length, 10, "the first ten");
    assert.ok(json.ambiguous[0].count > 10);
    assert.match(
      mixed.err,
      /^hermes-state: Sessions not found: 'nope'; ambiguous \(several sessions match\): '2026' \(.*nothing was deleted\)\n$/,
    );
    const left = await withDb(path, (db) => [db.getSession(V11.live), db.sessionCount()]);
    assert.ok(left[0], "nothing was deleted");
    assert.equal(left[1], 42);
  });

  test("a name that finds no session is shown with its control characters made visible", async () => {
    for (const argv of [["show", "zz\x1b[2Jyy"], ["delete", "zz", "q\x1b[2J"]]) {
      const run = await runCli(["--db", v11Copy(), ...argv]);
      assert.equal(run.code, 1);
      assert.ok(!run.err.includes("\x1b"), JSON.stringify(run.err));
      assert.match(run.err, /not found/);
    }
  });

  test("delete goes on past a session another process deleted after the question, and says so", async () => {
    const path = v11Copy();
    const io = recordingIo();
    // The answer comes after another process deleted one of the two sessions.
    io.readLine = async () => {
      await withDb(path, (db) => db.deleteSession(V11.oldCli));
      return "y";
    };
    const code = await main(["--db", path, "--json", "delete", V11.live, V11.oldCli], io);
    assert.equal(code, 1, io.err);
    assert.deepEqual(JSON.parse(io.out), {
      deleted: [V11.live],
      not_found: [V11.oldCli],
      ambiguous: [],
    });
    assert.match(io.err, new RegExp(`no longer there to delete .*: ${V11.oldCli}\n$`));
    assert.equal(await withDb(path, (db) => db.getSession(V11.live)), undefined);
  });
});
