/**
 * `sync`'s FILE as an operator types it: `sqlite:PATH`, as `copy` takes a
 * file, and a path holding a line break or another control character,
 * shown as marks in the progress and summary lines (as `origins` shows it)
 * rather than raw, where it would break the line or rewrite the terminal.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, linkSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { runCli, v11Copy } from "./_cli_io.ts";
import { tempDir } from "./_helpers.ts";
import { SessionDB } from "../mod.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

test("sync takes sqlite:PATH as copy does, and ships the file PATH", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const file = v11Copy();
  const run = await runCli(["sync", `sqlite:${file}`, "--to", url, "--origin", "web-1"]);
  assert.equal(run.code, 0, run.err);
  assert.equal(
    run.out,
    `${file} → web-1: 42 new, 0 updated, 0 deleted sessions; 197 messages, 1 goal written.\n`,
  );
  // The same file, however it is named: one origin, nothing shipped twice.
  const again = await runCli(["sync", file, "--to", url]);
  assert.equal(again.code, 0, again.err);
  assert.match(
    again.out,
    / → web-1: 0 new, 0 updated, 0 deleted sessions; 0 messages written\.\n$/,
  );
  const origins = JSON.parse((await runCli(["--db", url, "--json", "origins"])).out);
  assert.deepEqual(origins.map((o: { path: string }) => o.path), [file]);
});

test("sync shows a FILE's line break and escape as marks in its progress and summary lines", {
  skip: PG_SKIP,
  timeout: 60_000,
}, async () => {
  const url = schemaUrl(freshSchema());
  const folder = join(tempDir(), "a\nb\x1b[2Jc");
  mkdirSync(folder);
  const file = join(folder, "state.db");
  copyFileSync(v11Copy(), file);
  // The clock moves a minute a reading, so the progress line is drawn.
  let clock = 0;
  const run = await runCli(["sync", file, "--to", url, "--origin", "web-1"], {
    now: () => (clock += 60),
    stderrIsTerminal: true,
  });
  assert.equal(run.code, 0, run.err);
  const shown = file.replace("\n", "␊").replace("\x1b", "␛");
  assert.equal(
    run.out,
    `${shown} → web-1: 42 new, 0 updated, 0 deleted sessions; 197 messages, 1 goal written.\n`,
  );
  assert.ok(run.err.includes(`Synced ${shown}: `), JSON.stringify(run.err));
  assert.ok(!run.err.includes(folder), JSON.stringify(run.err));
});

test("sync refuses one file given twice under two names (a hard link), before connecting", async () => {
  const file = v11Copy();
  const hard = join(tempDir(), "hard.db");
  linkSync(file, hard);
  // No server is asked: a URL nothing listens at.
  const run = await runCli(["sync", file, hard, "--to", "postgres://127.0.0.1:1/none"]);
  // Before: two origins, every session of the file stored twice.
  assert.equal(run.code, 2);
  assert.match(run.err, /are one file \(a link to it\): give it once/);
});

test(
  "sync's line says how many transcripts a pass rewrote (it said 0 updated, and messages written)",
  {
    skip: PG_SKIP,
    timeout: 60_000,
  },
  async () => {
    const url = schemaUrl(freshSchema());
    const file = v11Copy();
    assert.equal((await runCli(["sync", file, "--to", url, "--origin", "web-1"])).code, 0);
    {
      using db = await SessionDB.open({ path: file });
      const kept = db.getMessagesAsConversation("20251221_090000_9738df").slice(0, 2);
      db.replaceMessages("20251221_090000_9738df", kept);
    }
    const run = await runCli(["sync", file, "--to", url]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, / deleted sessions; 1 transcript rewritten; 2 messages written\.\n$/);
  },
);
