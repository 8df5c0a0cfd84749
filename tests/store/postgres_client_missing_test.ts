/**
 * A `postgres://` store opened where the client package cannot be loaded (a
 * checkout without `npm ci`, a Deno without the registry) fails as an open
 * error that says what to do on this runtime, not as an "unexpected error".
 * The CLI runs as a process from a copy of the code in a folder with no
 * `node_modules` above it; Bun is told not to install on import, Deno gets an
 * empty cache and a registry nobody answers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../../lib/sqlite/driver/load.ts";
import { ROOT, tempDir } from "../_helpers.ts";

test("opening a server without the postgres package says how to get it (exit 1, no stack)", () => {
  const copy = tempDir();
  for (const part of ["lib", "cli.ts", "mod.ts", "package.json", "deno.json"]) {
    cpSync(join(ROOT, part), join(copy, part), { recursive: true });
  }
  const runtime = runtimeName();
  const prefix = runtime === "deno" ? ["run", "-A"] : runtime === "bun" ? ["--no-install"] : [];
  const url = "postgres://someone:secret@127.0.0.1:9/hermes";
  const run = spawnSync(process.execPath, [...prefix, "cli.ts", "--db", url, "list"], {
    cwd: copy,
    encoding: "utf8",
    timeout: 60_000,
    env: {
      ...process.env,
      NO_COLOR: "1",
      DENO_DIR: join(copy, ".deno-cache"),
      NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
      BUN_CONFIG_REGISTRY: "http://127.0.0.1:9/",
    },
  });
  assert.equal(run.status, 1, run.stderr);
  const said = run.stderr.split("\n").filter((line) => line.startsWith("hermes-state"));
  assert.equal(said.length, 1, run.stderr);
  assert.match(
    said[0],
    /^hermes-state: Cannot open database "postgres:\/\/someone:\*+@127\.0\.0\.1:9\/hermes": the PostgreSQL client \(npm package postgres 3\.4\.9\) cannot be loaded; .+ \(.+\)$/,
  );
  assert.ok(
    said[0].includes(runtime === "deno" ? "npm registry" : '"npm ci"'),
    `names the way to get it on ${runtime}: ${said[0]}`,
  );
  assert.doesNotMatch(run.stderr, /unexpected error|secret/);
});
