/**
 * The folder of transcript files beside a database (`<home>/sessions`),
 * which `delete` and `prune` clean up as recent Hermes builds do.
 *
 * @module
 */
import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import { CommandError } from "./usage_error.ts";

/**
 * The `sessions` folder next to the database file, when it exists.
 *
 * @param dbPath The database path.
 * @returns The folder, or `undefined` when there is none.
 * @throws {CommandError} When it cannot be looked at (no permission, say).
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
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return undefined;
    const reason = (error as Error).message;
    throw new CommandError(`Cannot look into ${dir}: ${reason}`, { cause: error });
  }
}
