import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runCli, V11, v11Copy } from "./_cli_io.ts";
import { rawOpen, tempDbPath } from "./_helpers.ts";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { openStore } from "../lib/open_store.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

interface Node {
  id: string;
  relation: string;
  end_reason: string | null;
  children: Node[];
}

describe("lineage", () => {
  test("lineage draws the tree from the root with relations, end reasons and a marker", async () => {
    const run = await runCli(["--db", v11Copy(), "lineage", V11.compressionTip]);
    assert.equal(run.code, 0);
    const lines = run.out.trimEnd().split("\n");
    assert.equal(lines.length, 4);
    assert.match(
      lines[0],
      new RegExp(`^${V11.compressionRoot} · my project · cli · .* · 13 msg · ended: compression$`),
    );
    assert.match(lines[1], new RegExp(`^├─ \\[child\\] ${V11.delegateChild} · cli · `));
    assert.match(
      lines[2],
      new RegExp(
        `^└─ \\[compression\\] ${V11.compressionMid} · my project #2 · .* · ended: compression$`,
      ),
    );
    assert.match(
      lines[3],
      new RegExp(`^   \\[compression\\] ${V11.compressionTip} · my project #3 · .* · open  ◀$`),
    );
  });

  test("a compression chain 400 steps long is one straight list; a fork indents under it", async () => {
    const path = tempDbPath();
    {
      let now = 1_767_000_000;
      using db = await SessionDB.open({ path, clock: () => now++ });
      db.createSession("s0", "cli");
      for (let i = 1; i <= 400; i++) {
        // A delegate started while s399 ran, beside its continuation: a fork, with connectors.
        if (i === 400) db.createSession("helper", "cli", { parentSessionId: "s399" });
        db.endSession(`s${i - 1}`, "compression");
        db.createSession(`s${i}`, "cli", { parentSessionId: `s${i - 1}` });
      }
    }
    const run = await runCli(["--db", path, "lineage", "s200"]);
    assert.equal(run.code, 0, run.err);
    assert.equal(run.err, "", "the whole family is drawn: no note");
    const lines = run.out.trimEnd().split("\n");
    assert.equal(lines.length, 402);
    assert.match(lines[0], /^s0 · cli · /);
    for (let i = 1; i < 400; i++) {
      assert.match(lines[i], new RegExp(`^\\[compression\\] s${i} · `), lines[i]);
    }
    assert.match(lines[200], /◀$/);
    assert.match(lines[400], /^├─ \[child\] helper · /);
    assert.match(lines[401], /^└─ \[compression\] s400 · .* · open$/);
  });

  test("lineage gives the same tree from any member, marking the one asked for", async () => {
    const path = v11Copy();
    const fromRoot = await runCli(["--db", path, "lineage", V11.compressionRoot]);
    const fromTip = await runCli(["--db", path, "lineage", V11.compressionTip]);
    const strip = (text: string) => text.replaceAll("  ◀", "");
    assert.equal(strip(fromRoot.out), strip(fromTip.out));
    assert.match(fromRoot.out.split("\n")[0], /◀$/);
  });

  test("lineage --json prints a nested tree with relations", async () => {
    const run = await runCli(["--db", v11Copy(), "--json", "lineage", V11.branchChild]);
    const { target, root, tree } = JSON.parse(run.out) as {
      target: string;
      root: string;
      tree: Node;
    };
    assert.equal(target, V11.branchChild);
    assert.equal(root, V11.branchParent);
    assert.equal(tree.relation, "root");
    assert.equal(tree.end_reason, "branched");
    assert.deepEqual(tree.children.map((c) => [c.id, c.relation]), [[V11.branchChild, "branch"]]);
  });

  test("lineage of a session without family is one line", async () => {
    const run = await runCli(["--db", v11Copy(), "lineage", V11.live]);
    assert.equal(run.out.trimEnd().split("\n").length, 1);
    assert.match(run.out, /◀\n$/);
  });

  test("lineage of a family whose parent links loop (a damaged file) notes no cut", async () => {
    const path = tempDbPath();
    {
      await using store = await openStore(path);
      for (const id of ["a", "b", "c"]) await store.createSession(id, "cli");
    }
    {
      // a → c → b → a.
      using raw = await rawOpen(path);
      raw.exec(
        "UPDATE sessions SET parent_session_id = CASE id WHEN 'a' THEN 'c' WHEN 'b' THEN 'a' " +
          "ELSE 'b' END",
      );
    }
    const run = await runCli(["--db", path, "lineage", "a"]);
    assert.equal(run.code, 0, run.err);
    assert.equal(run.err, "");
    assert.equal(run.out.trimEnd().split("\n").length, 3);
    for (const id of ["a", "b", "c"]) assert.match(run.out, new RegExp(`\\b${id} · cli`));
  });
});

/** A compression chain s0 → s1 → … → s1500 in the store at `target`. */
async function longChain(target: string): Promise<void> {
  let now = 1_767_000_000;
  await using store = await openStore(target, { clock: () => now++ });
  await store.createSession("s0", "cli");
  for (let i = 1; i <= 1500; i++) {
    await store.endSession(`s${i - 1}`, "compression");
    await store.createSession(`s${i}`, "cli", { parentSessionId: `s${i - 1}` });
  }
}

for (
  const [engine, target, skip] of [
    ["SQLite", () => tempDbPath(), false],
    ["PostgreSQL", () => schemaUrl(freshSchema()), PG_SKIP],
  ] as const
) {
  test(
    `lineage on ${engine}: a family longer than the 1,000 generations drawn says where the tree is cut`,
    {
      skip,
      timeout: 120_000,
    },
    async () => {
      const db = target();
      await longChain(db);
      // From the tip: 1,000 generations up, then everything below.
      const fromTip = await runCli(["--db", db, "lineage", "s1500"]);
      assert.equal(fromTip.code, 0, fromTip.err);
      assert.match(fromTip.out, /^s500 · cli · /);
      assert.equal(
        fromTip.err,
        "Note: the family goes on above s500 (its parent is s499): a tree is drawn at most " +
          "1,000 generations up and down; run lineage on s499 for the part above.\n",
      );
      // From the root: 1,000 generations down.
      const fromRoot = await runCli(["--db", db, "--json", "lineage", "s0"]);
      assert.equal(fromRoot.code, 0, fromRoot.err);
      assert.equal(
        fromRoot.err,
        "Note: the family goes on below s1000: a tree is drawn at most 1,000 generations up " +
          "and down; run lineage on s1000 for the part below.\n",
      );
      let depth = 0;
      for (let node = JSON.parse(fromRoot.out).tree; node.children.length > 0; depth++) {
        node = node.children[0];
      }
      assert.equal(depth, 1000);
    },
  );
}
