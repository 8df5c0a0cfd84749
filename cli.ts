#!/usr/bin/env -S deno run -A
/**
 * The `hermes-state` command line: `deno run -A cli.ts --help`.
 *
 * @module
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { main } from "./lib/cli/main.ts";
import { defaultIo, exit, getArgs } from "./lib/cli/io.ts";
import { zoneNameOfTz } from "./lib/core/time_zone.ts";

/**
 * Whether this file is the program being run: `import.meta.main`, or, on a
 * Node that lacks it (24.0 and 24.1), whether Node was given this file.
 */
function isProgram(): boolean {
  const main: unknown = import.meta.main;
  if (typeof main === "boolean") return main;
  const script = process.argv[1];
  if (script === undefined || !import.meta.url.startsWith("file:")) return false;
  try {
    return realpathSync(resolve(script)) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isProgram()) {
  // A TZ naming a zone by its file (`/usr/share/zoneinfo/Asia/Tokyo`) is read by each runtime its
  // own way (Bun as UTC): given by name, every runtime shows that zone, summer time included.
  try {
    const zone = zoneNameOfTz(process.env.TZ);
    if (zone !== undefined) process.env.TZ = zone;
  } catch {
    // Deno without the env permission: the command names that permission itself.
  }
  exit(await main(getArgs(), defaultIo()));
}
