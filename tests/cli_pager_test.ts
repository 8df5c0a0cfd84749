/**
 * Paging, as git pages: what list, show, search, lineage, stats and usage
 * print to a terminal goes through a pager (`less` by default, with
 * `LESS=FRX`); `--no-pager`, an empty pager or `cat`, output that is not a
 * terminal, `show --follow` and the other commands print as before. In
 * process with a recording Io that takes the pager, then in a child process
 * whose standard output is a real terminal (Python's `pty`) with a pager
 * that is a shell script.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import type { Paged } from "../lib/cli/io.ts";
import { main } from "../lib/cli/main.ts";
import { pagerOf } from "../lib/cli/pager.ts";
import { type OptionSpec, parseCommand } from "../lib/cli/parse.ts";
import { type IoOptions, recordingIo, runCli, V11, v11Copy } from "./_cli_io.ts";
import { cliArgv, tempDir } from "./_helpers.ts";

/** The options of show that decide its paging. */
const SHOW_OPTIONS: Record<string, OptionSpec> = {
  follow: { type: "boolean", inlineValue: true },
};

/** A run whose Io starts a recording pager: what went to it, and in what order things ended. */
async function pagedRun(argv: readonly string[], options: IoOptions = {}) {
  const io = recordingIo({ isTerminal: true, columns: 100, ...options });
  const pagers: string[] = [];
  const events: string[] = [];
  let paged = "";
  io.startPager = (command): Promise<Paged> => {
    pagers.push(command);
    const pagedIo = { ...io, stdout: (text: string) => void (paged += text) };
    return Promise.resolve({ io: pagedIo, end: () => Promise.resolve(void events.push("end")) });
  };
  const stderr = io.stderr;
  io.stderr = (text) => {
    events.push("stderr");
    stderr(text);
  };
  const code = await main(argv, io);
  return { code, out: io.out, err: io.err, paged, pagers, events };
}

describe("the pager, in process", () => {
  const db = v11Copy();

  test("list, show, search, lineage, stats and usage on a terminal go through the pager", async () => {
    const commands = [
      ["list"],
      ["show", V11.live],
      ["search", "docker"],
      ["lineage", V11.compressionTip],
      ["stats"],
      ["usage", "--since", "all"],
    ];
    for (const argv of commands) {
      const run = await pagedRun(["--db", db, ...argv]);
      assert.equal(run.code, 0, `${argv[0]}: ${run.err}`);
      assert.deepEqual(run.pagers, ["less"], argv[0]);
      assert.equal(run.out, "", argv[0]);
      assert.notEqual(run.paged, "", argv[0]);
      // The same text as without the pager.
      const plain = await runCli(["--db", db, ...argv], { isTerminal: true, columns: 100 });
      assert.equal(run.paged, plain.out, argv[0]);
    }
  });

  test("HERMES_STATE_PAGER, else PAGER, names the pager; empty, cat or TERM=dumb means none", async () => {
    const listWith = (env: Record<string, string>) => pagedRun(["--db", db, "list"], { env });
    assert.deepEqual((await listWith({ PAGER: "most" })).pagers, ["most"]);
    assert.deepEqual(
      (await listWith({ PAGER: "most", HERMES_STATE_PAGER: " less -S " })).pagers,
      ["less -S"],
    );
    const none: Record<string, string>[] = [
      { HERMES_STATE_PAGER: "" },
      { PAGER: "cat" },
      { PAGER: "  " },
      // A terminal that cannot page (Emacs's shell), as it gets no colour.
      { TERM: "dumb", PAGER: "less" },
    ];
    for (const env of none) {
      const run = await listWith(env);
      assert.deepEqual(run.pagers, [], JSON.stringify(env));
      assert.match(run.out, /Title/);
    }
  });

  test("show --follow, which never ends, prints as it comes", () => {
    const io = recordingIo({ isTerminal: true });
    io.startPager = () => Promise.resolve(undefined);
    const show = (argv: string[]) =>
      pagerOf(io, "show", parseCommand({ command: "show", options: SHOW_OPTIONS }, argv));
    assert.equal(show(["x"]), "less");
    assert.equal(show(["x", "--follow"]), undefined);
    assert.equal(show(["x", "--follow=5"]), undefined);
  });

  test("no pager with --no-pager, off a terminal, or for export and info", async () => {
    const runs = [
      await pagedRun(["--db", db, "--no-pager", "list"]),
      await pagedRun(["--db", db, "list", "--no-pager"]),
      await pagedRun(["--db", db, "list"], { isTerminal: false }),
      await pagedRun(["--db", db, "export", "-", "--session-id", V11.live]),
      await pagedRun(["--db", db, "info"]),
    ];
    for (const run of runs) {
      assert.equal(run.code, 0, run.err);
      assert.deepEqual(run.pagers, []);
      assert.notEqual(run.out, "");
    }
  });

  test("an error is told after the pager has ended, on standard error", async () => {
    const run = await pagedRun(["--db", db, "show", "no-such-session"]);
    assert.equal(run.code, 1);
    assert.deepEqual(run.events.slice(0, 2), ["end", "stderr"]);
    assert.match(run.err, /no-such-session/);
  });
});

/** A pager that is a shell script: it writes what it is given, and `LESS`, beside itself. */
function scriptPager(dir: string): { command: string; paged: string; less: string } {
  const script = join(dir, "pager.sh");
  const paged = join(dir, "paged.txt");
  const less = join(dir, "less.txt");
  writeFileSync(script, `printf '%s' "$LESS" > '${less}'\ncat > '${paged}'\necho PAGER-DONE\n`);
  return { command: `sh '${script}'`, paged, less };
}

/** Runs the CLI in a child process whose standard output is a terminal (Python's pty). */
function inTerminal(
  argv: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const python = "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)";
  const child = spawn("python3", ["-c", python, ...cliArgv(argv)], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, NO_COLOR: "1", ...env },
  });
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => void (out += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the CLI did not end: ${out.slice(-500)}`));
    }, 60_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe("the pager, on a terminal", () => {
  test("show on a terminal pages through the pager, with LESS=FRX; --no-pager does not", async () => {
    const dir = tempDir();
    const db = join(dir, "state.db");
    writeFileSync(db, readFileSync(v11Copy()));
    const pager = scriptPager(dir);
    const run = await inTerminal(["--db", db, "show", V11.live], {
      HERMES_STATE_PAGER: pager.command,
    });
    assert.equal(run.code, 0, run.out);
    assert.match(run.out, /PAGER-DONE/);
    assert.match(readFileSync(pager.paged, "utf8"), new RegExp(`^ID +${V11.live}`));
    assert.equal(readFileSync(pager.less, "utf8"), "FRX");
    const plain = await inTerminal(["--db", db, "--no-pager", "show", V11.live], {
      HERMES_STATE_PAGER: `sh -c 'echo PAGER-RAN'`,
    });
    assert.equal(plain.code, 0, plain.out);
    assert.doesNotMatch(plain.out, /PAGER-RAN/);
    assert.match(plain.out, new RegExp(`ID +${V11.live}`));
    assert.deepEqual(readdirSync(dir).sort(), ["less.txt", "paged.txt", "pager.sh", "state.db"]);
  });

  test("a pager quit before the output ends ends the run at once, leaving no -wal or -shm", async () => {
    const dir = tempDir();
    const db = join(dir, "state.db");
    const lines = Array.from({ length: 300 }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: `word${i} `.repeat(400),
      timestamp: 1_700_000_000 + i,
    }));
    const record = { id: "big", source: "cli", started_at: 1_700_000_000, messages: lines };
    const imported = await runCli(["--db", db, "import", "-"], {
      stdin: `${JSON.stringify(record)}\n`,
    });
    assert.equal(imported.code, 0, imported.err);
    const run = await inTerminal(["--db", db, "show", "big"], {
      HERMES_STATE_PAGER: "head -c 100 > /dev/null",
    });
    assert.equal(run.code, 0, run.out);
    assert.deepEqual(readdirSync(dirname(db)), ["state.db"]);
  });

  test("a pager that cannot be started leaves the output on the terminal", async () => {
    const db = v11Copy();
    const run = await inTerminal(["--db", db, "list"], {
      HERMES_STATE_PAGER: join(tempDir(), "no-such-pager"),
    });
    assert.equal(run.code, 0, run.out);
    assert.match(run.out, /Title/);
    assert.ok(!existsSync(`${db}-wal`));
  });
});
