/**
 * The family tree of a session, shared by the CLI's `lineage` and the web's
 * transcript view: the root, then every descendant, each labelled by how it
 * began.
 *
 * @module
 */
import type { SessionRow } from "../core/types.ts";

/** How a session relates to its parent. */
export type LineageRelation = "root" | "compression" | "branch" | "child";

/** One node of {@linkcode buildLineageTree}. */
export interface LineageTreeNode {
  /** The session id. */
  id: string;
  /** Its title. */
  title: string | null;
  /** Its source. */
  source: string;
  /** When it started (Unix seconds). */
  started_at: number;
  /** When it ended, or `null` while open. */
  ended_at: number | null;
  /** How it ended, or `null` while open. */
  end_reason: string | null;
  /** Its messages. */
  message_count: number;
  /** How it began. */
  relation: LineageRelation;
  /** Its children, oldest first. */
  children: LineageTreeNode[];
}

/**
 * How `child` began: after its parent ended by compression (`compression`)
 * or by `/branch` (`branch`), else while the parent ran (`child`).
 */
function relationOf(parent: SessionRow | undefined, child: SessionRow): LineageRelation {
  if (parent === undefined) return "root";
  const after = parent.ended_at !== null && child.started_at >= parent.ended_at;
  if (after && parent.end_reason === "compression") return "compression";
  if (after && parent.end_reason === "branched") return "branch";
  return "child";
}

/**
 * Two ids in the order of their code points, as SQLite sorts text: the
 * same on every runtime and in every locale (`localeCompare` followed the
 * user's `LANG` on Deno and Node, and not on Bun).
 */
function codePointOrder(a: string, b: string): number {
  if (a === b) return 0;
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const difference = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
}

/**
 * The tree of `rows` (a root first, then its descendants, as
 * `getDescendants` returns them): each row under its parent, children oldest
 * first, every session once even in a cycle. The rows' BLOBs are text
 * already: the stores read them so (`SessionRow`).
 *
 * @param rows The root and its descendants.
 * @returns The root node, or `undefined` when there are no rows.
 *
 * @example
 * ```ts
 * import { buildLineageTree } from "./lineage_tree.ts";
 * import type { SessionRow } from "../core/types.ts";
 * const row = (id: string, parent: string | null, at: number) =>
 *   ({ id, parent_session_id: parent, started_at: at, ended_at: null, end_reason: null,
 *     title: null, source: "cli", message_count: 0 }) as unknown as SessionRow;
 * const tree = buildLineageTree([row("a", null, 1), row("b", "a", 2)]);
 * console.assert(tree?.children[0].id === "b" && tree.children[0].relation === "child");
 * ```
 */
export function buildLineageTree(rows: readonly SessionRow[]): LineageTreeNode | undefined {
  if (rows.length === 0) return undefined;
  const byId = new Map(rows.map((row) => [row.id, row]));
  const children = new Map<string, SessionRow[]>();
  for (const row of rows.slice(1)) {
    const parent = row.parent_session_id;
    if (parent === null || !byId.has(parent)) continue;
    // Added in place: a copy per child made 60,000 children of one session take 15 s.
    const siblings = children.get(parent);
    if (siblings === undefined) children.set(parent, [row]);
    else siblings.push(row);
  }
  const seen = new Set<string>();
  const node = (row: SessionRow, parent: SessionRow | undefined): LineageTreeNode => {
    seen.add(row.id);
    const kids = (children.get(row.id) ?? [])
      .filter((kid) => !seen.has(kid.id))
      .sort((a, b) => a.started_at - b.started_at || codePointOrder(a.id, b.id));
    return {
      id: row.id,
      title: row.title,
      source: row.source,
      started_at: row.started_at,
      ended_at: row.ended_at,
      end_reason: row.end_reason,
      message_count: row.message_count,
      relation: relationOf(parent, row),
      children: kids.map((kid) => node(kid, row)),
    };
  };
  return node(rows[0], undefined);
}
