/**
 * How a read-only open reaches a file so that it changes nothing: not the
 * file's bytes, not its journal mode, not its sidecars. SQLite's own
 * read-only mode creates a `-wal` and `-shm` beside a WAL file that has
 * none and, being unable to delete them, leaves them behind; a read-write
 * connection that never writes removes them again on its last close but,
 * being able to checkpoint, would fold a live `-wal` into the file. So the
 * choice depends on what is there.
 *
 * @module
 */
import { accessSync, constants } from "node:fs";
import { dirname } from "node:path";
import process from "node:process";
import type { SqliteDriverOptions } from "./driver/types.ts";
import { sqliteFilePath } from "../files/real_path.ts";
import { present } from "./file_state.ts";

/**
 * How a read-only open reaches the file:
 * - `"shared"`: a read-write connection the store never writes through,
 *   for a file without a `-wal` that this user may write: the sidecars a
 *   WAL read needs are removed again when it closes, as after any Hermes
 *   process.
 * - `"readonly"`: SQLite's read-only mode, for a file with a `-wal` (another
 *   connection may be live, and it must never be checkpointed or deleted
 *   by a reader) or a `-journal` (a writer's rollback journal, which a
 *   read-write connection would play back into the file). The sidecars are
 *   the writer's; this connection only reads them.
 * - `"immutable"`: read-only without locks or sidecars, for a file without a
 *   `-wal` or `-journal` that this user may not write, or in a folder this
 *   user may not write. SQLite's read-only mode would create a `-wal` and
 *   `-shm` of this user's there (it cannot delete them), which the owner's
 *   Hermes could then not write; in a folder this user may not write it
 *   could not open the file at all. Such a connection never looks at the
 *   file again: once the owner's Hermes writes, it answers from stale pages,
 *   or from a mix it reports as a malformed file. A connection that lives
 *   on compares `fileState` (`file_state.ts`) before each read and opens the
 *   file again when it moved, as `SessionDB` does.
 */
export type ReadAccess = "shared" | "readonly" | "immutable";

/** `access(2)` for writing; root is not bound by modes (and Deno answers from them). */
function mayWrite(path: string): boolean {
  if (process.getuid?.() === 0) return true;
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Chooses how to open `path` read-only. Asks only `stat` and `access`,
 * never a descriptor (closing one would drop this process's locks).
 *
 * @param given The database file (it exists), or a link to it: the
 *   sidecars are looked for beside the file the link leads to, as SQLite
 *   keeps them there.
 * @returns The access to use.
 */
export function chooseReadAccess(given: string): ReadAccess {
  if (given === ":memory:") return "shared";
  const path = sqliteFilePath(given);
  if (present(`${path}-wal`) || present(`${path}-journal`)) return "readonly";
  return mayWrite(dirname(path)) && mayWrite(path) ? "shared" : "immutable";
}

/**
 * The driver options that open a file with `access` (`"write"`: as the agent
 * does).
 *
 * @param access A read access, or `"write"`.
 * @returns The options for the driver.
 */
export function driverOptionsFor(access: ReadAccess | "write"): SqliteDriverOptions {
  return {
    readonly: access === "readonly" || access === "immutable",
    immutable: access === "immutable",
  };
}
