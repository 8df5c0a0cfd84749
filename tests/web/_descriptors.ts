/**
 * How many descriptors this process holds on a database file and its
 * sidecars, for the tests of what the search pool leaves open.
 */
import { existsSync, readdirSync, readlinkSync } from "node:fs";

/**
 * How many descriptors this process has open on `path` and its `-wal`,
 * `-shm` and `-journal` (Linux's `/proc/self/fd`).
 *
 * @param path The database file.
 * @returns The count, or `undefined` where `/proc/self/fd` is not there.
 */
export function descriptorsOn(path: string): number | undefined {
  if (!existsSync("/proc/self/fd")) return undefined;
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}
