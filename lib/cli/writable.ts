/**
 * Why a database file cannot be written, in words that say which it is: the
 * file, or the folder SQLite keeps the -wal and -shm in. Asked with
 * `access(2)` only, never an opened descriptor.
 *
 * @module
 */
import { accessSync, constants } from "node:fs";
import { dirname } from "node:path";
import { bypassesFileModes } from "../files/may_write.ts";

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Which of the database file and its folder this user may not write, or
 * `undefined` when both may be written. Root holding `CAP_DAC_OVERRIDE` is
 * not bound by file modes (and Deno answers `access` from the modes), so for
 * it this answers only with `evenAsRoot`, after SQLite itself refused.
 *
 * @param path The database file (it exists).
 * @param options `evenAsRoot`: answer from the modes for root too.
 * @returns `"file"`, `"folder"`, or `undefined`.
 *
 * @example
 * ```ts
 * import { readOnlyPart } from "./writable.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/state.db`, "");
 * console.assert(readOnlyPart(`${dir}/state.db`) === undefined);
 * ```
 */
export function readOnlyPart(
  path: string,
  options: { evenAsRoot?: boolean } = {},
): "file" | "folder" | undefined {
  if (bypassesFileModes() && !options.evenAsRoot) return undefined;
  if (!writable(path)) return "file";
  if (!writable(dirname(path))) return "folder";
  return undefined;
}

/**
 * Why a write cannot happen, for a {@linkcode readOnlyPart} answer.
 *
 * @param part The read-only part.
 * @returns One clause for the user.
 *
 * @example
 * ```ts
 * import { unwritableReason } from "./writable.ts";
 * console.assert(unwritableReason("file") === "the file is read-only");
 * ```
 */
export function unwritableReason(part: "file" | "folder"): string {
  return part === "file"
    ? "the file is read-only"
    : "the folder is read-only (SQLite keeps the -wal and -shm files beside the database)";
}
