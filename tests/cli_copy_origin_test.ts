/**
 * `copy --origin NAME`: restoring one host's state.db from the central
 * store that `sync` fills. There, each host's sessions are `ORIGIN/ID`
 * (their parents too), and a title another origin holds carries
 * ` [ORIGIN]`; a plain `copy postgres://… FILE` brings every origin's
 * sessions under those ids. With `--origin`, only that origin's sessions
 * come, as its file held them: ids, parents, titles and goals. A second run
 * copies nothing. The plain form, from a store of several origins, says
 * that `--origin` exists.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, v11Copy } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";
import { openStore } from "../lib/open_store.ts";
import type { SessionExportWithActivity } from "../lib/core/types.ts";

/** Every session of a file as an export gives it, its messages without their ids (a server's). */
async function sessionsOf(path: string) {
  await using store = await openStore(path, { readonly: true });
  const sessions: SessionExportWithActivity[] = [];
  for await (const session of store.iterateExport()) sessions.push(session);
  const goals = await Promise.all(sessions.map((s) => store.getMeta(`goal:${s.id}`)));
  return sessions.map((session, i) => ({
    ...session,
    messages: session.messages.map(({ id: _, ...message }) => message),
    goal: goals[i],
  })).sort((a, b) => a.id < b.id ? -1 : 1);
}

/** A store two hosts' copies of the same file (the same ids and titles) were synced into. */
async function twoHosts() {
  const url = schemaUrl(freshSchema());
  const [a, b] = [v11Copy(), v11Copy()];
  for (const [file, origin] of [[a, "web-1"], [b, "web-2"]]) {
    const run = await runCli(["sync", file, "--to", url, "--origin", origin]);
    assert.equal(run.code, 0, run.err);
  }
  return { url, a, b };
}

describe("copy --origin restores one host's file from the central store", { skip: PG_SKIP }, () => {
  test(
    "only that origin's sessions, under their ids, parents, titles and goals in its file; again copies nothing",
    {
      timeout: 120_000,
    },
    async () => {
      const { url, b } = await twoHosts();
      // web-2's titles were taken by web-1's sessions: on the server they carry " [web-2]".
      const titled = await runCli([
        "--db",
        url,
        "--json",
        "list",
        "--origin",
        "web-2",
        "--limit",
        "100",
      ]);
      assert.ok(
        (JSON.parse(titled.out) as { title: string | null }[]).some((s) =>
          s.title?.endsWith(" [web-2]")
        ),
      );
      const restored = join(tempDir(), "state.db");
      const run = await runCli(["copy", url, restored, "--origin", "web-2"]);
      assert.equal(run.code, 0, run.err);
      assert.equal(
        run.out,
        "Copied 42 sessions of origin web-2 (under their ids in its file), skipped 0 already " +
          "present (197 messages written).\n",
      );
      assert.deepEqual(await sessionsOf(restored), await sessionsOf(b));

      const again = await runCli(["--json", "copy", url, restored, "--origin", "web-2"]);
      assert.equal(again.code, 0, again.err);
      const counts = JSON.parse(again.out);
      assert.equal(counts.origin, "web-2");
      assert.deepEqual([counts.copied, counts.skipped, counts.messages], [0, 42, 0]);
    },
  );

  test("the plain copy of a store of several origins names --origin; --origin is checked", {
    timeout: 120_000,
  }, async () => {
    const { url, a } = await twoHosts();
    const all = join(tempDir(), "all.db");
    const plain = await runCli(["copy", url, all]);
    assert.equal(plain.code, 0, plain.err);
    assert.match(plain.out, /^Copied 84 sessions, /);
    assert.match(
      plain.err,
      /the sessions of all 2 origins were copied, as ORIGIN\/ID; to restore one host's file, .*--origin NAME/,
    );

    const unknown = await runCli(["copy", url, join(tempDir(), "x.db"), "--origin", "web-3"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /No origin "web-3" in .*: known origins are web-1, web-2/);
    const fromFile = await runCli(["copy", a, join(tempDir(), "y.db"), "--origin", "web-1"]);
    assert.equal(fromFile.code, 1);
    assert.match(fromFile.err, /--origin needs a PostgreSQL store/);
    const empty = await runCli(["copy", url, join(tempDir(), "z.db"), "--origin="]);
    assert.equal(empty.code, 2);
  });
});
