/**
 * Where a command writes a new file (`export`, `backup`): what stands in the
 * way, said in plain words before any work is done, and the file system's
 * error codes said the same way when one comes up while writing. Neither
 * names the temporary file the command writes first.
 *
 * @module
 */
import { statSync } from "node:fs";
import { dirname } from "node:path";

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/**
 * Why no file can be written at `path`, found with `stat` only: the path is
 * a folder (or ends in `/`), its folder is missing or is not a folder, or
 * the name has a NUL, is too long or loops through symbolic links. Permissions are
 * left to the write itself (root may write anywhere).
 *
 * @param path The output path the user gave.
 * @returns The reason, or `undefined` when nothing of this kind is in the way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outputPathProblem } from "./output_path.ts";
 * const dir = await Deno.makeTempDir();
 * assert.equal(outputPathProblem(`${dir}/out.jsonl`), undefined);
 * assert.equal(outputPathProblem(dir), "it is a folder");
 * assert.equal(outputPathProblem(`${dir}/no/out.jsonl`), `the folder ${dir}/no does not exist`);
 * assert.equal(outputPathProblem(`${dir}/new/`), 'a file name cannot end in "/" (that names a folder)');
 * ```
 */
export function outputPathProblem(path: string): string | undefined {
  if (path.trim() === "") return "the file name is empty";
  if (path.includes("\u0000")) return "a file name cannot contain a NUL character";
  try {
    if (statSync(path).isDirectory()) return "it is a folder";
    return undefined;
  } catch (error) {
    const code = codeOf(error);
    if (code === "ENAMETOOLONG") return "the name is too long";
    if (code === "ELOOP") return "it is a loop of symbolic links";
    if (code !== "ENOENT" && code !== "ENOTDIR") return undefined;
  }
  // `dirname` drops a trailing slash: `out/` would be a file named `out`, which the write refuses.
  if (path.endsWith("/")) return 'a file name cannot end in "/" (that names a folder)';
  const folder = dirname(path);
  try {
    return statSync(folder).isDirectory() ? undefined : `${folder} is not a folder`;
  } catch (error) {
    const code = codeOf(error);
    if (code === "ENOENT") return `the folder ${folder} does not exist`;
    if (code === "ENOTDIR") return `${folder} is not a folder`;
    return undefined;
  }
}

/**
 * A file system error said in plain words, without the path it names (the
 * caller names the user's path; the error may name a temporary file).
 *
 * @param error What a `node:fs` call threw.
 * @returns The reason: "the disk is full", "permission denied"…; another
 *   error's own message.
 */
export function writeFailureReason(error: unknown): string {
  switch (codeOf(error)) {
    case "ENOSPC":
      return "the disk is full";
    case "EDQUOT":
      return "the disk quota is used up";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "the file system is read-only";
    case "EISDIR":
      return "it is a folder";
    case "ENOENT":
      return "its folder does not exist";
    case "ENOTDIR":
      return "a part of the path is not a folder";
    case "EPIPE":
      return "the program reading it stopped (broken pipe)";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
