/**
 * `completions bash|zsh|fish`: each script, loaded in the real shell,
 * completes commands, options, the words an option takes, files, and the ids
 * of the store's sessions (asking the CLI itself, run as a process on the
 * current runtime). zsh completes only at a prompt, so a script of its own
 * drives one in a pseudo-terminal (`zpty`) and records what reaches
 * `compadd`; fish answers `complete -C`.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { cliArgv, rawOpen, tempDir } from "./_helpers.ts";
import { runCli, V11, v11Copy, withDb } from "./_cli_io.ts";
import { freshSchema, PG_URL, schemaUrl } from "./store/_pg.ts";

/** A word quoted for a POSIX shell. */
function shellQuoted(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * What bash offers for the words typed so far (the last one being completed), as bash splits
 * them (an "=" a word of its own); the line is those words, "=" joined to its neighbours.
 */
function complete(script: string, words: string[], cwd: string): string[] {
  const line = words.reduce(
    (text, word, i) => text + (i === 0 || word === "=" || words[i - 1] === "=" ? "" : " ") + word,
    "",
  );
  const program = `
    source ${JSON.stringify(script)}
    COMP_WORDS=(${words.map(shellQuoted).join(" ")})
    COMP_CWORD=${words.length - 1}
    COMP_LINE=${shellQuoted(line)}
    COMP_POINT=${line.length}
    _hermes_state
    printf '%s\\n' "\${COMPREPLY[@]}"`;
  const run = spawnSync("bash", ["-c", program], { cwd, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.split("\n").filter((line) => line !== "");
}

/** Whether `shell` runs here; a missing one fails under CI=true, where .ci/run installs it. */
function shellSkip(shell: string): string | false {
  if (spawnSync(shell, ["-c", "exit 0"]).status === 0) return false;
  if (process.env.CI === "true") return false;
  return `${shell} is not installed (apt-get install ${shell})`;
}

/**
 * A real interactive bash in a pseudo-terminal (driven by zsh's zpty), the script loaded, the
 * line typed, then Tab: what the completion function offered, as bash itself split the line
 * (COMP_WORDS, COMP_LINE), recorded by a wrapper.
 */
const BASH_DRIVER = `
script=$1 line=$2 out=$3
zmodload zsh/zpty
zpty b bash --norc --noprofile -i
zpty -w b "source \${(q)script}"
zpty -w b '__hs_wrap() { _hermes_state "$@"; printf "%s\\n" "\${COMPREPLY[@]}" >'\${(q)out}'.tmp; mv '\${(q)out}'.tmp '\${(q)out}'; }'
zpty -w b 'complete -o default -F __hs_wrap hermes-state'
zpty -w b "echo ready >\${(q)out}.ready"
for i in {1..200}; do [[ -e $out.ready ]] && break; sleep 0.05; done
zpty -wn b "$line"$'\\t'
for i in {1..400}; do [[ -e $out ]] && break; sleep 0.05; done
zpty -d b
`;

/**
 * Runs a zsh script that drives a shell in a pseudo-terminal (`BASH_DRIVER`, `ZSH_DRIVER`),
 * with `args` and then the file it writes the offered words to.
 *
 * @returns The words written, or `undefined` when it wrote no file.
 */
async function drive(
  driver: string,
  args: readonly string[],
  cwd: string,
): Promise<string[] | undefined> {
  const dir = tempDir();
  const file = join(dir, "drive.zsh");
  const out = join(dir, "offered");
  writeFileSync(file, driver);
  await shell("zsh", ["-f", file, ...args, out], cwd);
  if (!existsSync(out)) return undefined;
  return readFileSync(out, "utf8").split("\n").filter((word) => word !== "");
}

/** Runs `program` with `args` in `cwd` (a minute at most), without blocking; its stdout. */
function shell(program: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { cwd, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${program} failed (${error.message}): ${stderr}`));
      else resolve(stdout);
    });
  });
}

/** `fn` of each item, `width` at a time (each completion a shell or two and a CLI process). */
async function inTurns<T, R>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}

/** What a real interactive bash offers after Tab at the end of `line`. */
async function bashComplete(script: string, line: string, cwd: string): Promise<string[]> {
  const offered = await drive(BASH_DRIVER, [script, line], cwd);
  assert.ok(offered !== undefined, `bash completed ${JSON.stringify(line)}`);
  return offered.sort();
}

/** The zsh driver: a prompt in a pseudo-terminal, the script loaded, the line typed, then Tab. */
const ZSH_DRIVER = `
script=$1 mode=$2 dump=$3 line=$4 out=$5
zmodload zsh/zpty
zpty z zsh -f -i
# compinit keeps what it found in $fpath in a dump file, as a user's ~/.zcompdump, and reads
# every completion file again only when $fpath's files change (each read takes a second).
if [[ $mode == fpath ]]; then
  zpty -w z "fpath=(\${script:h} \\$fpath); autoload -Uz compinit; compinit -u -d \${(q)dump}"
else
  zpty -w z "autoload -Uz compinit; compinit -u -d \${(q)dump}; source \${(q)script}"
fi
# Every match offered passes through compadd: recorded, then offered.
zpty -w z 'compadd() { local -a m; builtin compadd -O m "$@"; print -rl -- "\${m[@]}" >>'\${(q)out}'; builtin compadd "$@"; }'
# The completion system runs comppostfuncs when a completion ends: that says it is done. (Keys
# typed ahead instead would make zsh skip the completion while they are pending.)
zpty -w z 'comppostfuncs=(__done); __done() { print -r -- done >'\${(q)out}'.done; }'
zpty -w z "print -r -- ready >\${(q)out}.ready"
for i in {1..200}; do [[ -e $out.ready ]] && break; sleep 0.05; done
zpty -wn z "$line"$'\\t'
for i in {1..400}; do [[ -e $out.done ]] && break; sleep 0.05; done
zpty -d z
`;

/**
 * What zsh offers after Tab at the end of `line`, the script loaded from $fpath or sourced;
 * compinit's dump file for each mode in the folder `dumps`.
 */
async function zshComplete(
  script: string,
  line: string,
  mode: "fpath" | "source",
  cwd: string,
  dumps: string,
): Promise<string[]> {
  const dump = join(dumps, `zcompdump-${mode}`);
  return [...new Set(await drive(ZSH_DRIVER, [script, mode, dump, line], cwd) ?? [])].sort();
}

/** What fish offers for `line` (`complete -C`), without descriptions. */
async function fishComplete(script: string, line: string, cwd: string): Promise<string[]> {
  const stdout = await shell(
    "fish",
    ["--no-config", "-c", `source ${JSON.stringify(script)}; complete -C ${JSON.stringify(line)}`],
    cwd,
  );
  return stdout.split("\n").filter((entry) => entry !== "").map((entry) => entry.split("\t")[0])
    .sort();
}

/** The script of `shell`, written to a file of a fresh folder. */
async function scriptFile(shell: string, name: string): Promise<{ dir: string; script: string }> {
  const run = await runCli(["completions", shell]);
  assert.equal(run.code, 0, run.err);
  const dir = tempDir();
  const script = join(dir, name);
  writeFileSync(script, run.out);
  return { dir, script };
}

/** An executable that runs this checkout's CLI on the current runtime, as an installed one would. */
function installedCli(dir: string): string {
  const path = join(dir, "hermes-state");
  writeFileSync(
    path,
    `#!/bin/sh\nexec ${cliArgv().map((a) => JSON.stringify(a)).join(" ")} "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

describe("completions", () => {
  test("completions bash completes commands, options, values and files in a real bash", async () => {
    const run = await runCli(["completions", "bash"]);
    assert.equal(run.code, 0, run.err);
    const dir = tempDir();
    const script = join(dir, "hermes-state.bash");
    writeFileSync(script, run.out);
    mkdirSync(join(dir, "backups"));
    writeFileSync(join(dir, "state.db"), "");
    assert.deepEqual(complete(script, ["hermes-state", "se"], dir), ["search", "serve"]);
    assert.deepEqual(complete(script, ["hermes-state", "--db", "x.db", "li"], dir), [
      "list",
      "lineage",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "--"], dir), [
      "--db",
      "--json",
      "--no-pager",
      "--help",
      "--version",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "search", "--so"], dir), [
      "--source",
      "--sort",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "show", "--fo"], dir), ["--follow"]);
    assert.deepEqual(complete(script, ["hermes-state", "completions", ""], dir), [
      "bash",
      "zsh",
      "fish",
    ]);
    // The words an option takes, after a space or an "=" (which bash makes a word of its own).
    assert.deepEqual(complete(script, ["hermes-state", "usage", "--by", "m"], dir), [
      "month",
      "model",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "export", "--format", "=", ""], dir), [
      "jsonl",
      "md",
      "html",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "list", "--order", "="], dir), [
      "started",
      "last-active",
    ]);
    assert.deepEqual(complete(script, ["hermes-state", "search", "x", "--role", "t"], dir), [
      "tool",
    ]);
    // A value, or a file argument: left to bash's own file completion (-o default).
    assert.deepEqual(complete(script, ["hermes-state", "--db", "st"], dir), []);
    assert.deepEqual(complete(script, ["hermes-state", "search", "--since", ""], dir), []);
    assert.deepEqual(complete(script, ["hermes-state", "backup", "back"], dir), []);
  });

  test("completions bash completes session ids from the --db given", async () => {
    const dir = tempDir();
    const script = join(dir, "hermes-state.bash");
    writeFileSync(script, (await runCli(["completions", "bash"])).out);
    const cli = installedCli(dir);
    const db = v11Copy();
    const ids = complete(script, [cli, "--db", db, "show", "20260429"], dir);
    assert.deepEqual(ids, [V11.live]);
    // --db after the command, as the CLI takes it: the default store was asked instead.
    assert.deepEqual(complete(script, [cli, "show", "--db", db, "20260429"], dir), [V11.live]);
    const viaEquals = complete(script, [cli, "--db", "=", db, "lineage", "2026042"], dir);
    assert.ok(viaEquals.includes(V11.compressionTip), viaEquals.join(" "));
    assert.ok(viaEquals.every((id) => id.startsWith("2026042")), viaEquals.join(" "));
    // An option's value that names the store's sessions, sources or origins.
    assert.deepEqual(complete(script, [cli, "--db", db, "list", "--source", "t"], dir), [
      "telegram",
      "tool",
      "tui",
    ]);
    assert.deepEqual(
      complete(script, [cli, "--db", db, "search", "x", "--exclude-source", "=", "c"], dir),
      ["cli", "cron"],
    );
    assert.deepEqual(complete(script, [cli, "--db", db, "search", "--session", "20260429"], dir), [
      V11.live,
    ]);
    // A file records no origins: nothing offered, not the folder's files.
    writeFileSync(join(dir, "web-1.txt"), "");
    assert.deepEqual(complete(script, [cli, "--db", db, "list", "--origin", "w"], dir), []);
  });

  test(
    "completions bash, in a real bash, reads a --db URL and a quoted path as typed; a name is never run",
    {
      skip: shellSkip("zsh"),
      timeout: 120_000,
    },
    async () => {
      const dir = tempDir();
      const script = join(dir, "hermes-state.bash");
      writeFileSync(script, (await runCli(["completions", "bash"])).out);
      const cli = installedCli(dir);
      // A path with a space, quoted; and a source named as shell code, which is offered, not run.
      mkdirSync(join(dir, "my files"));
      const db = join(dir, "my files", "state.db");
      copyFileSync(v11Copy(), db);
      const raw = await rawOpen(db);
      raw.exec(
        `UPDATE sessions SET source = '$(touch ${join(dir, "pwned")})' WHERE source = 'tui'`,
      );
      raw.close();
      const offered = await bashComplete(script, `${cli} --db "${db}" list --source `, dir);
      assert.ok(offered.includes("telegram"), offered.join(" "));
      assert.ok(offered.includes(`$(touch ${join(dir, "pwned")})`), offered.join(" "));
      assert.ok(!existsSync(join(dir, "pwned")), "a name from the store is never run");
      if (PG_URL === undefined) return;
      // bash splits a URL at ":", "@" and "=": the words are glued back as typed.
      const url = schemaUrl(freshSchema());
      for (const origin of ["web-1", "web-2", "gw"]) {
        const synced = await runCli(["sync", v11Copy(), "--to", url, "--origin", origin]);
        assert.equal(synced.code, 0, synced.err);
      }
      assert.deepEqual(await bashComplete(script, `${cli} --db ${url} usage --origin web`, dir), [
        "web-1",
        "web-2",
      ]);
      assert.deepEqual(await bashComplete(script, `${cli} --db=${url} origins --remove `, dir), [
        "gw",
        "web-1",
        "web-2",
      ]);
    },
  );

  test("completions complete the id of any session as typed: children, tool sessions, old ones", async () => {
    const dir = tempDir();
    const script = join(dir, "hermes-state.bash");
    writeFileSync(script, (await runCli(["completions", "bash"])).out);
    const cli = installedCli(dir);
    // 150 newer sessions push the old ones out of the 100 newest (what `list --limit 100` gave).
    const db = v11Copy();
    await withDb(db, (store) => {
      for (let i = 0; i < 150; i++) {
        store.createSession(`20260501_${String(i).padStart(6, "0")}_aaaaaa`, "cli");
      }
    });
    for (
      const id of [V11.delegateChild, V11.toolPaperclip, V11.oldCli, V11.compressionRoot]
    ) {
      assert.deepEqual(complete(script, [cli, "--db", db, "show", id.slice(0, 13)], dir), [id]);
    }
    assert.deepEqual(
      complete(script, [cli, "--db", db, "search", "--session", V11.oldCli.slice(0, 10)], dir),
      [V11.oldCli],
    );
    // What the scripts ask: the ids that start with the word, newest first, bounded.
    const asked = await runCli(["--db", db, "completions", "session-ids", "2026050"]);
    assert.equal(asked.code, 0, asked.err);
    const ids = asked.out.trimEnd().split("\n");
    assert.equal(ids.length, 150);
    assert.ok(ids.every((id) => id.startsWith("20260501_")), ids.join(" "));
    const all = await runCli(["--db", db, "completions", "session-ids"]);
    assert.equal(all.out.trimEnd().split("\n").length, 192);
    const extra = await runCli(["completions", "bash", "zsh"]);
    assert.equal(extra.code, 2);
    assert.match(extra.err, /unexpected argument "zsh"/);
  });

  test("completions refuses another shell by name", async () => {
    const run = await runCli(["completions", "powershell"]);
    assert.equal(run.code, 2);
    assert.match(
      run.err,
      /the shell must be one of bash, zsh, fish, got "powershell"/,
    );
  });

  /**
   * What zsh and fish offer alike (fish gives an option's whole word after "="), in a folder
   * holding `state.db` and `backups/`, then session ids from the CLI as an installed one runs.
   */
  async function sharedCases(
    offered: (line: string) => Promise<string[]>,
    shell: "zsh" | "fish",
    dir: string,
  ) {
    const cli = installedCli(dir);
    const db = v11Copy();
    // A path with a space, quoted.
    mkdirSync(join(dir, "my files"));
    copyFileSync(db, join(dir, "my files", "state.db"));
    /** Each line, and what is offered for it (or a check of what is). */
    const cases: [string, string[] | ((got: string[]) => void)][] = [
      ["hermes-state li", ["lineage", "list"]],
      ["hermes-state --db x.db se", ["search", "serve"]],
      ["hermes-state --", ["--db", "--help", "--json", "--no-pager", "--version"]],
      ["hermes-state search --so", ["--sort", "--source"]],
      ["hermes-state usage --by m", ["model", "month"]],
      ["hermes-state export --format=h", [shell === "fish" ? "--format=html" : "html"]],
      ["hermes-state completions ", ["bash", "fish", "zsh"]],
      ["hermes-state --db st", ["state.db"]],
      ["hermes-state backup back", [shell === "fish" ? "backups/" : "backups"]],
      ["hermes-state search --since ", []],
      [`${cli} --db ${db} show 20260429`, [V11.live]],
      // --db after the command, as the CLI takes it.
      [`${cli} show --db ${db} 20260429`, [V11.live]],
      // A child session and a tool session, which `list` hides, complete too.
      [`${cli} --db ${db} show 20260420_0906`, [V11.delegateChild]],
      [`${cli} --db ${db} delete 20260422_0905`, [V11.toolPaperclip]],
      [
        `${cli} --db=${db} lineage 2026042`,
        (got) => assert.ok(got.includes(V11.compressionTip), got.join(" ")),
      ],
      [`${cli} --db ${db} usage --source t`, ["telegram", "tool", "tui"]],
      [`${cli} --db ${db} export --session-id 20260429`, [V11.live]],
      // A file records no origins: nothing offered, not the folder's files.
      [`${cli} --db ${db} list --origin st`, []],
      [`${cli} --db "${join(dir, "my files", "state.db")}" list --source d`, ["discord"]],
    ];
    // Each in a shell of its own: the first alone (zsh writes its dump file then), then a few
    // at once.
    const answers = [await offered(cases[0][0])];
    answers.push(...await inTurns(cases.slice(1), 4, ([line]) => offered(line)));
    cases.forEach(([line, expected], i) => {
      if (typeof expected === "function") expected(answers[i]);
      else assert.deepEqual(answers[i], expected, line);
    });
  }

  test("completions zsh completes in a real zsh, from $fpath and sourced", {
    skip: shellSkip("zsh"),
    timeout: 120_000,
  }, async () => {
    const { dir, script } = await scriptFile("zsh", "_hermes-state");
    mkdirSync(join(dir, "backups"));
    writeFileSync(join(dir, "state.db"), "");
    const dumps = tempDir();
    assert.deepEqual(await zshComplete(script, "hermes-state li", "source", dir, dumps), [
      "lineage",
      "list",
    ]);
    await sharedCases((line) => zshComplete(script, line, "fpath", dir, dumps), "zsh", dir);
  });

  test("completions fish completes in a real fish", {
    skip: shellSkip("fish"),
    timeout: 120_000,
  }, async () => {
    const { dir, script } = await scriptFile("fish", "hermes-state.fish");
    mkdirSync(join(dir, "backups"));
    writeFileSync(join(dir, "state.db"), "");
    await sharedCases((line) => fishComplete(script, line, dir), "fish", dir);
  });
});
