/**
 * Whether a path lies on a read-only mount (a Docker `:ro` volume, a
 * `mount -o ro` backup disk), which `access(2)` does not tell everyone:
 * root's capabilities write any file whatever its mode, and Deno's
 * `accessSync` answers from the mode bits. Read from `/proc/self/mountinfo`
 * (Linux), which is no database; elsewhere, or when it cannot be read, no
 * mount is taken to be read-only.
 *
 * @module
 */
import { readFileSync, realpathSync } from "node:fs";

/** A mount point as mountinfo writes it: space, tab, line break and backslash as octal escapes. */
function unescaped(field: string): string {
  return field.replace(
    /\\([0-7]{3})/g,
    (_, octal: string) => String.fromCharCode(parseInt(octal, 8)),
  );
}

/** Whether `path` is `point` or lies below it. */
function within(path: string, point: string): boolean {
  return path === point || path.startsWith(point.endsWith("/") ? point : `${point}/`);
}

/**
 * True when the mount that holds `path` is read-only: its own options or its
 * file system's say `ro`. The deepest mount point holding the path counts,
 * the last mounted of several on one point.
 *
 * @param path An existing path (a missing one is on no read-only mount).
 * @returns Whether nothing may be written there.
 *
 * @example
 * ```ts
 * import { onReadOnlyMount } from "./read_only_mount.ts";
 * console.assert(onReadOnlyMount(await Deno.makeTempDir()) === false);
 * ```
 */
export function onReadOnlyMount(path: string): boolean {
  try {
    return readOnlyIn(readFileSync("/proc/self/mountinfo", "utf8"), realpathSync(path));
  } catch {
    return false;
  }
}

/**
 * {@linkcode onReadOnlyMount} on a mount table given as text.
 *
 * @param table The text of a `/proc/PID/mountinfo`.
 * @param real The path, links resolved.
 * @returns Whether the mount holding it is read-only.
 *
 * @example
 * ```ts
 * import { readOnlyIn } from "./read_only_mount.ts";
 * const table = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n" +
 *   "2 1 8:2 / /mnt/my\\040disk ro,relatime - ext4 /dev/sdb1 rw\n";
 * console.assert(readOnlyIn(table, "/mnt/my disk/state.db"));
 * console.assert(!readOnlyIn(table, "/mnt/my diskette"));
 * ```
 */
export function readOnlyIn(table: string, real: string): boolean {
  let deepest = -1;
  let readOnly = false;
  // ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL…] - TYPE SOURCE SUPER_OPTIONS
  for (const line of table.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-", 6);
    if (dash < 0 || fields.length < dash + 4) continue;
    const point = unescaped(fields[4]);
    if (point.length < deepest || !within(real, point)) continue;
    deepest = point.length;
    readOnly = fields[5].split(",").includes("ro") || fields[dash + 3].split(",").includes("ro");
  }
  return readOnly;
}
