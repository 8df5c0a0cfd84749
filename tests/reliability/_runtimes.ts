/**
 * Child processes for the reliability tests: finds the Deno, Bun and Node
 * binaries (the pinned ones in `.tools/`, else the running one) and runs a
 * worker script under any of them, line by line.
 *
 * @module
 */
import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process";
import { accessSync, constants, writeSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type RuntimeName, runtimeName } from "../../lib/sqlite/driver/load.ts";

/** The repository root. */
export const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** Folder of the worker scripts. */
export const WORKERS = fileURLToPath(new URL(".", import.meta.url));

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return false;
    if ((error as { code?: string }).code === "EACCES") return false;
    throw error;
  }
}

/**
 * The binary of `runtime`: the pinned one in `.tools/`, else the running
 * process's own when it is that runtime, else `undefined`.
 */
export function runtimeBinary(runtime: RuntimeName): string | undefined {
  const pinned = join(REPO, ".tools", "node_modules", ".bin", runtime);
  if (executable(pinned)) return pinned;
  if (runtimeName() === runtime) return process.execPath;
  return undefined;
}

/**
 * The runtimes to spread workers over: Deno and Bun (and Node when asked)
 * when their binaries exist; the running runtime at the very least.
 */
export function workerRuntimes(wanted: readonly RuntimeName[]): RuntimeName[] {
  const found = wanted.filter((runtime) => runtimeBinary(runtime) !== undefined);
  return found.length > 0 ? found : [runtimeName()];
}

/**
 * Whether this runner runs the tests the suite runs under one runner only:
 * it is Deno's, or no Deno binary is found (then every runner runs them, so
 * they always run somewhere).
 */
export function runsDenoOnlyTests(): boolean {
  return runtimeName() === "deno" || runtimeBinary("deno") === undefined;
}

/**
 * The `skip` of a test that runs all its work in workers spread over Deno,
 * Bun and Node: the runtime of the test runner adds nothing to it, so the
 * suite's run under Deno runs it and the runs under Bun and Node skip it
 * (any runner runs it when no Deno binary is found, so it always runs
 * somewhere) instead of starting the same processes three times.
 */
export function workersSpanRuntimes(): false | string {
  if (runsDenoOnlyTests()) return false;
  return "its workers run on Deno, Bun and Node whatever runs the test: the run under Deno runs it";
}

/**
 * The runtimes cases are dealt to, in turn: case `i` runs under `[i % 3]` when all three are found.
 * Bun first, then Node: they run such checks in about half Deno's time, so when a check's cases do
 * not divide by three the extra ones go to them.
 */
const DEALT_ORDER: readonly RuntimeName[] = ["bun", "node", "deno"];

/**
 * The runtimes the cases of a long check are dealt to: those of Deno, Bun and Node whose binary
 * is found, and the running one in any case (so a runner alone runs every case).
 */
function dealtRuntimes(): RuntimeName[] {
  return DEALT_ORDER.filter((runtime) =>
    runtime === runtimeName() || runtimeBinary(runtime) !== undefined
  );
}

/**
 * Whether case `index` of a long check of the library's own logic runs under this runner. The
 * cases are dealt in turn to Bun, Node and Deno (to those whose binary is found): each case runs
 * once, under one runtime, and each runtime runs a third of them. For checks of many generated
 * cases, or of large inputs, whose answer is the library's, not the runtime's (search against an
 * oracle, inputs of tens of thousands of words, files of 50,000 messages): what differs between
 * the runtimes (the SQLite binding, the engine) still meets a third of the cases under each, and
 * the suite's many other tests run each behaviour under all three.
 */
export function caseRunsHere(index: number): boolean {
  return dealtTo(index) === runtimeName();
}

/** The runtime case `index` is dealt to: see {@linkcode caseRunsHere}. */
function dealtTo(index: number): RuntimeName {
  const runtimes = dealtRuntimes();
  return runtimes[index % runtimes.length];
}

/** The `skip` of case `index` of such a check: see {@linkcode caseRunsHere}. */
export function caseSkip(index: number): false | string {
  if (caseRunsHere(index)) return false;
  return `case ${index} of a long check of the library's logic: the run under ${
    dealtTo(index)
  } runs it`;
}

/**
 * The `skip` of a whole test file of the library's own logic, dealt as one case of
 * {@linkcode caseRunsHere}: its number is taken from the file's name, so the file runs under one
 * of Deno, Bun and Node, always the same one, and such files spread over the three.
 *
 * @param url The test file's `import.meta.url`.
 */
export function fileCaseSkip(url: string): false | string {
  const name = url.slice(url.lastIndexOf("/") + 1);
  let hash = 0;
  for (const char of name) hash = (hash * 131 + char.codePointAt(0)!) % 1_000_003;
  if (caseRunsHere(hash)) return false;
  return `${name} tests the library's logic alone: the run under ${dealtTo(hash)} runs it`;
}

/**
 * The `skip` of a test of how deep the library's code goes on the stack: it runs under Deno (V8)
 * and Bun (JavaScriptCore), and Node, whose engine and stack are V8's as Deno's are, skips it
 * when both are found.
 */
export function stackEnginesSkip(): false | string {
  if (runtimeName() !== "node") return false;
  if (runtimeBinary("deno") === undefined || runtimeBinary("bun") === undefined) return false;
  return "a check of the stack's depth: the runs under Deno (V8, as Node) and Bun (JavaScriptCore) run it";
}

/** The command line that runs `script` with `args` under `runtime`. */
export function commandLine(
  runtime: RuntimeName,
  script: string,
  args: readonly string[],
): [string, string[]] {
  const binary = runtimeBinary(runtime);
  if (binary === undefined) throw new Error(`Cannot run a worker: no ${runtime} binary found`);
  const scriptPath = join(WORKERS, script);
  if (runtime === "deno") return [binary, ["run", "-A", "--no-lock", scriptPath, ...args]];
  return [binary, [scriptPath, ...args]];
}

/** Environment for a worker: quiet, no colour, no update checks. */
export function workerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) env[key] = value;
  }
  return { ...env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...extra };
}

/** How a child ended. */
export interface Exit {
  /** Exit code, `null` when killed by a signal. */
  readonly code: number | null;
  /** The signal that killed it, if any. */
  readonly signal: string | null;
}

/** A running worker whose stdout is read line by line. */
export class Worker {
  /** The runtime it runs on. */
  readonly runtime: RuntimeName;
  /** Every complete stdout line so far. */
  readonly lines: string[] = [];
  /** Everything written to stderr. */
  stderr = "";
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  readonly #child: ChildProcess;
  #partial = "";
  #waiters: Array<() => void> = [];
  #exit: Exit | undefined;

  constructor(runtime: RuntimeName, child: ChildProcess) {
    this.runtime = runtime;
    this.#child = child;
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => this.#onData(chunk));
    child.stderr!.on("data", (chunk: string) => void (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => {
        // An unfinished last line (none is expected: each line is one write) is left out.
        this.#exit = { code, signal };
        this.#wake();
        resolve(this.#exit);
      });
    });
  }

  /** The process id. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /**
   * Waits until some stdout line satisfies `match`; returns it.
   *
   * @throws {Error} When the process exits first (with its stderr), or after `timeoutMs`.
   */
  async waitFor(
    match: (line: string) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<string> {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.#wake();
    }, timeoutMs);
    try {
      while (true) {
        const line = this.lines.find(match);
        if (line !== undefined) return line;
        if (this.#exit !== undefined) {
          const how = this.#exit.code ?? this.#exit.signal;
          throw new Error(`${this.runtime} worker exited (${how}) before ${what}: ${this.stderr}`);
        }
        if (timedOut) throw new Error(`${this.runtime} worker: no ${what} in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => this.#waiters.push(resolve));
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal` to the process. */
  kill(signal: "SIGKILL" | "SIGTERM"): void {
    this.#child.kill(signal);
  }

  /** Waits for a clean exit (code 0) and returns the lines. */
  async succeeded(): Promise<string[]> {
    const exit = await this.exited;
    if (exit.code !== 0) {
      throw new Error(
        `${this.runtime} worker failed (${exit.code ?? exit.signal}): ${this.stderr.trim()}`,
      );
    }
    return this.lines;
  }

  #onData(chunk: string): void {
    const parts = (this.#partial + chunk).split("\n");
    this.#partial = parts.pop()!;
    if (parts.length === 0) return;
    this.lines.push(...parts);
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Options of {@linkcode startWorker}. */
export interface StartOptions {
  /** Extra environment variables. */
  readonly env?: Record<string, string>;
  /** Runs the command through this wrapper (for example `setpriv …`). */
  readonly wrapper?: readonly string[];
  /** Working folder. */
  readonly cwd?: string;
}

/**
 * Starts `script` (a file in this folder) under `runtime`.
 *
 * @param runtime The runtime.
 * @param script The worker script's file name.
 * @param args Its arguments.
 * @param options Environment and wrapper.
 * @returns The running worker.
 */
export function startWorker(
  runtime: RuntimeName,
  script: string,
  args: readonly string[],
  options: StartOptions = {},
): Worker {
  const [binary, argv] = commandLine(runtime, script, args);
  const command = options.wrapper ? [...options.wrapper, binary, ...argv] : [binary, ...argv];
  const spawnOptions: SpawnOptions = {
    stdio: ["ignore", "pipe", "pipe"],
    env: workerEnv(options.env),
    cwd: options.cwd ?? REPO,
  };
  return new Worker(runtime, spawn(command[0], command.slice(1), spawnOptions));
}

/**
 * Starts `_writer.ts` on `runtime` as the prune and vacuum tests run it:
 * appends to session `ours` of `path` (tokens `w…`), once `startFile`
 * exists, pausing `pauseMs` between two appends, until stopped.
 *
 * @param runtime The runtime it runs on.
 * @param path The database file.
 * @param seed Its random seed.
 * @param startFile The file whose creation starts it.
 * @param pauseMs The pause between two appends.
 * @returns The running writer.
 */
export function startOurWriter(
  runtime: RuntimeName,
  path: string,
  seed: number,
  startFile: string,
  pauseMs: number,
): Worker {
  const config = { path, name: "w", own: "ours", count: 0, seed, startFile, pauseMs };
  return startWorker(runtime, "_writer.ts", [JSON.stringify(config)]);
}

/**
 * Starts `_python_writer.py`: appends to `session` of `path` as Python
 * Hermes does, once `startFile` exists, until killed. It reports in the
 * lines of `_writer.ts` (its {@linkcode Worker} runtime label is unused).
 *
 * @param path The database file.
 * @param name The prefix of its tokens.
 * @param session The session it appends to (made if missing).
 * @param seed Its random seed.
 * @param startFile The file whose creation starts it.
 * @returns The running writer.
 */
export function startPythonWriter(
  path: string,
  name: string,
  session: string,
  seed: number,
  startFile: string,
): Worker {
  const args = [join(WORKERS, "_python_writer.py"), path, name, session, String(seed), startFile];
  return new Worker(
    "deno",
    spawn("python3", args, { stdio: ["ignore", "pipe", "pipe"], env: workerEnv() }),
  );
}

/**
 * Waits until `writer`, which numbers its tokens `<name>x0`, `<name>x1`, … and prints
 * `ack <token>` after each append (`_writer.ts`, whose `name` is `w` from
 * {@linkcode startOurWriter}, and the Python writers), has acknowledged `count` appends: a
 * loaded machine may give a writer only a few in a fixed while.
 *
 * @returns Its acknowledgement of append number `count`.
 */
export function appended(writer: Worker, name: string, count: number): Promise<string> {
  const ack = `ack ${name}x${count - 1}`;
  return writer.waitFor(
    (line) => line === ack || line.startsWith(`${ack} `),
    `its append number ${count}`,
  );
}

/** The seed of this run: `$RELIABILITY_SEED`, else derived from the clock. */
export function runSeed(): number {
  const given = process.env.RELIABILITY_SEED;
  if (given !== undefined && given.trim() !== "") return Number(given) >>> 0;
  return (Date.now() ^ (process.pid << 8)) >>> 0;
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Writes one line to stdout at once, unbuffered, so the parent reads it
 * even when the process is killed right after (workers report with it).
 */
export function say(line: string): void {
  const bytes = new TextEncoder().encode(line + "\n");
  let written = 0;
  while (written < bytes.length) written += writeSync(1, bytes, written);
}
