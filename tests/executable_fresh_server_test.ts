/**
 * The single executable as a user drops it on a fresh server: built once with
 * `bun build --compile` (as `deno task compile:bun` builds it), copied alone
 * into an empty folder, and run with nothing but `PATH` and `HOME`, from a
 * folder without `node_modules`. Its answers must be those of
 * `deno run -A cli.ts` on the same input, byte for byte; it serves the page's
 * files as the sources hold them, searches through its worker threads, and
 * reaches PostgreSQL (when `HERMES_TEST_PG_URL` names a server).
 */
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { FIXTURES, ROOT, tempDir } from "./_helpers.ts";
import { runtimeBinary } from "./reliability/_runtimes.ts";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { freshSchema, PG_SKIP, schemaUrl } from "./store/_pg.ts";

const BUN = runtimeBinary("bun");
const DENO = runtimeBinary("deno");
const SKIP = BUN === undefined || DENO === undefined
  ? "needs the pinned Bun (to build the executable) and Deno (to compare with)"
  : process.platform !== "linux"
  ? "runs on Linux (env -i, setpriv)"
  // The executable and the `deno run` it is compared with are the same whatever runs the test.
  : runtimeName() !== "deno"
  ? "the executable is the same whatever runs the test: the run under Deno runs it"
  : false;

/** The compression chain's tip in the v11 fixture. */
const TIP = "20260425_090019_d38f1d";

/** What one run printed, and how it ended. */
interface Ran {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** How to run a program in the fresh server's environment. */
interface RunOptions {
  /** The working folder, relative to the copy's folder (default: that folder). */
  readonly cwd?: string;
  /** Variables beside `PATH` and `HOME`. */
  readonly env?: Record<string, string>;
  /** A command put in front (`setpriv …`). */
  readonly prefix?: readonly string[];
}

let installed = "";
let home = "";

/** Runs `argv` with only `PATH`, `HOME` and `env`, as a login on a fresh server would. */
function runIn(argv: readonly string[], dir: string, options: RunOptions): Ran {
  const [command, ...args] = [...(options.prefix ?? []), ...argv];
  const child = spawnSync(command, args, {
    cwd: join(dir, options.cwd ?? "."),
    env: {
      PATH: "/usr/bin:/bin",
      HOME: home,
      // Deno's own cache, so `deno run` finds its modules (the executable ignores it).
      DENO_DIR: process.env.DENO_DIR ?? join(process.env.HOME ?? "/root", ".cache", "deno"),
      DENO_NO_UPDATE_CHECK: "1",
      ...options.env,
    },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

/** A folder holding a fresh copy of the v11 fixture as `state.db`, and an empty `sub/`. */
function serverFolder(): string {
  const dir = tempDir();
  copyFileSync(join(FIXTURES, "hermes-v11.db"), join(dir, "state.db"));
  chmodSync(join(dir, "state.db"), 0o600);
  mkdirSync(join(dir, "sub"));
  return dir;
}

/** Runs the installed executable in a fresh copy's folder (or `options.cwd`). */
function executable(args: readonly string[], dir: string, options: RunOptions = {}): Ran {
  return runIn([installed, ...args], dir, options);
}

/** Runs `deno run -A cli.ts` the same way. */
function denoCli(args: readonly string[], dir: string, options: RunOptions = {}): Ran {
  return runIn([DENO!, "run", "-A", join(ROOT, "cli.ts"), ...args], dir, options);
}

/** Runs `args` with both, each on a fresh copy at the same path; both answers. */
function both(args: readonly string[], options: RunOptions = {}): { exe: Ran; deno: Ran } {
  // One folder, copied again between the runs: paths in the answers are the same.
  const dir = serverFolder();
  const exe = executable(args, dir, options);
  copyFileSync(join(FIXTURES, "hermes-v11.db"), join(dir, "state.db"));
  chmodSync(join(dir, "state.db"), 0o600);
  return { exe, deno: denoCli(args, dir, options) };
}

/** Asserts that the executable answered `args` exactly as Deno did. */
function assertSame(args: readonly string[], options: RunOptions = {}): Ran {
  const { exe, deno } = both(args, options);
  assert.deepEqual(exe, deno, `hermes-state ${args.join(" ")}`);
  return exe;
}

/** The text between the `String.raw` backticks of a source file: what the module exports. */
function rawTemplateOf(source: string): string {
  const text = readFileSync(join(ROOT, source), "utf8");
  const start = text.indexOf("= String.raw`") + "= String.raw`".length;
  return text.slice(start, text.lastIndexOf("`"));
}

/** Starts `serve --port 0` with the executable; its address, and a stop that returns its exit. */
async function serveExecutable(dir: string): Promise<{
  url: string;
  stop: () => Promise<{ code: number | null; signal: string | null; out: string; err: string }>;
}> {
  const child = spawn(installed, ["--db", "../state.db", "serve", "--port", "0"], {
    cwd: join(dir, "sub"),
    env: { PATH: "/usr/bin:/bin", HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => out += chunk);
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => err += chunk);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  );
  const deadline = Date.now() + 20_000;
  while (!out.includes("Ctrl-C stops") && Date.now() < deadline && child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = /^Open (\S+)$/m.exec(out)?.[1];
  if (url === undefined) {
    child.kill("SIGKILL");
    await exited;
    assert.fail(`serve printed no address: ${out} ${err}`);
  }
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      return { ...await exited, out, err };
    },
  };
}

describe("the executable on a fresh server", { skip: SKIP }, () => {
  before(() => {
    const build = tempDir();
    const output = join(build, "hermes-state");
    const built = spawnSync(BUN!, [
      "build",
      "--compile",
      "--bytecode",
      "--format=esm",
      "cli.ts",
      "lib/web/_search_worker.ts",
      "--outfile",
      output,
    ], { cwd: ROOT, encoding: "utf8" });
    assert.equal(built.status, 0, built.stderr + built.stdout);
    installed = join(tempDir(), "hermes-state");
    copyFileSync(output, installed);
    chmodSync(installed, 0o755);
    home = tempDir();
  });

  test("reads, errors, completions and export answer as `deno run cli.ts` does", () => {
    for (
      const args of [
        ["--version"],
        ["--help"],
        ["search", "--help"],
        ["--db", "state.db", "list", "--limit", "50"],
        ["--db", "state.db", "list", "--json"],
        ["--db", "state.db", "show", TIP],
        ["--db", "state.db", "show", "my project #3", "--json"],
        ["--db", "state.db", "search", "docker"],
        ["--db", "state.db", "search", "记忆", "--json"],
        ["--db", "state.db", "search", '"AND(( NEAR/ *'],
        ["--db", "state.db", "lineage", TIP],
        ["--db", "state.db", "stats"],
        ["--db", "state.db", "usage", "--by", "model", "--since", "3650d"],
        ["--db", "state.db", "export", "-"],
        ["--db", "state.db", "export", "--format", "md", "--session-id", TIP],
        ["completions", "bash"],
        ["completions", "zsh"],
        ["completions", "fish"],
        ["--db", "state.db", "show", "no_such_session"],
        ["--db", "state.db", "list", "--bogus"],
        ["lisst"],
        ["--db", "missing.db", "list"],
      ]
    ) assertSame(args);
  });

  test("a relative --db from another folder, HERMES_HOME and HERMES_STATE_DB", () => {
    const relative = assertSame(["--db", "../state.db", "list", "--limit", "3"], { cwd: "sub" });
    assert.equal(relative.code, 0, relative.err);
    assert.match(relative.out, /^3 of 35 sessions$/m);
    const byEnv = assertSame(["search", "docker", "--limit", "2"], {
      cwd: "sub",
      env: { HERMES_STATE_DB: "../state.db" },
    });
    assert.match(byEnv.out, />>>docker<<</i);
    const dir = serverFolder();
    const byHome = executable(["stats", "--json"], dir, { cwd: "sub", env: { HERMES_HOME: dir } });
    assert.equal(byHome.code, 0, byHome.err);
    assert.equal(JSON.parse(byHome.out).sessions, 42);
    assertSame(["stats"], { cwd: "sub", env: { HERMES_HOME: ".." } });
    assertSame(["list"], { cwd: "sub", env: { HERMES_HOME: "." } }); // no database there
  });

  test("import, doctor --fix, backup and recover write files the CLI reads back", () => {
    const dir = serverFolder();
    const exported = executable(["--db", "state.db", "export", "all.jsonl"], dir);
    assert.equal(exported.code, 0, exported.err);
    const imported = executable(["--db", "copy.db", "import", "all.jsonl"], dir);
    assert.equal(imported.code, 0, imported.err);
    assert.match(imported.out, /^Imported 42 sessions/);
    const again = executable(["--db", "copy.db", "export", "-"], dir);
    assert.equal(again.out, readFileSync(join(dir, "all.jsonl"), "utf8"));
    const fixed = executable(["--db", "state.db", "doctor", "--fix", "--json"], dir);
    assert.equal(fixed.code, 0, fixed.err);
    assert.equal(JSON.parse(fixed.out).healthy, true);
    const backup = executable(["--db", "state.db", "backup", "--compress", "b.db.gz"], dir);
    assert.equal(backup.code, 0, backup.err);
    const recovered = executable(["recover", "state.db", "rec.db"], dir);
    assert.equal(recovered.code, 0, recovered.err);
    const searched = executable(["--db", "rec.db", "search", "记忆"], dir);
    assert.match(searched.out, /记忆断裂排查/);
    const demo = executable(["demo", "demo.db"], dir);
    assert.equal(demo.code, 0, demo.err);
    assert.match(demo.out, /^Demo database: \S+demo\.db$/m);
  });

  test("a read-only HOME: reads and the demo work, a write names the read-only file", {
    skip: process.getuid?.() === 0 && !existsSync("/usr/bin/setpriv")
      ? "root needs util-linux setpriv to drop CAP_DAC_OVERRIDE"
      : false,
  }, () => {
    const readOnlyHome = tempDir();
    mkdirSync(join(readOnlyHome, ".hermes"));
    const db = join(readOnlyHome, ".hermes", "state.db");
    copyFileSync(join(FIXTURES, "hermes-v11.db"), db);
    chmodSync(db, 0o444);
    chmodSync(join(readOnlyHome, ".hermes"), 0o555);
    chmodSync(readOnlyHome, 0o555);
    const prefix = process.getuid?.() === 0
      ? [
        "/usr/bin/setpriv",
        "--inh-caps=-dac_override,-dac_read_search",
        "--bounding-set=-dac_override,-dac_read_search",
      ]
      : [];
    const options = { prefix, env: { HOME: readOnlyHome } };
    const dir = serverFolder();
    const listed = executable(["list", "--limit", "3"], dir, options);
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, /^3 of 35 sessions$/m);
    const demo = executable(["demo", "--json"], dir, options);
    assert.equal(demo.code, 0, demo.err);
    const written = executable(["rename", TIP, "x"], dir, options);
    assert.deepEqual(written, denoCli(["rename", TIP, "x"], dir, options));
    assert.equal(written.code, 1);
    assert.equal(written.err, `hermes-state: Cannot write ${db}: the file is read-only\n`);
  });

  test("serve from an empty folder: the page's files as the sources hold them, search on workers", async () => {
    const dir = serverFolder();
    const server = await serveExecutable(dir);
    try {
      const page = await fetch(server.url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<title>hermes-state<\/title>/);
      // Bun's transpiler writes each non-ASCII character of a String.raw text as a \u escape
      // (oven-sh/bun#8745): the executable served another script than Deno and Node do.
      const script = await (await fetch(new URL("assets/app.js", server.url))).text();
      assert.equal(script, rawTemplateOf("lib/web/assets/app_js.ts"));
      const css = await fetch(new URL("assets/app.css", server.url));
      assert.equal(css.status, 200);
      assert.match(await css.text(), /prefers-color-scheme/);
      const hits = await (await fetch(new URL("api/search?q=%E8%AE%B0%E5%BF%86", server.url)))
        .json() as { hits: { snippet: string }[] };
      assert.ok(hits.hits.some((hit) => hit.snippet.includes(">>>记忆")), JSON.stringify(hits));
    } finally {
      const stopped = await server.stop();
      // Deno's child_process reports the signal it sent even when the child exits 0.
      const deno = "Deno" in globalThis && stopped.signal === "SIGTERM";
      assert.equal(deno ? 0 : stopped.code, 0, stopped.err);
      assert.match(stopped.out, /^Stopped\.$/m);
      // The search workers started inside the executable, from a folder without lib/.
      assert.doesNotMatch(stopped.err, /searching on the server's thread/);
    }
  });

  test("two executables at once import the same file into one new database", async () => {
    const dir = serverFolder();
    assert.equal(executable(["--db", "state.db", "export", "all.jsonl"], dir).code, 0);
    const start = () =>
      new Promise<Ran>((resolve) => {
        const child = spawn(installed, ["--db", "new.db", "import", "all.jsonl"], {
          cwd: dir,
          env: { PATH: "/usr/bin:/bin", HOME: home },
        });
        let out = "";
        let err = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => out += chunk);
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => err += chunk);
        child.once("close", (code) => resolve({ code, out, err }));
      });
    const runs = await Promise.all([start(), start()]);
    let imported = 0;
    for (const run of runs) {
      assert.equal(run.code, 0, run.err);
      imported += Number(/^Imported (\d+) sessions/.exec(run.out)?.[1]);
    }
    assert.equal(imported, 42, runs.map((run) => run.out).join(""));
    const stats = executable(["--db", "new.db", "stats", "--json"], dir);
    assert.equal(JSON.parse(stats.out).messages, 197);
  });

  describe("PostgreSQL", { skip: PG_SKIP }, () => {
    test("copy FILE URL, --db URL search and sync FILE --to URL", () => {
      const dir = serverFolder();
      const copied = schemaUrl(freshSchema());
      const synced = schemaUrl(freshSchema());
      const copy = executable(["copy", "state.db", copied], dir);
      assert.equal(copy.code, 0, copy.err);
      assert.equal(
        copy.out,
        "Copied 42 sessions, skipped 0 already present (197 messages written).\n",
      );
      const search = ["--db", copied, "search", "记忆"];
      const exe = executable(search, dir);
      assert.equal(exe.code, 0, exe.err);
      assert.deepEqual(exe, denoCli(search, dir));
      assert.match(exe.out, /记忆断裂排查/);
      const sync = executable(["sync", "state.db", "--to", synced, "--origin", "fresh"], dir);
      assert.equal(sync.code, 0, sync.err);
      assert.match(sync.out, /^state\.db → fresh: 42 new, /);
      const listed = executable(["--db", synced, "list", "--origin", "fresh", "--json"], dir);
      assert.equal(listed.code, 0, listed.err);
      const rows = JSON.parse(listed.out) as { id: string }[];
      assert.equal(rows.length, 20, listed.out);
      assert.ok(rows.every((row) => row.id.startsWith("fresh/")), listed.out);
    });
  });
});
