/**
 * Why a database file cannot be written, in words that say which it is: the
 * file, or the folder SQLite keeps the -wal and -shm in. Asked with
 * `access(2)` only, never an opened descriptor.
 *
 * @module
 */
import { accessSync, constants } from "node:fs";
import { dirname } from "node:path";
import process from "node:process";

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why `path` cannot be written, or `undefined` when it can. Root is not
 * bound by file modes (and Deno answers `access` from the modes), so for
 * root this answers only with `evenAsRoot`, after SQLite itself refused.
 *
 * @param path The database file (it exists).
 * @param options `evenAsRoot`: answer from the modes for root too.
 * @returns `"the file is read-only"`, `"the folder is read-only (…)"`, or `undefined`.
 *
 * @example
 * ```ts
 * import { unwritableReason } from "./writable.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/state.db`, "");
 * console.assert(unwritableReason(`${dir}/state.db`) === undefined);
 * ```
 */
export function unwritableReason(
  path: string,
  options: { evenAsRoot?: boolean } = {},
): string | undefined {
  if (process.getuid?.() === 0 && !options.evenAsRoot) return undefined;
  if (!writable(path)) return "the file is read-only";
  if (!writable(dirname(path))) {
    return "the folder is read-only (SQLite keeps the -wal and -shm files beside the database)";
  }
  return undefined;
}
