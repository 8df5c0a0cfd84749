/**
 * Shared test helpers: temporary folders, fixture copies, raw connections.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { after, type TestContext } from "node:test";
import { SessionDB } from "../lib/sqlite/session_db.ts";
import { loadDriver, runtimeName } from "../lib/sqlite/driver/load.ts";
import type { SqliteConnection } from "../lib/sqlite/driver/types.ts";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The command line that runs this checkout's `cli.ts` with `args` on the
 * runtime running the tests, as an operator would start it: `deno run -A
 * cli.ts …` on Deno, `bun cli.ts …` or `node cli.ts …` elsewhere. The first
 * element is the binary.
 */
export function cliArgv(args: readonly string[] = []): string[] {
  const cli = join(ROOT, "cli.ts");
  const runner = runtimeName() === "deno" ? ["run", "-A"] : [];
  return [process.execPath, ...runner, cli, ...args];
}

/** The read-only fixtures folder (`../shared/fixtures` beside the repository). */
export const FIXTURES = fileURLToPath(new URL("../../shared/fixtures/", import.meta.url));

const made: string[] = [];
function removeMade(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
after(removeMade);
// Deno 2.9 runs no `after` hook of a file in which a test is skipped (root's
// permission tests, PostgreSQL's without a server): its `unload` event still comes.
if ("Deno" in globalThis) globalThis.addEventListener("unload", removeMade);
// Bun runs the files of one process on one instance of this module, and the hook
// after the first file only: the process's end removes what the others made.
process.once("exit", removeMade);

/**
 * Waits until `condition` holds, asking every `everyMs`, and fails naming `what` after
 * `timeoutMs`: neither Deno's nor Node's test runner ends a test that waits forever, so a loop
 * without a deadline turned a failure (a command that ended before printing what was waited
 * for) into a run that never finished.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 30_000, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) {
      throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * `text` with the seconds of every lock wait it tells said as 0: tests give up after 0.2–0.3 s, which
 * a loaded machine stretches past half a second (said "1 s"; seen under Bun in CI).
 */
export function waitedAnyTime(text: string): string {
  return text.replace(/\(waited \d+ s\)/g, "(waited 0 s)");
}

/** A fresh temporary folder, removed when the test file ends. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-state-test-"));
  made.push(dir);
  return dir;
}

/** A path for a new database in a fresh temporary folder. */
export function tempDbPath(): string {
  return join(tempDir(), "state.db");
}

/**
 * Adds the sessions `ids` to the state.db at `path` (made when new), each a
 * `cli` session with one user message, `hello from ID`.
 *
 * @returns `path`.
 */
export async function addSessions(path: string, ...ids: string[]): Promise<string> {
  const db = await SessionDB.open({ path });
  for (const id of ids) {
    db.createSession(id, "cli");
    db.appendMessage(id, { role: "user", content: `hello from ${id}` });
  }
  db.close();
  return path;
}

/** Copies a fixture (`hermes-v11.db`, …) to a temporary folder and returns the copy's path. */
export function copyFixture(name: string): string {
  const path = join(tempDir(), "state.db");
  copyFileSync(join(FIXTURES, name), path);
  chmodSync(path, 0o600); // the fixtures are read-only; a copy is meant to be opened and changed
  return path;
}

/** Reads one JSON file from the fixtures' `expected/` folder. */
export async function expected<T = unknown>(name: string): Promise<T> {
  const { readFileSync } = await import("node:fs");
  return JSON.parse(readFileSync(join(FIXTURES, "expected", name), "utf8")) as T;
}

/**
 * Opens a raw connection (no schema step) through the runtime's driver; `using raw = await
 * rawOpen(path)` closes it when the test ends, even when an assertion fails.
 */
export async function rawOpen(path: string, readonly = false): Promise<SqliteConnection> {
  const open = await loadDriver();
  return open(path, { readonly });
}

/** A folder inside `dir` with `mode`, holding a copy of the v11 fixture with `fileMode`. */
export function folderWithFixture(
  dir: string,
  name: string,
  mode: number,
  fileMode: number,
): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  const path = join(folder, "state.db");
  copyFileSync(join(FIXTURES, "hermes-v11.db"), path);
  chmodSync(path, fileMode);
  chmodSync(folder, mode);
  return path;
}

/**
 * Opens a store on `path` with a settable clock (`at[0]`, starting at `t0`);
 * it is closed when test `t` ends.
 */
export async function openClocked(
  t: TestContext,
  t0: number,
  path: string = tempDbPath(),
): Promise<{ db: SessionDB; path: string; at: number[] }> {
  const at = [t0];
  const db = await SessionDB.open({ path, clock: () => at[0] });
  t.after(() => db.close());
  return { db, path, at };
}

/**
 * Runs a Python 3 script, given as its lines, with `args` (`sys.argv[1:]`);
 * the test fails, showing its stderr, unless it exits 0.
 *
 * @param lines The script's lines.
 * @param args Its arguments.
 * @returns What it printed.
 */
export function runPython(lines: readonly string[], ...args: string[]): string {
  const run = spawnSync("python3", ["-c", lines.join("\n"), ...args], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}
