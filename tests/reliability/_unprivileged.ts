/**
 * Runs a worker as a user that file permissions apply to. Root ignores them,
 * and CI runs as root, so there the worker drops root's privileges through
 * util-linux `setpriv`; an ordinary user runs it as itself.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { type StartOptions, startWorker } from "./_runtimes.ts";

/** The uid and gid `nobody` has on Linux. */
const NOBODY = 65534;

/** True when this process runs as root. */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Whether the current runtime can run `_open_child.ts` with these options. */
async function canRun(options: StartOptions): Promise<string | undefined> {
  const probe = startWorker(runtimeName(), "_open_child.ts", ['{"path":"","probe":true}'], options);
  const exit = await probe.exited;
  if (exit.code === 0 && probe.lines.includes(`probe ${runtimeName()}`)) return undefined;
  return probe.stderr.trim().split("\n")[0] || `exit ${exit.code ?? exit.signal}`;
}

/**
 * How to start workers that file permissions apply to, or why that is
 * impossible here. As root, the worker runs as `nobody`; when `nobody` may
 * not read this checkout, it runs as root without the capabilities that
 * override file permissions (`CAP_DAC_OVERRIDE`, `CAP_DAC_READ_SEARCH`).
 * An ordinary user runs it as itself. Tests use modes that deny the owner
 * and everyone else alike (0444 files, 0555 folders), so all three agree.
 *
 * @param dir A folder of the test's own; it is opened to every user
 *   (mode 0755) and gets a `home` folder for the worker's runtime caches.
 * @returns Start options, or the reason to skip.
 */
export async function unprivileged(dir: string): Promise<StartOptions | string> {
  if (process.platform === "win32") return "file modes do not apply on Windows";
  chmodSync(dir, 0o755);
  const home = join(dir, "home");
  mkdirSync(home, { mode: 0o777 });
  chmodSync(home, 0o777);
  const env = { HOME: home, TMPDIR: home, DENO_DIR: join(home, "deno"), XDG_CACHE_HOME: home };
  if (!isRoot()) return { env };
  if (spawnSync("setpriv", ["--version"]).status !== 0) {
    return "running as root without util-linux setpriv to drop privileges";
  }
  const nobody: StartOptions = {
    env,
    wrapper: ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"],
  };
  const asNobody = await canRun(nobody);
  if (asNobody === undefined) return nobody;
  const rootWithoutOverride: StartOptions = {
    env,
    wrapper: ["setpriv", "--bounding-set=-dac_override,-dac_read_search"],
  };
  const asRoot = await canRun(rootWithoutOverride);
  if (asRoot === undefined) return rootWithoutOverride;
  return `cannot drop root's file privileges here: as nobody: ${asNobody}; without CAP_DAC_OVERRIDE: ${asRoot}`;
}

/** A fresh folder every user may enter, and {@linkcode unprivileged}'s answer. */
export interface UnprivilegedSetup {
  /** The folder (mode 0755). */
  readonly dir: string;
  /** Start options, or the reason to skip. */
  readonly as: StartOptions | string;
}

/**
 * The set-up of a test file's tests run as an unprivileged user: each call
 * gives a fresh folder (mode 0755, from `tempDir`), and the one
 * {@linkcode unprivileged} answer of the file, found at the first call
 * (finding it starts a probe; its `home`, and the runtime's caches there,
 * are shared by the file's tests).
 *
 * @param tempDir Makes a fresh temporary folder.
 * @returns The set-up, to call once per test.
 */
export function unprivilegedSetup(tempDir: () => string): () => Promise<UnprivilegedSetup> {
  let found: Promise<StartOptions | string> | undefined;
  return async () => {
    found ??= unprivileged(tempDir());
    const as = await found;
    const dir = tempDir();
    chmodSync(dir, 0o755);
    return { dir, as };
  };
}

/**
 * Runs `_open_child.ts` with `config` under the current runtime and returns
 * its one-line report.
 *
 * @param options From {@linkcode unprivileged}.
 * @param config The child's argument.
 * @returns The report line.
 */
export async function openAs(options: StartOptions, config: object): Promise<string> {
  const child = startWorker(runtimeName(), "_open_child.ts", [JSON.stringify(config)], options);
  const lines = await child.succeeded();
  if (lines.length !== 1) throw new Error(`Expected one line, got: ${lines.join(" | ")}`);
  return lines[0];
}

/**
 * Runs the CLI on this runtime as the user `as` names, and waits for it.
 *
 * @param as The user to run as ({@linkcode unprivileged}).
 * @param args The CLI's arguments.
 * @returns Its exit code, standard output and standard error.
 */
export async function cliAs(
  as: StartOptions,
  args: readonly string[],
): Promise<{ code: number | null; out: string; err: string }> {
  const child = startWorker(runtimeName(), "../../cli.ts", args, as);
  const exit = await child.exited;
  return { code: exit.code, out: child.lines.join("\n"), err: child.stderr };
}
