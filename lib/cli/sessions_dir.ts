/**
 * The folder of transcript files beside a database (`<home>/sessions`),
 * which `delete` and `prune` clean up as recent Hermes builds do.
 *
 * @module
 */
import { statSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The `sessions` folder next to the database file, when it exists.
 *
 * @param dbPath The database path.
 * @returns The folder, or `undefined` when there is none.
 *
 * @example
 * ```ts
 * import { sessionsDirFor } from "./sessions_dir.ts";
 * console.assert(sessionsDirFor("/nonexistent/state.db") === undefined);
 * ```
 */
export function sessionsDirFor(dbPath: string): string | undefined {
  const dir = join(dirname(dbPath), "sessions");
  try {
    return statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}
