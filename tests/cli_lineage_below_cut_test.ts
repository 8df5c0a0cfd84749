/**
 * `lineage` of a session 1,000 generations below its family's root: the tree
 * was read from the root, 1,000 generations down, so it ended on the session
 * asked for and drew nothing under it, and the note said "run lineage on
 * s1000 for the part below" of s1000 itself, which drew the same tree again:
 * the part below could not be reached. Now the session's own descendants
 * are drawn, 1,000 generations down from it, as the note and the docs
 * ("at most 1,000 generations up and down") promise.
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { runCli } from "./_cli_io.ts";
import { openStore } from "../lib/open_store.ts";

interface Node {
  id: string;
  children: Node[];
}

let path: string;

/** A compression chain s0 → s1 → … → s2500, written straight in SQL. */
before(async () => {
  path = tempDbPath();
  {
    await using store = await openStore(path);
    await store.createSession("other", "cli");
  }
  using raw = await rawOpen(path);
  raw.exec("BEGIN");
  const insert = raw.prepare(
    "INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id) " +
      "VALUES (?, 'cli', ?, ?, ?, ?)",
  );
  for (let i = 0; i <= 2500; i++) {
    const at = 1_767_000_000 + i;
    const ended = i < 2500 ? [at + 0.5, "compression"] : [null, null];
    insert.run(`s${i}`, at, ...ended, i === 0 ? null : `s${i - 1}`);
  }
  raw.exec("COMMIT");
});

/** The ids of a `--json` tree down its only line. */
function chainIds(tree: Node): string[] {
  const ids = [tree.id];
  for (let node = tree; node.children.length > 0; ids.push(node.id)) node = node.children[0];
  return ids;
}

describe("lineage of a session at the bound below its root", () => {
  test("draws the part below it and points past it", async () => {
    const run = await runCli(["--db", path, "lineage", "s1000"]);
    assert.equal(run.code, 0, run.err);
    const lines = run.out.trimEnd().split("\n");
    assert.match(lines[0], /^s0 · cli · /);
    assert.match(lines[1000], /^\[compression\] s1000 · .*◀$/);
    assert.match(lines.at(-1)!, /^\[compression\] s2000 · cli · /);
    assert.equal(lines.length, 2001);
    assert.equal(
      run.err,
      "Note: the family goes on below s2000: a tree is drawn at most 1,000 generations up " +
        "and down; run lineage on s2000 for the part below.\n",
    );
  });

  test("for a session above the bound, the note names only where the part below it is cut", async () => {
    // The part below s750 reaches s1750; the note named s1000 too, which was drawn with its
    // children (the generations 1,000 below the root were read before that part was drawn).
    const run = await runCli(["--db", path, "lineage", "s750"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out.trimEnd().split("\n").at(-1)!, /^\[compression\] s1750 · /);
    assert.equal(
      run.err,
      "Note: the family goes on below s1750: a tree is drawn at most 1,000 generations up " +
        "and down; run lineage on s1750 for the part below.\n",
    );
  });

  test("the note's session shows the rest, to the tip", async () => {
    const run = await runCli(["--db", path, "--json", "lineage", "s2000"]);
    assert.equal(run.code, 0, run.err);
    const ids = chainIds(JSON.parse(run.out).tree);
    assert.equal(ids[0], "s1000");
    assert.equal(ids.at(-1), "s2500");
    assert.equal(ids.length, 1501);
    assert.match(run.err, /goes on above s1000 \(its parent is s999\)/);
    assert.doesNotMatch(run.err, /below/);
  });

  test("from the root, the tree still stops 1,000 generations down", async () => {
    const run = await runCli(["--db", path, "--json", "lineage", "s0"]);
    assert.equal(chainIds(JSON.parse(run.out).tree).length, 1001);
    assert.match(run.err, /goes on below s1000: .* run lineage on s1000 for the part below/);
  });
});
