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
import { accessSync, constants, lstatSync } from "node:fs";
import { dirname } from "node:path";
import process from "node:process";
import type { SqliteDriverOptions } from "./driver/types.ts";
import { sqliteFilePath } from "../files/real_path.ts";

/**
 * How a read-only open reaches the file:
 * - `"shared"`: a read-write connection the store never writes through,
 *   for a file without a `-wal`: the sidecars a WAL read needs are removed
 *   again when it closes, as after any Hermes process.
 * - `"readonly"`: SQLite's read-only mode, for a file with a `-wal` (another
 *   connection may be live, and it must never be checkpointed or deleted
 *   by a reader), with a `-journal` (a writer's rollback journal, which a
 *   read-write connection would play back into the file), or a file this
 *   user may not write. Beside such a file without a `-wal`, in a folder
 *   this user may write, SQLite creates a `-wal` and `-shm` of this user's
 *   and cannot delete them. (Opening it `"immutable"` instead would leave
 *   nothing, but a connection that lives on, as `serve`'s does, would read
 *   stale and mixed pages once the owner's Hermes writes and checkpoints:
 *   an immutable connection never looks again.)
 * - `"immutable"`: read-only without locks or sidecars, for a file in a
 *   folder this user may not write and without a `-wal` or `-journal`: no
 *   process of this user's can change it then, since a writer needs one of
 *   them there.
 */
export type ReadAccess = "shared" | "readonly" | "immutable";

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

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
  if (exists(`${path}-wal`) || exists(`${path}-journal`)) return "readonly";
  if (!mayWrite(dirname(path))) return "immutable";
  return mayWrite(path) ? "shared" : "readonly";
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
