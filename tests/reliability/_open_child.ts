/**
 * Worker process: opens a database the way a user would and reports what
 * happened, so a test can do it as another user or with another umask.
 *
 * Argument: `{ path, readonly?, write?, session?, probe?, vanishingWal? }`
 * as JSON; with `vanishingWal`, the `-wal` and `-shm` beside the file are
 * deleted just before each read-only open that is not immutable (as its
 * owner's last connection does when it closes at that moment). Output,
 * one line:
 * - `probe <runtime>` when `probe` is set (nothing is opened);
 * - `ok found=<yes|no> modes=<db>,<wal>,<shm> dir=<mode>` after a successful
 *   open (and a `setMeta` when `write` is set); `found` tells whether
 *   `getSession(session)` found it; the modes are taken while it is open;
 * - `error <name> <message>` when the open or the write threw.
 *
 * @module
 */
import { rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import process from "node:process";
import { loadDriver, runtimeName } from "../../lib/sqlite/driver/load.ts";
import type { SqliteDriver } from "../../lib/sqlite/driver/types.ts";
import { SessionDB } from "../../lib/sqlite/session_db.ts";
import { say } from "./_runtimes.ts";

const { path, readonly, write, session, probe, vanishingWal } = JSON.parse(process.argv[2]) as {
  path: string;
  readonly?: boolean;
  write?: boolean;
  session?: string;
  probe?: boolean;
  vanishingWal?: boolean;
};

/** The driver, deleting the sidecars first when `vanishingWal` asks. */
async function driver(): Promise<SqliteDriver> {
  const opener = await loadDriver();
  if (!vanishingWal) return opener;
  return (file, options) => {
    if (options?.readonly && !options.immutable) {
      for (const sidecar of ["-wal", "-shm"]) rmSync(file + sidecar, { force: true });
    }
    return opener(file, options);
  };
}

function mode(file: string): string {
  try {
    return (statSync(file).mode & 0o777).toString(8);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return "none";
    throw error;
  }
}

if (probe) {
  say(`probe ${runtimeName()}`);
} else {
  try {
    const db = await SessionDB.open({ path, readonly, openDriver: await driver() });
    try {
      if (write) db.setMeta("written_by", runtimeName());
      const found = session !== undefined && db.getSession(session) !== undefined;
      const modes = [path, `${path}-wal`, `${path}-shm`].map(mode).join(",");
      say(`ok found=${found ? "yes" : "no"} modes=${modes} dir=${mode(dirname(path))}`);
    } finally {
      db.close();
    }
  } catch (error) {
    const { name, message } = error as Error;
    say(`error ${name} ${message}`);
  }
}
