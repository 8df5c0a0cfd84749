// The transcript's lineage tree on pathological families: a compression chain 3,000 deep, a
// session with 2,000 children, and parent links that loop. The session viewed and its path from
// the root are always in the tree, it stays small, and every cut is said where it was made, and
// only there.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../lib/open_store.ts";
import { lineageTree } from "../../lib/web/lineage_tree.ts";
import type { ShownLineageNode } from "../../lib/web/lineage_shown.ts";
import { CHAIN, chainId, lineageDb, WIDE, wideId } from "./_lineage_db.ts";
import { rawOpen, tempDbPath } from "../_helpers.ts";

const store = await openStore(await lineageDb(), { readonly: true });
after(() => store.close());

/** Every node of `tree`, depth first, with its depth. */
function nodes(tree: ShownLineageNode, depth = 0): { node: ShownLineageNode; depth: number }[] {
  return [{ node: tree, depth }, ...tree.children.flatMap((kid) => nodes(kid, depth + 1))];
}

/** The ids from the root down to `id`, if it is in the tree. */
function pathTo(tree: ShownLineageNode, id: string): string[] | undefined {
  if (tree.id === id) return [id];
  for (const kid of tree.children) {
    const below = pathTo(kid, id);
    if (below) return [tree.id, ...below];
  }
  return undefined;
}

/** What the tree leaves out, in all: shortened runs and hidden descendants. */
function leftOut(tree: ShownLineageNode): number {
  return nodes(tree).reduce((sum, { node }) => sum + (node.skipped ?? 0) + (node.hidden ?? 0), 0);
}

test("lineageTree() of a 3000-deep chain shows the viewed session, a short tree, and the cut", async () => {
  for (const i of [CHAIN - 1, 1500, 3]) {
    const tree = (await lineageTree(store, chainId(i)))!;
    const all = nodes(tree);
    const path = pathTo(tree, chainId(i));
    assert.ok(path, `${chainId(i)} is in the tree`);
    assert.ok(all.length <= 12, `${all.length} nodes`);
    assert.ok(Math.max(...all.map((n) => n.depth)) <= 10);
    // The cut is said: sessions left out between, below, or above the root shown.
    assert.ok(leftOut(tree) > 0 || tree.older, `${chainId(i)}: the cut is said`);
    if (tree.older === undefined) assert.equal(tree.id, chainId(0));
    // Its neighbours in the chain are shown beside it.
    if (i > 0 && i < CHAIN - 1) {
      assert.ok(pathTo(tree, chainId(i + 1)) && path.includes(chainId(i - 1)));
    }
  }
});

test("lineageTree() of a child among 2000 shows it, at most 30 siblings, and how many are hidden", async () => {
  const tree = (await lineageTree(store, wideId(WIDE - 1)))!;
  assert.equal(tree.id, "wide");
  assert.ok(tree.children.some((kid) => kid.id === wideId(WIDE - 1)));
  assert.equal(tree.children.length, 30);
  assert.equal(tree.hidden, WIDE - 30);
  assert.equal(tree.older, undefined);
});

test("lineageTree() of a family whose parent links loop (a damaged file) says nothing older is left out", async () => {
  const path = tempDbPath();
  {
    await using own = await openStore(path);
    for (const id of ["a", "b", "c", "x"]) await own.createSession(id, "cli");
  }
  {
    // a → c → b → a, and x under b.
    using raw = await rawOpen(path);
    raw.exec(
      "UPDATE sessions SET parent_session_id = CASE id WHEN 'a' THEN 'c' WHEN 'b' THEN 'a' " +
        "WHEN 'c' THEN 'b' ELSE 'b' END",
    );
  }
  await using looped = await openStore(path, { readonly: true });
  for (const id of ["x", "a", "b", "c"]) {
    const tree = (await lineageTree(looped, id))!;
    assert.ok(pathTo(tree, id), `${id} is in the tree`);
    assert.equal(tree.older, undefined, `${id}: every session of the loop is shown`);
  }
});
