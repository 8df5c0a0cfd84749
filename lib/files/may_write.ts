/**
 * Whether this process may write a path, the same answer on every runtime.
 * `access(2)` answers for root from its capabilities on Bun and Node, but
 * Deno's `accessSync` answers from the mode bits, so root (who may write
 * any file) was told a read-only file could not be written on Deno only;
 * and root without `CAP_DAC_OVERRIDE` (a container started with
 * `--cap-drop ALL`) is bound by the modes like any user.
 *
 * @module
 */
import { accessSync, constants, readFileSync } from "node:fs";
import process from "node:process";
import { onReadOnlyMount } from "./read_only_mount.ts";

/** `CAP_DAC_OVERRIDE`: bit 1 of the capability sets in `/proc/self/status`. */
const CAP_DAC_OVERRIDE = 1n << 1n;

let bypasses: boolean | undefined;

/**
 * True when file modes do not bind this process: root holding
 * `CAP_DAC_OVERRIDE` (read from `/proc/self/status`, which is no database;
 * where there is no `/proc`, root is taken to hold it).
 *
 * @returns Whether this process writes any file whatever its mode.
 *
 * @example
 * ```ts
 * import { bypassesFileModes } from "./may_write.ts";
 * console.assert(typeof bypassesFileModes() === "boolean");
 * ```
 */
export function bypassesFileModes(): boolean {
  if (bypasses !== undefined) return bypasses;
  if (process.getuid?.() !== 0) return bypasses = false;
  let status: string;
  try {
    status = readFileSync("/proc/self/status", "utf8");
  } catch {
    return bypasses = true;
  }
  const effective = /^CapEff:\s*([0-9a-fA-F]+)\s*$/m.exec(status)?.[1];
  return bypasses = effective === undefined || (BigInt(`0x${effective}`) & CAP_DAC_OVERRIDE) !== 0n;
}

/**
 * Whether this process may write `path` (a file, or a folder to create
 * files in): not on a read-only mount (`read_only_mount.ts`), and allowed
 * by `access(2)`. Never asks an opened descriptor (closing one on the
 * database would drop this process's locks).
 *
 * @param path The path.
 * @returns True when a write would be allowed.
 *
 * @example
 * ```ts
 * import { mayWrite } from "./may_write.ts";
 * console.assert(mayWrite(await Deno.makeTempDir()));
 * ```
 */
export function mayWrite(path: string): boolean {
  if (onReadOnlyMount(path)) return false;
  if (bypassesFileModes()) return true;
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
