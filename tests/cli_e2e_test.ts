/**
 * The CLI as a real process on the running runtime (`deno run -A cli.ts`,
 * `bun cli.ts`, `node cli.ts`): argument handling, exit codes, stdin
 * prompts and pipes.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../lib/sqlite/driver/load.ts";
import { VERSION } from "../lib/core/version.ts";
import { cliArgv, rawOpen, ROOT, tempDir } from "./_helpers.ts";
import { openStore } from "../lib/open_store.ts";
import { V11, v11Copy } from "./_cli_io.ts";
import type { UsageRow } from "../lib/core/usage.ts";

const CLI = join(ROOT, "cli.ts");

interface Result {
  code: number | null;
  out: string;
  err: string;
}

function cli(
  args: readonly string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Result {
  const [command, ...argv] = cliArgv(args);
  const result = spawnSync(command, argv, {
    input: options.input ?? "",
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** The deno binary: this one on Deno, else the one on PATH (undefined when there is none). */
function denoBinary(): string | undefined {
  if (runtimeName() === "deno") return process.execPath;
  const probe = spawnSync("deno", ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? "deno" : undefined;
}

describe("cli.ts under deno run without -A", () => {
  const deno = denoBinary();
  test("cli.ts prints one line naming the missing permission, no stack", {
    timeout: 60_000,
    skip: deno === undefined ? "no deno binary" : false,
  }, () => {
    const path = v11Copy();
    for (const flags of [[], ["--allow-read"], ["--allow-read", "--allow-env"]]) {
      // Through sh: Deno's node:child_process hands its own permissions to a
      // deno it spawns directly.
      const quoted = [deno!, "run", ...flags, CLI, "--db", path, "list"]
        .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
      const result = spawnSync("sh", ["-c", `exec ${quoted}`], {
        env: { ...process.env, NO_COLOR: "1" },
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(result.status, 1, flags.join(" "));
      assert.equal(result.stdout, "");
      assert.match(
        result.stderr,
        /^hermes-state: missing permission --allow-\w+ \(Requires \w+ access to .+\): run it as "deno run -A cli\.ts"\n$/,
        `${flags.join(" ")}: ${result.stderr}`,
      );
    }
  });
});

describe(`cli.ts as a process (${runtimeName()})`, () => {
  test("cli.ts prints the version and exits 0", { timeout: 60_000 }, () => {
    const run = cli(["--version"]);
    assert.equal(run.code, 0, run.err);
    assert.equal(run.out, `hermes-state ${VERSION}\n`);
  });

  test("cli.ts exits 2 on a usage error and 1 on a missing database, with one line each", {
    timeout: 60_000,
  }, () => {
    const usage = cli(["list", "--nope"]);
    assert.equal(usage.code, 2);
    assert.equal(
      usage.err,
      "hermes-state list: unknown option --nope\nTry: hermes-state list --help\n",
    );
    const missing = cli(["--db", join(tempDir(), "none.db"), "list"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.err.split("\n").length, 2);
  });

  test("cli.ts uses $HERMES_HOME/state.db when --db is not given", { timeout: 60_000 }, () => {
    const path = v11Copy();
    const home = join(path, "..");
    const run = cli(["--json", "info", "--no-check"], { env: { HERMES_HOME: home } });
    assert.equal(run.code, 0, run.err);
    assert.equal(JSON.parse(run.out).path, join(home, "state.db"));
  });

  test("cli.ts reads a blank HERMES_STATE_DB as unset, as Hermes reads a blank HERMES_HOME", {
    timeout: 60_000,
  }, () => {
    // Hermes strips HERMES_HOME and takes a blank one for unset (~/.hermes); so does this CLI,
    // for both variables: empty or spaces, the next place in line is used.
    const path = v11Copy();
    const home = join(path, "..");
    for (const blank of ["", "   "]) {
      const run = cli(["--json", "info", "--no-check"], {
        env: { HERMES_HOME: home, HERMES_STATE_DB: blank },
      });
      assert.equal(run.code, 0, run.err);
      assert.equal(JSON.parse(run.out).path, join(home, "state.db"));
    }
  });

  test("cli.ts delete reads its answer from stdin: end of input is no, y deletes", {
    timeout: 60_000,
  }, () => {
    const path = v11Copy();
    const no = cli(["--db", path, "delete", V11.live]);
    assert.equal(no.code, 1);
    assert.match(no.err, /\[y\/N\] \nCancelled\.\n$/);
    const yes = cli(["--db", path, "delete", V11.live], { input: "y\n" });
    assert.equal(yes.code, 0, yes.err);
    assert.equal(yes.out, `Deleted session '${V11.live}'.\n`);
  });

  test("cli.ts export - piped into import - copies every session", { timeout: 60_000 }, () => {
    const source = v11Copy();
    const exported = cli(["--db", source, "export", "-"]);
    assert.equal(exported.code, 0, exported.err);
    const target = join(tempDir(), "copy.db");
    const imported = cli(["--db", target, "import", "-"], { input: exported.out });
    assert.equal(imported.code, 0, imported.err);
    assert.equal(
      imported.out,
      "Imported 42 sessions, skipped 0 already present " +
        "(197 messages written, 4 parent links restored).\n",
    );
    const again = cli(["--db", target, "export", "-"]);
    assert.equal(again.out, exported.out);
  });

  test("cli.ts usage counts days of the process's time zone ($TZ), or of --tz", {
    timeout: 60_000,
  }, () => {
    const file = v11Copy();
    const days = (args: string[], env: Record<string, string>) => {
      const run = cli(["--db", file, "usage", "--since", "all", "--json", ...args], { env });
      assert.equal(run.code, 0, run.err);
      const body = JSON.parse(run.out);
      return [
        body.time_zone,
        ...body.rows.slice(0, 2).map((r: UsageRow) => `${r.key} ${r.sessions}`),
      ];
    };
    // The fixture's first day: six sessions between 09:00 and 20:30 UTC, four of them after
    // 16:00 UTC, the next day in Shanghai.
    assert.deepEqual(days([], { TZ: "Asia/Shanghai" }), [
      "Asia/Shanghai",
      "2025-12-21 2",
      "2025-12-22 4",
    ]);
    assert.deepEqual(days(["--tz", "UTC"], { TZ: "Asia/Shanghai" }), [
      "UTC",
      "2025-12-21 6",
      "2026-04-20 3",
    ]);
    // A POSIX TZ that names no zone: the offset Date keeps (Deno and Node: −05:00; Bun reads no
    // such TZ, and says UTC).
    const code = "console.log(new Date().getTimezoneOffset())";
    const probe = spawnSync(
      process.execPath,
      runtimeName() === "deno" ? ["eval", code] : ["-e", code],
      { env: { ...process.env, TZ: "EST+5" }, encoding: "utf8" },
    );
    const expected = Number(probe.stdout) === 300 ? "-05:00" : "UTC";
    assert.equal(days([], { TZ: "EST+5" })[0], expected);
  });

  test(
    "a --since or --until in a skipped hour is the moment the clocks skipped, as usage reads it",
    {
      timeout: 60_000,
    },
    async () => {
      // London skipped 01:00–02:00 on 2026-03-29; the session started at 01:15 UTC (02:15 BST).
      const file = join(tempDir(), "gap.db");
      {
        await using store = await openStore(file);
        await store.createSession("gap", "cli");
      }
      {
        using raw = await rawOpen(file);
        raw.exec(`UPDATE sessions SET started_at = ${Date.UTC(2026, 2, 29, 1, 15) / 1000}`);
      }
      const env = { TZ: "Europe/London" };
      const listed = (option: string, time: string) => {
        const run = cli(["--db", file, "list", "--json", option, time], { env });
        assert.equal(run.code, 0, run.err);
        return JSON.parse(run.out).length;
      };
      // Before: 01:30 was read as 01:30 UTC, after the start, where usage read 01:00 UTC.
      assert.equal(listed("--since", "2026-03-29 01:30"), 1);
      const usage = cli(["--db", file, "usage", "--since", "2026-03-29 01:30", "--json"], { env });
      assert.equal(JSON.parse(usage.out).rows.length, 1);
      // And a later wall time never cuts earlier: 01:30 and 02:00 are both 01:00 UTC.
      assert.equal(listed("--until", "2026-03-29 01:30"), 0);
      assert.equal(listed("--until", "2026-03-29 02:00"), 0);
      assert.equal(listed("--until", "2026-03-29 02:16"), 1);
    },
  );

  test("a TZ naming a zone by its file is that zone on every runtime", { timeout: 60_000 }, () => {
    const file = v11Copy();
    const shown = (tz: string) => {
      const usage = cli(["--db", file, "usage", "--since", "all", "--json"], { env: { TZ: tz } });
      assert.equal(usage.code, 0, usage.err);
      const show = cli(["--db", file, "show", V11.branchParent, "--last", "0"], {
        env: { TZ: tz },
      });
      assert.equal(show.code, 0, show.err);
      return [JSON.parse(usage.out).time_zone, show.out];
    };
    // Before: Bun showed UTC, Deno and Node a fixed offset without a name.
    const [zone, out] = shown("/usr/share/zoneinfo/Asia/Tokyo");
    assert.equal(zone, "Asia/Tokyo");
    assert.deepEqual(shown(":Asia/Tokyo"), ["Asia/Tokyo", out]);
    assert.deepEqual(shown("Asia/Tokyo"), ["Asia/Tokyo", out]);
  });
});
