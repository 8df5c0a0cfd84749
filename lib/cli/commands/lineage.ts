/**
 * `hermes-state lineage`: the family tree of a session, from its root down
 * through every descendant, with how each one began and ended.
 *
 * @module
 */
import { buildLineageTree, type LineageTreeNode } from "../../render/lineage_tree.ts";
import type { Command, Context } from "../command.ts";
import { formatCount, formatDateTime, oneLine, truncate } from "../../render/format.ts";
import { printJson } from "../json.ts";
import type { ParsedArgs } from "../parse.ts";
import { openStoreNaming, resolveSession } from "../resolve.ts";
import { visibleControls, visibleInline } from "../../render/transcript.ts";

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
    parts.push(visibleInline(node.source), formatDateTime(node.started_at).slice(0, 16));
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

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const typed = args.positionals.join(" ");
  const store = await openStoreNaming(ctx, [typed], "lineage");
  const id = await resolveSession(store, typed, "lineage");
  const ancestors = await store.getAncestors(id);
  const root = ancestors[ancestors.length - 1]?.id ?? id;
  // The root is the first of its descendants: the tree is never empty.
  const tree = buildLineageTree(await store.getDescendants(root))!;
  if (ctx.json) printJson(ctx.io, { target: id, root, tree });
  else ctx.io.stdout(renderTree(tree, id, ctx));
  return 0;
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
