/**
 * `hermes-state lineage`: the family tree of a session, from its root down
 * through every descendant, with how each one began and ended.
 *
 * @module
 */
import { buildLineageTree, type LineageTreeNode } from "../../render/lineage_tree.ts";
import type { Command, Context } from "../command.ts";
import { formatCount, formatDateTime, oneLine } from "../../render/format.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { openStoreNaming, resolveSession } from "../resolve.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";
import { MAX_LINEAGE_DEPTH, parentAboveCut } from "../../core/lineage_depth.ts";
import type { SessionStore } from "../../core/session_store.ts";
import type { SessionRow } from "../../core/types.ts";
import { truncate } from "../../render/width.ts";

const USAGE = `Usage: hermes-state lineage [options] ID|PREFIX|TITLE

Show the tree a session belongs to: its root, and every descendant below
it, each with its title, source, start time and end reason. A child is
labelled by how it began: "compression" (the conversation continued after
context compression), "branch" (/branch), or "child" (a delegate or
subagent started while the parent ran). A continuation that is its
parent's only child is drawn in its parent's column, so a long compression
chain reads as one straight list. The session asked for is marked.

Options:
  --json        Print the tree as nested JSON
  --db PATH     The database file, or a postgres:// URL
  -h, --help    Show this help

Examples:
  hermes-state lineage 20260425_090019_d38f1d
  hermes-state lineage "my project" --json
`;

function renderTree(root: LineageTreeNode, target: string, ctx: Context): string {
  const { style } = ctx;
  const lines: string[] = [];
  const describe = (node: LineageTreeNode): string => {
    const parts = [style.cyan(visibleInline(node.id))];
    if (node.title) parts.push(style.bold(truncate(visibleControls(oneLine(node.title)), 40)));
    parts.push(visibleInline(node.source), formatDateTime(node.started_at, { minutes: true }));
    parts.push(`${formatCount(node.message_count)} msg`);
    parts.push(
      node.ended_at === null
        ? style.green("open")
        : `ended: ${visibleInline(node.end_reason ?? "?")}`,
    );
    const label = node.relation === "root" ? "" : style.dim(`[${node.relation}] `);
    const mark = node.id === target ? style.yellow("  ◀") : "";
    return `${label}${parts.join(" · ")}${mark}`;
  };
  // A node's line starts with its connector (`├─ `, `└─ `) after `prefix`, or with `lead` alone
  // when it continues its parent in the parent's column; `below` is what its children's lines
  // start with. Iterative: a chain thousands of steps long is as deep as the walk goes.
  const stack: { node: LineageTreeNode; lead: string; below: string }[] = [
    { node: root, lead: "", below: "" },
  ];
  while (stack.length > 0) {
    const { node, lead, below } = stack.pop()!;
    lines.push(`${lead}${describe(node)}`);
    const kids = node.children;
    if (kids.length === 1 && kids[0].relation === "compression") {
      stack.push({ node: kids[0], lead: below, below });
      continue;
    }
    for (let i = kids.length - 1; i >= 0; i--) {
      const last = i === kids.length - 1;
      stack.push({
        node: kids[i],
        lead: `${below}${last ? "└─ " : "├─ "}`,
        below: `${below}${last ? "   " : "│  "}`,
      });
    }
  }
  return lines.join("\n") + "\n";
}

/** The nodes `generations` below `root` (those a tree drawn to the bound ends on). */
function nodesAtDepth(root: LineageTreeNode, generations: number): LineageTreeNode[] {
  let level = [root];
  for (let depth = 0; depth < generations && level.length > 0; depth++) {
    level = level.flatMap((node) => node.children);
  }
  return level;
}

const BOUND = `a tree is drawn at most ${formatCount(MAX_LINEAGE_DEPTH)} generations up and down`;

/**
 * The notes on a tree the lineage reads cut at their bound: the top
 * ancestor read has a parent that exists (neither a cycle nor a link to a
 * deleted session), or a session of `lowest` (the deepest generations
 * read) has children not drawn. Said, not silently drawn as the whole
 * family.
 */
async function cutNotes(
  store: SessionStore,
  ancestors: readonly SessionRow[],
  lowest: readonly LineageTreeNode[],
): Promise<string[]> {
  const notes: string[] = [];
  const parent = await parentAboveCut(store, ancestors);
  if (parent !== undefined) {
    const top = ancestors[ancestors.length - 1];
    notes.push(
      `Note: the family goes on above ${visibleInline(top.id)} (its parent is ${
        visibleInline(parent)
      }): ${BOUND}; run lineage on ${visibleInline(parent)} for the part above.`,
    );
  }
  const cut: string[] = [];
  for (const node of lowest) {
    if (node.children.length > 0) continue;
    if ((await store.getDescendants(node.id)).length > 1) cut.push(visibleInline(node.id));
  }
  if (cut.length > 0) {
    notes.push(
      `Note: the family goes on below ${cut.join(", ")}: ${BOUND}; run lineage on ${
        cut[0]
      } for the part below.`,
    );
  }
  return notes;
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const typed = args.positionals.join(" ");
  const store = await openStoreNaming(ctx, [typed], "lineage");
  const id = await resolveSession(store, typed, "lineage");
  const ancestors = await store.getAncestors(id);
  const root = ancestors[ancestors.length - 1]?.id ?? id;
  // The root is the first of its descendants: the tree is never empty.
  const tree = buildLineageTree(await store.getDescendants(root))!;
  const asked = await drawnBelow(store, tree, ancestors.length - 1, id);
  // The deepest generations drawn, read once the part below the asked session is in the tree:
  // read before, they held that part's first cut nodes, which the note then named as not drawn.
  const lowest = nodesAtDepth(tree, MAX_LINEAGE_DEPTH);
  if (asked !== undefined) lowest.push(...nodesAtDepth(asked, MAX_LINEAGE_DEPTH));
  if (ctx.json) printJson(ctx.io, { target: id, root, tree });
  else ctx.io.stdout(renderTree(tree, id, ctx));
  for (const note of await cutNotes(store, ancestors, lowest)) ctx.io.stderr(`${note}\n`);
  return 0;
}

/**
 * The node of `id`, `depth` generations below the root of `tree`, given its
 * own descendants, 1,000 generations down from it, when the tree read from
 * the root was cut below it; `undefined` when it was not. The tree reaches
 * 1,000 generations below the root only: for a session 1,000 below it, the
 * part under it was never drawn, and the note's "run lineage on ID for the
 * part below" drew the same tree again.
 */
async function drawnBelow(
  store: SessionStore,
  tree: LineageTreeNode,
  depth: number,
  id: string,
): Promise<LineageTreeNode | undefined> {
  if (depth <= 0) return undefined;
  const asked = nodesAtDepth(tree, depth).find((node) => node.id === id);
  if (asked === undefined || nodesAtDepth(asked, MAX_LINEAGE_DEPTH - depth).length === 0) {
    return undefined;
  }
  asked.children = buildLineageTree(await store.getDescendants(id))?.children ?? [];
  return asked;
}

/** The `lineage` command. */
export const lineageCommand: Command = {
  name: "lineage",
  summary: "Show a session's family tree (compression, branches, delegates)",
  usage: USAGE,
  options: {},
  minPositionals: 1,
  maxPositionals: Infinity,
  positionalNames: "ID|PREFIX|TITLE",
  dashWord: (word) => `to show the lineage of the session titled ${word}`,
  run,
};
