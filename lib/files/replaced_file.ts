/**
 * A file written beside another and renamed over it keeps what the shell's
 * `>` would have kept: the replaced file's permission bits, owner and group.
 * Without this an export over an existing file left it `0600` and owned by
 * whoever ran the export (root, for a file of another user).
 *
 * @module
 */
import { fchmodSync, fchownSync, statSync } from "node:fs";
import process from "node:process";

/**
 * Gives the file open at `fd` the permission bits (without set-user, set-group
 * or sticky: an export is data), owner and group of the regular file at
 * `replaced`, when there is one; a new file keeps the mode it was opened
 * with. An owner or group this process may not give (not root, not one of
 * its groups) is left as it is, as `cp` leaves it.
 *
 * @param fd The new file, open for writing, not yet renamed.
 * @param replaced The path it will be renamed to.
 * @throws {Error} When the mode cannot be set (the file system's error).
 *
 * @example
 * ```ts
 * import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { keepReplacedFileMode } from "./replaced_file.ts";
 * const dir = mkdtempSync(join(tmpdir(), "replaced-"));
 * writeFileSync(join(dir, "old.txt"), "old", { mode: 0o640 });
 * const fd = openSync(join(dir, "new.txt"), "w", 0o600);
 * keepReplacedFileMode(fd, join(dir, "old.txt"));
 * closeSync(fd);
 * console.assert((statSync(join(dir, "new.txt")).mode & 0o777) === 0o640);
 * rmSync(dir, { recursive: true });
 * ```
 */
export function keepReplacedFileMode(fd: number, replaced: string): void {
  const old = statSync(replaced, { throwIfNoEntry: false });
  if (old === undefined || !old.isFile()) return;
  if (process.platform !== "win32") {
    try {
      fchownSync(fd, old.uid, old.gid);
    } catch {
      // Not root: the owner stays this process's; the group may still be given.
      try {
        fchownSync(fd, process.getuid?.() ?? old.uid, old.gid);
      } catch {
        // not one of this process's groups
      }
    }
  }
  fchmodSync(fd, old.mode & 0o777);
}
