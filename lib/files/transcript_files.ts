/**
 * Transcript files the agent keeps beside the database, removed with their
 * session: `<id>.json`, `<id>.jsonl` and `request_dump_<id>_*.json` in the
 * sessions folder.
 *
 * @module
 */
import { lstatSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";

const DUMP_PREFIX = "request_dump_";

/**
 * The session id a file name belongs to, among `ids`, or `undefined`. Names
 * are compared literally, so an id is never read as a glob pattern or a path.
 */
function owner(name: string, ids: ReadonlySet<string>): string | undefined {
  if (name.endsWith(".jsonl")) {
    const id = name.slice(0, -".jsonl".length);
    if (ids.has(id)) return id;
  }
  if (!name.endsWith(".json")) return undefined;
  const base = name.slice(0, -".json".length);
  if (ids.has(base)) return base;
  if (!base.startsWith(DUMP_PREFIX)) return undefined;
  // `request_dump_<id>_<anything>`: ids may contain `_`, so try every split.
  const rest = base.slice(DUMP_PREFIX.length);
  for (let i = rest.indexOf("_"); i !== -1; i = rest.indexOf("_", i + 1)) {
    const id = rest.slice(0, i);
    if (ids.has(id)) return id;
  }
  return undefined;
}

/**
 * Removes the transcript files of `ids` directly inside `dir`, best effort:
 * a missing folder, or a file that cannot be removed, is skipped (the
 * sessions are already deleted; a leftover file is harmless).
 *
 * @param dir The sessions folder.
 * @param ids The deleted sessions.
 * @returns The names of the files removed.
 *
 * @example
 * ```ts ignore
 * removeTranscriptFiles(`${home}/sessions`, ["20260420_090000_994beb"]);
 * // ["20260420_090000_994beb.jsonl", "request_dump_20260420_090000_994beb_1.json"]
 * ```
 */
export function removeTranscriptFiles(dir: string, ids: readonly string[]): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const wanted = new Set(ids);
  const removed: string[] = [];
  for (const name of names) {
    if (owner(name, wanted) === undefined) continue;
    const path = join(dir, name);
    try {
      // Deno's unlinkSync also removes an empty folder; only files (or links) go.
      if (lstatSync(path).isDirectory()) continue;
      unlinkSync(path);
      removed.push(name);
    } catch {
      // Gone meanwhile, or no permission: Python ignores it too.
    }
  }
  return removed;
}
