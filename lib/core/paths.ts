/**
 * Where Hermes keeps its files.
 *
 * @module
 */
import { homedir } from "node:os";
import { join } from "node:path";
import process from "node:process";

/**
 * The Hermes home folder: `$HERMES_HOME` when set and not blank, else
 * `~/.hermes`. Read at each call.
 *
 * @returns The folder path.
 *
 * @example
 * ```ts
 * import { hermesHome } from "./paths.ts";
 * console.assert(hermesHome().length > 0);
 * ```
 */
export function hermesHome(): string {
  const configured = process.env.HERMES_HOME?.trim();
  return configured ? configured : join(homedir(), ".hermes");
}

/**
 * The default database file: `state.db` in {@linkcode hermesHome}.
 *
 * @returns The file path.
 *
 * @example
 * ```ts
 * import { defaultDbPath } from "./paths.ts";
 * console.assert(defaultDbPath().endsWith("state.db"));
 * ```
 */
export function defaultDbPath(): string {
  return join(hermesHome(), "state.db");
}
