/**
 * Where Hermes keeps its files.
 *
 * @module
 */
import { homedir } from "node:os";
import { join, win32 } from "node:path";
import process from "node:process";

/** What {@linkcode hermesHome} reads: the environment and the platform. */
export interface HermesHomeSource {
  /** The environment (`HERMES_HOME`, and `LOCALAPPDATA` on Windows). @default {process.env} */
  readonly env?: Record<string, string | undefined>;
  /** As `process.platform` names it. @default {process.platform} */
  readonly platform?: string;
  /** The user's home folder. @default {os.homedir()} */
  readonly home?: string;
}

/**
 * The Hermes home folder, as Hermes itself finds it: `$HERMES_HOME` when set
 * and not blank; else, on Windows, `hermes` in `%LOCALAPPDATA%` (when blank,
 * in `AppData\Local` of the user's home); elsewhere `~/.hermes`. Read at
 * each call.
 *
 * @param source The environment, platform and home folder to read (tests
 *   give their own); the process's by default.
 * @returns The folder path.
 *
 * @example
 * ```ts
 * import { hermesHome } from "./paths.ts";
 * console.assert(hermesHome().length > 0);
 * console.assert(
 *   hermesHome({ env: { LOCALAPPDATA: "C:\\Users\\ada\\AppData\\Local" }, platform: "win32" }) ===
 *     "C:\\Users\\ada\\AppData\\Local\\hermes",
 * );
 * ```
 */
export function hermesHome(source: HermesHomeSource = {}): string {
  const env = source.env ?? process.env;
  const configured = env.HERMES_HOME?.trim();
  if (configured) return configured;
  const home = source.home ?? homedir();
  if ((source.platform ?? process.platform) === "win32") {
    const local = env.LOCALAPPDATA?.trim();
    return win32.join(local ? local : win32.join(home, "AppData", "Local"), "hermes");
  }
  return join(home, ".hermes");
}

/**
 * The default database file: `state.db` in {@linkcode hermesHome}.
 *
 * @param source As for {@linkcode hermesHome}.
 * @returns The file path.
 *
 * @example
 * ```ts
 * import { defaultDbPath } from "./paths.ts";
 * console.assert(defaultDbPath().endsWith("state.db"));
 * ```
 */
export function defaultDbPath(source: HermesHomeSource = {}): string {
  const home = hermesHome(source);
  const platform = source.platform ?? process.platform;
  return platform === "win32" ? win32.join(home, "state.db") : join(home, "state.db");
}
