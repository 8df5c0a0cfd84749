/**
 * Lineage faults in any store: parents that do not exist, and cycles of
 * parent links (which would make every lineage walk stop short), found
 * over the links read from a file or a server, and their `lineage` finding.
 *
 * @module
 */
import { finding, type HealthCheck } from "./health_report.ts";

/** What is wrong with the parent links. */
export interface LineageFaults {
  /** Sessions whose parent does not exist: id → the missing parent. */
  readonly missingParents: ReadonlyArray<readonly [string, string]>;
  /**
   * One session per cycle, the one to detach: the earliest started (a
   * session cannot descend from one that started after it).
   */
  readonly cycleBreaks: readonly string[];
}

/** One session's place in the lineage: its parent and when it started. */
export interface LineageLink {
  /** The session. */
  readonly id: string;
  /** Its parent, or `null`. */
  readonly parent: string | null;
  /** Its `started_at`. */
  readonly startedAt: number;
}

/**
 * The link of a session row read as `id, parent_session_id, started_at`,
 * from either engine.
 *
 * @param row The row.
 * @returns Its link.
 */
export function lineageLinkOf(row: Readonly<Record<string, unknown>>): LineageLink {
  return {
    id: String(row.id),
    parent: row.parent_session_id == null ? null : String(row.parent_session_id),
    startedAt: Number(row.started_at),
  };
}

/**
 * Finds broken and circular parent links among sessions, whatever store
 * they were read from.
 *
 * @param links Every session's parent link.
 * @returns The faults.
 */
export function findLineageFaults(links: Iterable<LineageLink>): LineageFaults {
  const parent = new Map<string, string | null>();
  const started = new Map<string, number>();
  for (const link of links) {
    parent.set(link.id, link.parent);
    started.set(link.id, link.startedAt);
  }
  const missingParents: Array<[string, string]> = [];
  for (const [id, up] of parent) {
    if (up !== null && !parent.has(up)) missingParents.push([id, up]);
  }
  // Walk up from every session; a walk that meets its own trail found a cycle.
  const state = new Map<string, "walking" | "done">();
  const cycleBreaks: string[] = [];
  for (const start of parent.keys()) {
    const trail: string[] = [];
    let at: string | null | undefined = start;
    while (at != null && parent.has(at) && state.get(at) !== "done") {
      if (state.get(at) === "walking") {
        const cycle = trail.slice(trail.indexOf(at));
        cycle.sort((a, b) => started.get(a)! - started.get(b)! || (a < b ? -1 : 1));
        cycleBreaks.push(cycle[0]);
        break;
      }
      state.set(at, "walking");
      trail.push(at);
      at = parent.get(at);
    }
    for (const id of trail) state.set(id, "done");
  }
  missingParents.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { missingParents, cycleBreaks: cycleBreaks.sort() };
}

/**
 * The `lineage` finding of faults found in any store.
 *
 * @param faults What {@linkcode findLineageFaults} found.
 * @returns ok, or a fixable problem.
 */
export function lineageFinding({ missingParents, cycleBreaks }: LineageFaults): HealthCheck {
  if (missingParents.length === 0 && cycleBreaks.length === 0) {
    return finding("lineage", "ok", "every parent exists; no cycles");
  }
  const parts = [
    missingParents.length > 0 ? `${missingParents.length} sessions name a missing parent` : "",
    cycleBreaks.length > 0 ? `${cycleBreaks.length} cycles of parent links` : "",
  ].filter((part) => part !== "");
  return finding("lineage", "problem", parts.join(", "), {
    fix: "hermes-state doctor --fix (clears those parent links, as delete does)",
    fixable: true,
    details: [
      ...missingParents.map(([id, up]) => `${id}: parent ${up} does not exist`),
      ...cycleBreaks.map((id) => `${id}: in a cycle (its parent link would be cleared)`),
    ],
  });
}
